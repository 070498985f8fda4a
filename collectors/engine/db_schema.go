package engine

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/workflow-exporter/workflow-exporter/blocks/pgschema"
	"github.com/workflow-exporter/workflow-exporter/blocks/pgsource"
	"github.com/workflow-exporter/workflow-exporter/config"
)

// What engine-database mode needs of the engine's schema, apart from the
// reading itself (db_*.go): the tables and columns each collector reads,
// checked before its first reading (dbReader.ready) and by `workflow-exporter
// check` (SchemaCheck), and the timestamp indexes the history log queries
// rely on (DatabaseRequirements, IndexSQL).

// engineTables are the engine tables and columns the reader uses, and the
// collectors that read them.
var engineTables = []struct {
	table   string
	columns []string
	readBy  []string
}{
	{"act_ru_ext_task", []string{"id_", "topic_name_", "worker_id_", "lock_exp_time_", "create_time_", "retries_", "error_msg_", "suspension_state_", "proc_inst_id_", "act_id_", "act_inst_id_", "proc_def_id_", "tenant_id_"}, []string{nameTasks}},
	{"act_hi_ext_task_log", []string{"id_", "timestamp_", "ext_task_id_", "topic_name_", "worker_id_", "state_", "act_id_", "act_inst_id_", "root_proc_inst_id_", "proc_inst_id_", "error_msg_", "tenant_id_"}, []string{nameTasks}},
	{"act_hi_actinst", []string{"id_", "act_id_", "act_type_", "act_inst_state_", "proc_def_id_", "start_time_", "end_time_", "root_proc_inst_id_", "tenant_id_"}, []string{nameTasks}},
	{"act_ru_incident", []string{"id_", "incident_type_", "proc_def_id_", "activity_id_", "incident_timestamp_", "configuration_", "incident_msg_", "proc_inst_id_", "tenant_id_"}, []string{nameTasks}},
	{"act_re_procdef", []string{"id_", "key_", "history_ttl_", "tenant_id_"}, []string{nameTasks, nameJobs, nameProcesses, nameHistory}},
	// business_key_: the process instance's, joined to the in-flight tasks
	// as the engine's own external task query joins it (for the status
	// page).
	{"act_ru_execution", []string{"id_", "proc_inst_id_", "proc_def_id_", "suspension_state_", "business_key_"}, []string{nameTasks, nameJobs, nameProcesses}},
	{"act_ru_job", []string{"id_", "retries_", "process_def_key_", "process_def_id_", "duedate_", "create_time_", "suspension_state_", "execution_id_", "process_instance_id_", "handler_type_", "exception_msg_", "tenant_id_"}, []string{nameJobs, nameHistory}},
	{"act_hi_job_log", []string{"id_", "timestamp_", "process_def_key_", "job_state_", "job_id_", "process_instance_id_", "hostname_", "job_exception_msg_", "tenant_id_"}, []string{nameJobs}},
	{"act_re_deployment", []string{"id_", "deploy_time_"}, []string{nameTasks, nameJobs, nameProcesses, nameHistory}},
	// The history aspect: the cleanable count and the cleanup's jobs.
	{"act_hi_procinst", []string{"proc_def_id_", "end_time_", "removal_time_"}, []string{nameHistory}},
}

// historyLogs are the history tables read as a stream by timestamp, with
// their query and why they need an index on timestamp_ (the engine creates
// none).
var historyLogs = map[string]struct{ query, sql, why string }{
	"act_hi_ext_task_log": {"history", historySQL,
		"failures and completions read the history log entries of the last late_commit_window; without this index every collection scans (and, over REST, sorts) the whole history table"},
	"act_hi_job_log": {"job log", jobLogSQL,
		"job failures and successes read the job log entries of the last late_commit_window; without this index every collection scans (and, over REST, sorts) the whole job log"},
}

// DatabaseRequirements are the engine tables the engine-database mode reads
// (schema "" for the search_path), with the index it relies on.
// deploy/sql/camunda/001_history_timestamp_index.sql is generated from it
// and `workflow-exporter check` verifies it.
func DatabaseRequirements(schema, key string) []pgschema.Requirements {
	prefix := ""
	if schema != "" {
		prefix = schema + "."
	}
	var out []pgschema.Requirements
	for _, t := range engineTables {
		r := pgschema.Requirements{Kind: "engine", Table: prefix + t.table}
		for _, c := range t.columns {
			r.Columns = append(r.Columns, pgschema.Column{Key: key, Name: c})
		}
		if h, ok := historyLogs[t.table]; ok {
			q := pgx.Identifier{}
			if schema != "" {
				q = pgx.Identifier{schema}
			}
			sqlPrefix := ""
			if len(q) > 0 {
				sqlPrefix = q.Sanitize() + "."
			}
			r.Queries = []pgschema.Query{{Name: h.query, SQL: fmt.Sprintf(h.sql, sqlPrefix),
				Args: []any{time.Now().Add(-time.Minute).UTC().Format("2006-01-02 15:04:05"), time.Now().Add(time.Minute).UTC().Format("2006-01-02 15:04:05"),
					config.DefaultMaxHistoryEntries + 1}}}
			r.Indexes = []pgschema.Index{{Name: t.table + "_timestamp_idx", Columns: []string{"timestamp_"}, Query: h.query, Why: h.why}}
		}
		out = append(out, r)
	}
	return out
}

