package capability

import (
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/workflow-exporter/workflow-exporter/blocks/pgschema"
	"github.com/workflow-exporter/workflow-exporter/config"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// What engine-database mode needs of the engine's schema, apart from the
// reading itself (collectors/engine/enginedb): the tables and columns each
// collector reads, checked before its first reading (enginedb's
// Reader.ready) and by `workflow-exporter check` (enginedb.SchemaCheck),
// and the timestamp indexes the history log queries rely on
// (DatabaseRequirements, IndexSQL). Those two queries are here, not with
// the rest of the reader's SQL, because check asks the planner whether an
// index serves them: ExternalTaskLogSQL and JobLogSQL.

// EngineTable is an engine table the reader uses: the columns it reads, the
// collectors that read it, and the columns older engine versions lack
// (Optional, read where present).
type EngineTable struct {
	Table    string
	Columns  []string
	ReadBy   []string
	Optional []string
}

// CreateTimeColumn is ACT_RU_EXT_TASK's create time, which Camunda added in
// 7.21 (NULL for the tasks created before an upgrade to 7.21): without it
// the oldest waiting age comes from the tasks' historic activity instances
// (capability/waitingage.go).
const CreateTimeColumn = "create_time_"

// EngineTables are the engine tables and columns the reader uses, and the
// collectors that read them.
var EngineTables = []EngineTable{
	{"act_ru_ext_task", []string{"id_", "topic_name_", "worker_id_", "lock_exp_time_", "retries_", "error_msg_", "suspension_state_", "proc_inst_id_", "act_id_", "act_inst_id_", "proc_def_id_", "tenant_id_"}, []string{vocab.CollectorCamunda},
		[]string{CreateTimeColumn}},
	{"act_hi_ext_task_log", []string{"id_", "timestamp_", "ext_task_id_", "topic_name_", "worker_id_", "state_", "act_id_", "act_inst_id_", "root_proc_inst_id_", "proc_inst_id_", "error_msg_", "tenant_id_"}, []string{vocab.CollectorCamunda}, nil},
	{"act_hi_actinst", []string{"id_", "act_id_", "act_type_", "act_inst_state_", "proc_def_id_", "start_time_", "end_time_", "root_proc_inst_id_", "tenant_id_"}, []string{vocab.CollectorCamunda}, nil},
	{"act_ru_incident", []string{"id_", "incident_type_", "proc_def_id_", "activity_id_", "incident_timestamp_", "configuration_", "incident_msg_", "proc_inst_id_", "tenant_id_"}, []string{vocab.CollectorCamunda}, nil},
	{"act_re_procdef", []string{"id_", "key_", "history_ttl_", "tenant_id_"}, []string{vocab.CollectorCamunda, vocab.CollectorCamundaJobs, vocab.CollectorCamundaProcesses, vocab.CollectorCamundaHistory}, nil},
	// business_key_: the process instance's, joined to the in-flight tasks
	// as the engine's own external task query joins it (for the status
	// page).
	{"act_ru_execution", []string{"id_", "proc_inst_id_", "proc_def_id_", "suspension_state_", "business_key_"}, []string{vocab.CollectorCamunda, vocab.CollectorCamundaJobs, vocab.CollectorCamundaProcesses}, nil},
	{"act_ru_job", []string{"id_", "retries_", "process_def_key_", "process_def_id_", "duedate_", "create_time_", "suspension_state_", "execution_id_", "process_instance_id_", "handler_type_", "exception_msg_", "tenant_id_"}, []string{vocab.CollectorCamundaJobs, vocab.CollectorCamundaHistory}, nil},
	{"act_hi_job_log", []string{"id_", "timestamp_", "process_def_key_", "job_state_", "job_id_", "process_instance_id_", "hostname_", "job_exception_msg_", "tenant_id_"}, []string{vocab.CollectorCamundaJobs}, nil},
	{"act_re_deployment", []string{"id_", "deploy_time_"}, []string{vocab.CollectorCamunda, vocab.CollectorCamundaJobs, vocab.CollectorCamundaProcesses, vocab.CollectorCamundaHistory}, nil},
	// The history aspect: the cleanable count and the cleanup's jobs.
	{"act_hi_procinst", []string{"proc_def_id_", "end_time_", "removal_time_"}, []string{vocab.CollectorCamundaHistory}, nil},
}

// historyLogs are the history tables read as a stream by timestamp, with
// their query and why they need an index on timestamp_ (the engine creates
// none).
var historyLogs = map[string]struct{ query, sql, why string }{
	"act_hi_ext_task_log": {"history", ExternalTaskLogSQL,
		"failures and completions read the history log entries of the last late_commit_window; without this index every collection scans (and, over REST, sorts) the whole history table"},
	"act_hi_job_log": {"job log", JobLogSQL,
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
	for _, t := range EngineTables {
		r := pgschema.Requirements{Kind: "engine", Table: prefix + t.Table}
		for _, c := range t.Columns {
			r.Columns = append(r.Columns, pgschema.Column{Key: key, Name: c})
		}
		for _, c := range t.Optional {
			r.Columns = append(r.Columns, pgschema.Column{Key: key, Name: c, Optional: true})
		}
		if t.Table == "act_hi_actinst" {
			r.Queries = []pgschema.Query{{Name: "oldest waiting", SQL: fmt.Sprintf(ActivityStartSQL, sqlPrefixOf(schema), "$1"), Args: []any{"an-activity-instance-id"}}}
			r.Indexes = []pgschema.Index{{Name: ActivityPrimaryKey, Columns: []string{"id_"}, Query: "oldest waiting", LibraryIndex: ActivityPrimaryKey,
				Why: "the oldest waiting age looks up the activity instance of each fetchable task without a create time (Camunda before 7.21, or tasks created before an upgrade to it) by its primary key"}}
		}
		if h, ok := historyLogs[t.Table]; ok {
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
			r.Indexes = []pgschema.Index{{Name: t.Table + "_timestamp_idx", Columns: []string{"timestamp_"}, Query: h.query, Why: h.why}}
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
			if ix.LibraryIndex != "" {
				continue // the engine creates it (a primary key)
			}
			fmt.Fprintf(&b, "\n-- %s table %s: %s\n%s\n", r.Kind, r.Table, ix.Why, ix.CreateStatement(r.Table))
		}
	}
	return b.String()
}

// ExternalTaskLogSQL reads the history log entries stamped from $1 to before
// $2 (the history cursor's request), newest first. It is the one engine query
// whose cost would grow with the history without an index (the engine creates
// none on TIMESTAMP_).
const ExternalTaskLogSQL = `SELECT id_, timestamp_, coalesce(ext_task_id_, ''), coalesce(topic_name_, ''), coalesce(worker_id_, ''), state_,
  coalesce(act_id_, ''), coalesce(act_inst_id_, ''), coalesce(root_proc_inst_id_, ''),
  coalesce(proc_inst_id_, ''), CASE WHEN state_ = 1 THEN coalesce(left(error_msg_, 4096), '') ELSE '' END
FROM %sact_hi_ext_task_log WHERE timestamp_ >= $1::timestamp AND timestamp_ < $2::timestamp
ORDER BY timestamp_ DESC, id_ LIMIT $3`

// JobLogSQL reads the job log entries stamped from $1 to before $2,
// newest first; like ExternalTaskLogSQL it needs an index on timestamp_ the
// engine does not create.
const JobLogSQL = `SELECT id_, timestamp_, coalesce(tenant_id_, ''), coalesce(process_def_key_, ''), job_state_,
  coalesce(job_id_, ''), coalesce(process_instance_id_, ''), coalesce(hostname_, ''),
  CASE WHEN job_state_ = 1 THEN coalesce(left(job_exception_msg_, 4096), '') ELSE '' END
FROM %sact_hi_job_log WHERE timestamp_ >= $1::timestamp AND timestamp_ < $2::timestamp
ORDER BY timestamp_ DESC, id_ LIMIT $3`

// ActivityStartSQL dates an external task by the start of its historic
// activity instance (the task's ACT_INST_ID_; started within a
// millisecond of the task's creation), a primary key lookup: the
// engine-database reader's counts query runs it as a scalar subquery for
// each fetchable task without a create time (second verb: the id's
// expression), and `check` asks the planner whether the key serves it.
const ActivityStartSQL = `SELECT a.start_time_ FROM %sact_hi_actinst a WHERE a.id_ = %s`

// ActivityPrimaryKey is the primary key index Camunda's PostgreSQL schema
// creates on ACT_HI_ACTINST (ID_).
const ActivityPrimaryKey = "act_hi_actinst_pkey"

// sqlPrefixOf is the SQL qualification of the engine's tables in schema
// ("" for the search_path).
func sqlPrefixOf(schema string) string {
	if schema == "" {
		return ""
	}
	return pgx.Identifier{schema}.Sanitize() + "."
}

// SchemaLogTable holds the schema versions the engine's database was
// created and upgraded with: the version of an engine read without its
// REST API.
const SchemaLogTable = "act_ge_schema_log"

// ByteArrayTable holds the deployments' resources, and serialized
// variables: an engine read without its REST API below history level full
// gives its process models from it.
const ByteArrayTable = "act_ge_bytearray"

// HistoryLevelTable holds the engine's historyLevel property. It is not
// among the tables a collector needs (DatabaseRequirements): without it
// the level is unknown, and nothing fails.
const HistoryLevelTable = "act_ge_property"
