// Package check inspects every configured source the way the collectors
// will use it. For each Camunda engine: whether it answers, its version and
// flavor, and whether the credentials are accepted. For each database, per
// table: whether it exists, which mapped columns are missing, which
// recommended indexes are missing (with the CREATE INDEX statement), and
// whether the exporter's role could write (it should not).
//
// Index checks ask the planner, not the catalog text: for each collector
// query, EXPLAIN (with sequential scans disabled) must find an index that
// restricts the rows read, either by an index condition or by being partial.
// So an index with another name or column order that serves the query counts,
// and one that exists but cannot serve it does not.
package check

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/workflow-exporter/workflow-exporter/camunda"
	"github.com/workflow-exporter/workflow-exporter/collectors"
	"github.com/workflow-exporter/workflow-exporter/internal/config"
	"github.com/workflow-exporter/workflow-exporter/internal/correlate"
	"github.com/workflow-exporter/workflow-exporter/internal/pgsource"
)

// Report counts what was found.
type Report struct {
	Errors   int // unreachable databases, missing tables or columns
	Warnings int // missing indexes, writable role
}

// Run checks every database of cfg and writes a human-readable report.
func Run(ctx context.Context, cfg *config.Config, w io.Writer, logger *slog.Logger) Report {
	var rep Report
	for i, e := range cfg.Camunda {
		checkEngine(ctx, e, fmt.Sprintf("camunda[%d]", i), w, &rep, logger)
	}
	if len(cfg.Databases) == 0 {
		fmt.Fprintln(w, "no databases configured")
	}
	var engines []string
	for _, e := range cfg.Camunda {
		engines = append(engines, e.Name)
	}
	for i, dbc := range cfg.Databases {
		key := fmt.Sprintf("databases[%d]", i)
		// A registry, even an empty one, so the Camunda joins' tables and
		// indexes are checked too.
		db, err := collectors.NewDatabase(dbc, key, collectors.DatabaseOptions{Views: correlate.NewRegistry(), Engines: engines, Logger: logger})
		if err != nil {
			fmt.Fprintf(w, "database %s: ERROR %v\n", dbc.Name, err)
			rep.Errors++
			continue
		}
		checkDatabase(ctx, db, dbc, w, &rep)
		db.DB.Close()
	}
	fmt.Fprintf(w, "\n%d error(s), %d warning(s)\n", rep.Errors, rep.Warnings)
	return rep
}

func checkEngine(ctx context.Context, e config.Camunda, key string, w io.Writer, rep *Report, logger *slog.Logger) {
	client, err := collectors.NewCamundaClient(e, logger)
	if err != nil {
		fmt.Fprintf(w, "camunda %s: ERROR %s: %v\n", e.Name, key, err)
		rep.Errors++
		return
	}
	ctx, cancel := context.WithTimeout(ctx, time.Duration(e.Timeout))
	defer cancel()
	info, err := client.EngineInfo(ctx)
	if err != nil {
		fmt.Fprintf(w, "camunda %s: ERROR %v\n", e.Name, err)
		rep.Errors++
		return
	}
	auth := "no credentials configured"
	if e.Username != "" {
		auth = fmt.Sprintf("credentials of %q accepted", e.Username)
	}
	fmt.Fprintf(w, "camunda %s: ok, %s %s at %s (%s)\n", e.Name, info.Flavor, info.Version, client.Root(), auth)
	// With authorization on, queries are filtered silently: a user that
	// sees no task might only lack READ permissions.
	if n, err := client.CountExternalTasks(ctx, camunda.ExternalTaskQuery{}); err != nil {
		fmt.Fprintf(w, "    ERROR counting external tasks: %v\n", err)
		rep.Errors++
	} else {
		fmt.Fprintf(w, "    open external tasks visible to this user: %d (with authorization enabled, the user needs READ on process instances and definitions or this undercounts)\n", n)
	}
	if e.Database == nil {
		fmt.Fprintf(w, "    mode: REST API; failures and completions come from the history log sorted by timestamp, which stays cheap only with an index on act_hi_ext_task_log (timestamp_) in the engine's database (deploy/sql/camunda/001_history_timestamp_index.sql; configure %s.database to have it checked)\n", key)
		return
	}
	checkEngineDatabase(ctx, e, key, w, rep, logger)
}

// checkEngineDatabase checks camunda[].database as the first collection
// does (tables, columns, privileges, time zone), then the index the
// history reading relies on, and whether the role could write.
func checkEngineDatabase(ctx context.Context, e config.Camunda, key string, w io.Writer, rep *Report, logger *slog.Logger) {
	ed, err := collectors.OpenEngineDatabase(e, key, logger)
	if err != nil {
		fmt.Fprintf(w, "    engine database: ERROR %v\n", err)
		rep.Errors++
		return
	}
	defer ed.DB.Close()
	var version, user string
	err = ed.DB.ReadOnly(ctx, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, "SELECT current_setting('server_version'), current_user").Scan(&version, &user)
	})
	if err != nil {
		fmt.Fprintf(w, "    engine database: ERROR cannot connect: %v\n", err)
		rep.Errors++
		return
	}
	fmt.Fprintf(w, "    mode: engine database, connected (PostgreSQL %s) as role %q\n", version, user)
	if err := ed.Verify(ctx); err != nil {
		fmt.Fprintf(w, "    ERROR %v\n", err)
		rep.Errors++
	} else {
		fmt.Fprintf(w, "    tables, columns and time_zone %q: ok\n", e.Database.TimeZone)
	}
	for _, req := range collectors.EngineDatabaseRequirements(e.Database.Schema, key+".database") {
		checkTable(ctx, ed.DB, req, user, w, rep)
	}
}

