package enginedb

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/workflow-exporter/workflow-exporter/blocks/pgsource"
	"github.com/workflow-exporter/workflow-exporter/camunda"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine/capability"
	"github.com/workflow-exporter/workflow-exporter/config"
)

// SchemaCheck is an engine's database opened as the engine-database mode
// opens it, for `workflow-exporter check`: DB to ask the planner which
// index serves a query of DatabaseRequirements, Verify for the checks of
// the first collection.
type SchemaCheck struct {
	DB *pgsource.DB
	r  *Reader
}

// OpenSchemaCheck opens the database of an engine configured with
// camunda[].database, with the engine's REST client (the time zone check
// asks the engine); it connects to nothing yet.
func OpenSchemaCheck(cfg config.Camunda, key string, client *camunda.Client, logger *slog.Logger) (*SchemaCheck, error) {
	r, err := New(cfg, key, client, orDiscard(logger))
	if err != nil {
		return nil, err
	}
	return &SchemaCheck{DB: r.db, r: r}, nil
}

func orDiscard(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}

// Verify runs the checks of the first collection: tables, columns and
// privileges, and the time zone against the engine.
func (s *SchemaCheck) Verify(ctx context.Context) error { return s.r.verify(ctx) }

// verify checks every table and column the collectors read, and the time
// zone (what `workflow-exporter check` asks).
func (r *Reader) verify(ctx context.Context) error {
	if err := r.checkTables(ctx, ""); err != nil {
		return err
	}
	return r.verifyZone(ctx)
}

// checkTables checks that the tables and columns one collector reads ("":
// every collector) are there and readable.
func (r *Reader) checkTables(ctx context.Context, collector string) error {
	return r.db.ReadOnly(ctx, func(ctx context.Context, tx pgx.Tx) error {
		for _, t := range capability.EngineTables {
			if collector != "" && !slices.Contains(t.ReadBy, collector) {
				continue
			}
			present, err := r.checkTable(ctx, tx, t)
			if err != nil {
				return err
			}
			if t.Table == "act_ru_ext_task" {
				r.createTime = present[capability.CreateTimeColumn]
			}
		}
		return nil
	})
}

// checkTable names a missing table or column and returns the columns the
// table has. An optional column (capability.EngineTable.Optional: one older
// engine versions lack, such as act_ru_ext_task.create_time_ before 7.21)
// may be missing: the reader then reads without it.
func (r *Reader) checkTable(ctx context.Context, tx pgx.Tx, t capability.EngineTable) (map[string]bool, error) {
	table := t.Table
	var reg *string
	if err := tx.QueryRow(ctx, `SELECT to_regclass($1)::text`, r.prefix+table).Scan(&reg); err != nil {
		return nil, err
	}
	if reg == nil {
		return nil, fmt.Errorf("%s: table %s%s not found (check dsn and schema: the exporter reads the engine's own tables)", r.key, r.prefix, table)
	}
	rows, err := tx.Query(ctx, `SELECT attname FROM pg_attribute WHERE attrelid = to_regclass($1) AND attnum > 0 AND NOT attisdropped`, r.prefix+table)
	if err != nil {
		return nil, err
	}
	have, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	present := map[string]bool{}
	for _, c := range have {
		present[strings.ToLower(c)] = true
	}
	var missing []string
	for _, c := range t.Columns {
		if !present[c] {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%s: table %s%s has no column %s (the tables of Camunda 7.19 and later, Operaton and CIB seven have them all)", r.key, r.prefix, table, strings.Join(missing, ", "))
	}
	var ok bool
	if err := tx.QueryRow(ctx, `SELECT has_table_privilege(to_regclass($1), 'SELECT')`, r.prefix+table).Scan(&ok); err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%s: the role may not read table %s%s (GRANT SELECT ON it)", r.key, r.prefix, table)
	}
	return present, nil
}