// IndexSQL renders deploy/sql/camunda/001_history_timestamp_index.sql.
func IndexSQL() string {
	var b strings.Builder
	b.WriteString(`-- The indexes the exporter relies on in the engine's own database, for both
-- modes. Generated from the collectors' requirements (make generate); do not
-- edit by hand.
--
-- Camunda 7 (and Operaton) create no index on ACT_HI_EXT_TASK_LOG.TIMESTAMP_
-- or ACT_HI_JOB_LOG.TIMESTAMP_. The exporter reads only the history log
-- entries written since its previous collection, newest first: over REST
-- (GET /history/external-task-log and GET /history/job-log sorted by
-- timestamp) and in engine-database mode (a timestamp range). Without the
-- indexes each collection sorts or scans the whole history tables, which hold
-- rows per task and job ever created until history cleanup removes them. The
-- engine inserts into these tables once per task or job event, so each index
-- adds one index entry per insert.
--
-- CONCURRENTLY builds without blocking the engine; run each statement on its
-- own, outside a transaction block, as a role that may create indexes on
-- the engine's tables (usually the engine's schema owner). With a table
-- prefix or schema, qualify the table names. 'workflow-exporter check' says
-- whether an index serves each query (any index whose first column is
-- timestamp_ does).
`)
	for _, r := range DatabaseRequirements("", "") {
		for _, ix := range r.Indexes {
			fmt.Fprintf(&b, "\n-- %s table %s: %s\n%s\n", r.Kind, r.Table, ix.Why, ix.CreateStatement(r.Table))
		}
	}
	return b.String()
}

// SchemaCheck is an engine's database opened as the engine-database mode
// opens it, for `workflow-exporter check`: DB to ask the planner which
// index serves a query of DatabaseRequirements, Verify for the checks of
// the first collection.
type SchemaCheck struct {
	DB *pgsource.DB
	r  *dbReader
}

// OpenSchemaCheck opens the database of an engine configured with
// camunda[].database; it connects to nothing yet.
func OpenSchemaCheck(cfg config.Camunda, key string, logger *slog.Logger) (*SchemaCheck, error) {
	client, err := NewClient(cfg, logger)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	r, err := newDBReader(cfg, key, client, orDiscard(logger))
	if err != nil {
		return nil, err
	}
	return &SchemaCheck{DB: r.db, r: r}, nil
}

// Verify runs the checks of the first collection: tables, columns and
// privileges, and the time zone against the engine.
func (s *SchemaCheck) Verify(ctx context.Context) error { return s.r.verify(ctx) }

// verify checks every table and column the collectors read, and the time
// zone (what `workflow-exporter check` asks).
func (r *dbReader) verify(ctx context.Context) error {
	if err := r.checkTables(ctx, ""); err != nil {
		return err
	}
	return r.verifyZone(ctx)
}

// checkTables checks that the tables and columns one collector reads ("":
// every collector) are there and readable.
func (r *dbReader) checkTables(ctx context.Context, collector string) error {
	return r.db.ReadOnly(ctx, func(ctx context.Context, tx pgx.Tx) error {
		for _, t := range engineTables {
			if collector != "" && !slices.Contains(t.readBy, collector) {
				continue
			}
			if err := r.checkTable(ctx, tx, t.table, t.columns); err != nil {
				return err
			}
		}
		return nil
	})
}

// checkTable names a missing table or column (Camunda 7.21 added
// act_ru_ext_task.create_time_; older engines are not supported in this
// mode).
func (r *dbReader) checkTable(ctx context.Context, tx pgx.Tx, table string, columns []string) error {
	var reg *string
	if err := tx.QueryRow(ctx, `SELECT to_regclass($1)::text`, r.prefix+table).Scan(&reg); err != nil {
		return err
	}
	if reg == nil {
		return fmt.Errorf("%s: table %s%s not found (check dsn and schema: the exporter reads the engine's own tables)", r.key, r.prefix, table)
	}
	rows, err := tx.Query(ctx, `SELECT attname FROM pg_attribute WHERE attrelid = to_regclass($1) AND attnum > 0 AND NOT attisdropped`, r.prefix+table)
	if err != nil {
		return err
	}
	have, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	present := map[string]bool{}
	for _, c := range have {
		present[strings.ToLower(c)] = true
	}
	var missing []string
	for _, c := range columns {
		if !present[c] {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s: table %s%s has no column %s (Camunda 7.21+ or Operaton has them all)", r.key, r.prefix, table, strings.Join(missing, ", "))
	}
	var ok bool
	if err := tx.QueryRow(ctx, `SELECT has_table_privilege(to_regclass($1), 'SELECT')`, r.prefix+table).Scan(&ok); err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%s: the role may not read table %s%s (GRANT SELECT ON it)", r.key, r.prefix, table)
	}
	return nil
}