func checkDatabase(ctx context.Context, db *collectors.Database, dbc config.Database, w io.Writer, rep *Report) {
	ctx, cancel := context.WithTimeout(ctx, time.Duration(dbc.Timeout))
	defer cancel()
	var version, user string
	err := db.DB.ReadOnly(ctx, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, "SELECT current_setting('server_version'), current_user").Scan(&version, &user)
	})
	if err != nil {
		fmt.Fprintf(w, "database %s: ERROR cannot connect: %v\n", dbc.Name, err)
		rep.Errors++
		return
	}
	fmt.Fprintf(w, "database %s: connected (PostgreSQL %s) as role %q\n", dbc.Name, version, user)
	for _, c := range db.Collectors {
		checkTable(ctx, db.DB, c.Requirements(), user, w, rep)
	}
}

func checkTable(ctx context.Context, db *pgsource.DB, req collectors.Requirements, user string, w io.Writer, rep *Report) {
	fmt.Fprintf(w, "  %s: table %s\n", req.Kind, req.Table)
	err := db.ReadOnly(ctx, func(ctx context.Context, tx pgx.Tx) error {
		cols, ok, err := collectors.TableColumns(ctx, tx, req.Table)
		if err != nil {
			return err
		}
		if !ok {
			fmt.Fprintf(w, "    ERROR table does not exist or role %q cannot see it\n", user)
			rep.Errors++
			return nil
		}
		present := map[string]bool{}
		var missing []string
		for _, c := range req.Columns {
			if _, ok := cols[c.Name]; ok {
				present[c.Name] = true
				continue
			}
			if c.Optional {
				fmt.Fprintf(w, "    note: optional column %s is absent (%s); the feature it enables is off\n", c.Name, c.Key)
				continue
			}
			missing = append(missing, fmt.Sprintf("%s (%s)", c.Name, c.Key))
		}
		if len(missing) > 0 {
			fmt.Fprintf(w, "    ERROR missing columns: %s\n", strings.Join(missing, ", "))
			rep.Errors++
			return nil
		}
		fmt.Fprintf(w, "    columns: ok (%d mapped)\n", len(present))

		queries := map[string]collectors.Query{}
		for _, q := range req.Queries {
			queries[q.Name] = q
		}
		for _, ix := range req.Indexes {
			if ix.Requires != "" && !present[ix.Requires] {
				continue
			}
			q, ok := queries[ix.Query]
			if !ok {
				continue
			}
			used, err := pgsource.ServingIndex(ctx, tx, req.Table, q.SQL, q.Args...)
			if err != nil {
				return fmt.Errorf("explain %s query: %w", q.Name, err)
			}
			if used != "" {
				fmt.Fprintf(w, "    index for %s query: ok (served by %s)\n", q.Name, used)
				continue
			}
			rep.Warnings++
			fmt.Fprintf(w, "    WARNING index for %s query missing: %s\n      %s\n", q.Name, ix.Why, ix.CreateStatement(req.Table))
		}

		var super, ins, upd, del, trunc bool
		if err := tx.QueryRow(ctx, `SELECT r.rolsuper,
				has_table_privilege(current_user, $1::regclass, 'INSERT'), has_table_privilege(current_user, $1::regclass, 'UPDATE'),
				has_table_privilege(current_user, $1::regclass, 'DELETE'), has_table_privilege(current_user, $1::regclass, 'TRUNCATE')
			FROM pg_roles r WHERE r.rolname = current_user`, quoteTable(req.Table)).Scan(&super, &ins, &upd, &del, &trunc); err != nil {
			return fmt.Errorf("privilege check: %w", err)
		}
		var can []string
		for name, ok := range map[string]bool{"INSERT": ins, "UPDATE": upd, "DELETE": del, "TRUNCATE": trunc} {
			if ok {
				can = append(can, name)
			}
		}
		switch {
		case super:
			rep.Warnings++
			fmt.Fprintf(w, "    WARNING role %q is a superuser; the exporter needs only SELECT (see deploy/sql/004_exporter_role.sql)\n", user)
		case len(can) > 0:
			rep.Warnings++
			sort.Strings(can)
			fmt.Fprintf(w, "    WARNING role %q can %s this table; grant SELECT only (the exporter reads in read-only transactions anyway)\n", user, strings.Join(can, ", "))
		default:
			fmt.Fprintf(w, "    privileges: read-only (ok)\n")
		}
		return nil
	})
	if err != nil {
		fmt.Fprintf(w, "    ERROR %v\n", err)
		rep.Errors++
	}
}

func quoteTable(name string) string { return pgx.Identifier(strings.Split(name, ".")).Sanitize() }
