package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/workflow-exporter/workflow-exporter/camunda"
	"github.com/workflow-exporter/workflow-exporter/collectors/pgschema"
	"github.com/workflow-exporter/workflow-exporter/collectors/pgsource"
	"github.com/workflow-exporter/workflow-exporter/config"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// engineDBReader reads an engine's own tables in its PostgreSQL database
// (camunda[].database): five queries in one short read-only transaction at
// REPEATABLE READ, so counts, lists and history come from one snapshot,
// whatever the number of topics. Every filter is the engine's own SQL
// (the external task query of the engine's MyBatis mapping), so the values
// are those of the REST API on the same engine:
//
//	suspended   SUSPENSION_STATE_ = 2
//	exhausted   SUSPENSION_STATE_ = 1 and RETRIES_ = 0
//	locked      SUSPENSION_STATE_ = 1 and (RETRIES_ is null or > 0) and LOCK_EXP_TIME_ > now
//	lapsed      SUSPENSION_STATE_ = 1 and (RETRIES_ is null or > 0) and LOCK_EXP_TIME_ < now
//	fetchable   SUSPENSION_STATE_ = 1 and (RETRIES_ is null or > 0) and (LOCK_EXP_TIME_ is null or < now)
//
// The engine writes its timestamps as local times of its JVM's time zone
// into columns without a zone, and compares them with its JVM clock. The
// reader compares them with the database clock expressed in the configured
// time_zone, which it checks against the engine once (see verify): a wrong
// zone would shift every lock by hours, so it is an error, never a guess.
//
// The history is read with a timestamp range, which needs an index on
// ACT_HI_EXT_TASK_LOG(TIMESTAMP_) to stay independent of the history's size
// (the engine creates none; deploy/sql/camunda/001_history_timestamp_index.sql
// does, and `workflow-exporter check` reports whether one serves the query).
type engineDBReader struct {
	db     *pgsource.DB
	client *camunda.Client // the time zone check reads the newest deployment
	engine string
	key    string // config key of the database section, for errors
	prefix string // schema prefix of the table names ("" or `"schema".`)
	zone   string
	loc    *time.Location
	logger *slog.Logger
	// verified holds the collectors whose tables and columns were checked
	// since their last failed collection; zoneChecked says the time zone
	// was checked since any collector's last failure (an engine restarted
	// with another zone is caught).
	verified    map[string]bool
	zoneChecked bool
}

func newEngineDBReader(cfg config.Camunda, key string, client *camunda.Client, logger *slog.Logger) (*engineDBReader, error) {
	d := cfg.Database
	loc, err := time.LoadLocation(d.TimeZone)
	if err != nil {
		return nil, fmt.Errorf("%s.database.time_zone: %w", key, err)
	}
	db, err := pgsource.Open(pgsource.Options{
		Name: "of engine " + cfg.Name, DSN: d.ResolvedDSN,
		StatementTimeout: time.Duration(d.StatementTimeout), LockTimeout: time.Duration(d.LockTimeout),
		MaxConnections: d.MaxConnections, Logger: logger, Snapshot: true,
	})
	if err != nil {
		return nil, fmt.Errorf("%s.database: %w", key, err)
	}
	prefix := ""
	if d.Schema != "" {
		prefix = pgx.Identifier{d.Schema}.Sanitize() + "."
	}
	return &engineDBReader{db: db, client: client, engine: cfg.Name, key: key + ".database", prefix: prefix,
		zone: d.TimeZone, loc: loc, logger: logger, verified: map[string]bool{}}, nil
}

// Collector names, which are also the aspects of the engine database the
// reader checks separately: a table one collector needs and cannot read
// fails that collector only.
const (
	nameTasks     = vocab.CollectorCamunda
	nameJobs      = vocab.CollectorCamundaJobs
	nameProcesses = vocab.CollectorCamundaProcesses
)

// engineTables are the engine tables and columns the reader uses, and the
// collectors that read them.
var engineTables = []struct {
	table   string
	columns []string
	readBy  []string
}{
	{"act_ru_ext_task", []string{"id_", "topic_name_", "worker_id_", "lock_exp_time_", "create_time_", "retries_", "error_msg_", "suspension_state_", "proc_inst_id_", "act_id_"}, []string{nameTasks}},
	{"act_hi_ext_task_log", []string{"id_", "timestamp_", "ext_task_id_", "topic_name_", "worker_id_", "state_", "act_id_", "act_inst_id_", "root_proc_inst_id_"}, []string{nameTasks}},
	{"act_hi_actinst", []string{"id_", "act_type_", "act_inst_state_", "start_time_", "root_proc_inst_id_"}, []string{nameTasks}},
	{"act_ru_incident", []string{"id_", "incident_type_", "proc_def_id_", "activity_id_", "incident_timestamp_", "configuration_"}, []string{nameTasks}},
	{"act_re_procdef", []string{"id_", "key_"}, []string{nameTasks, nameJobs, nameProcesses}},
	// business_key_: the process instance's, joined to the in-flight tasks
	// as the engine's own external task query joins it (for the status
	// page).
	{"act_ru_execution", []string{"id_", "proc_inst_id_", "proc_def_id_", "suspension_state_", "business_key_"}, []string{nameTasks, nameJobs, nameProcesses}},
	{"act_ru_job", []string{"id_", "retries_", "process_def_key_", "process_def_id_", "duedate_", "create_time_", "suspension_state_", "execution_id_", "process_instance_id_"}, []string{nameJobs}},
	{"act_hi_job_log", []string{"id_", "timestamp_", "process_def_key_", "job_state_"}, []string{nameJobs}},
	{"act_re_deployment", []string{"id_", "deploy_time_"}, []string{nameTasks, nameJobs, nameProcesses}},
}

// historySQL reads the history log entries since $1, newest first. It is
// the one engine query whose cost would grow with the history without an
// index (the engine creates none on TIMESTAMP_).
const historySQL = `SELECT id_, timestamp_, coalesce(ext_task_id_, ''), coalesce(topic_name_, ''), coalesce(worker_id_, ''), state_,
  coalesce(act_id_, ''), coalesce(act_inst_id_, ''), coalesce(root_proc_inst_id_, '')
FROM %sact_hi_ext_task_log WHERE timestamp_ >= $1::timestamp
ORDER BY timestamp_ DESC, id_ LIMIT $2`

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
				Args: []any{time.Now().Add(-time.Minute).UTC().Format("2006-01-02 15:04:05"), config.DefaultMaxHistoryEntries + 1}}}
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
-- modes. Generated from the collectors' requirements (go generate
-- ./collectors); do not edit by hand.
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

// Database is an engine's database opened as the engine-database mode opens
// it, for `workflow-exporter check`.
type Database struct {
	DB *pgsource.DB
	r  *engineDBReader
}

// OpenDatabase opens the database of an engine configured with
// camunda[].database; it connects to nothing yet.
func OpenDatabase(cfg config.Camunda, key string, logger *slog.Logger) (*Database, error) {
	client, err := NewClient(cfg, logger)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	r, err := newEngineDBReader(cfg, key, client, orDiscard(logger))
	if err != nil {
		return nil, err
	}
	return &Database{DB: r.db, r: r}, nil
}

// Verify runs the checks of the first collection: tables, columns and
// privileges, and the time zone against the engine.
func (e *Database) Verify(ctx context.Context) error { return e.r.verify(ctx) }

// History log states: the state_ of act_hi_ext_task_log (ExternalTaskState
// in the engine) and the job_state_ of act_hi_job_log (JobState) share
// these codes.
const (
	logStateCreated   = 0
	logStateFailed    = 1
	logStateSucceeded = 2
	logStateDeleted   = 3
)

// logKindOf is the kind of a history log entry by its state (NULL and
// unknown codes read as a creation, as the engine writes them).
func logKindOf(state *int32) logKind {
	switch {
	case state == nil:
		return logCreation
	case *state == logStateFailed:
		return logFailure
	case *state == logStateSucceeded:
		return logSuccess
	case *state == logStateDeleted:
		return logDeletion
	}
	return logCreation
}

// wall renders an instant as a local time of the engine's zone, the way the
// engine writes it, for a timestamp parameter.
func (r *engineDBReader) wall(t time.Time) string {
	return t.In(r.loc).Format("2006-01-02 15:04:05.999999")
}

// instant reads a timestamp column (pgx returns its wall time in UTC) as a
// local time of the engine's zone.
func (r *engineDBReader) instant(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), r.loc)
}

// ready checks, once after the collector's last failure, the tables and
// columns the collector reads, and the time zone.
func (r *engineDBReader) ready(ctx context.Context, collector string) error {
	if !r.verified[collector] {
		if err := r.checkTables(ctx, collector); err != nil {
			return err
		}
		r.verified[collector] = true
	}
	if !r.zoneChecked {
		if err := r.verifyZone(ctx); err != nil {
			return err
		}
		r.zoneChecked = true
	}
	return nil
}

// failed makes the next collection of the collector check again.
func (r *engineDBReader) failed(collector string, err error) {
	if err != nil {
		r.verified[collector], r.zoneChecked = false, false
	}
}

func (r *engineDBReader) read(ctx context.Context, rq readRequest) (out *engineRead, err error) {
	defer func() { r.failed(nameTasks, err) }()
	if err := r.ready(ctx, nameTasks); err != nil {
		return nil, err
	}
	out = &engineRead{topics: map[string]*topicRead{}}
	err = r.db.ReadOnly(ctx, func(ctx context.Context, tx pgx.Tx) error {
		now, err := pgsource.Now(ctx, tx)
		if err != nil {
			return err
		}
		out.now = now
		nowWall := r.wall(now)
		admitted, err := r.counts(ctx, tx, rq, nowWall, out)
		if err != nil {
			return err
		}
		if err := r.inflight(ctx, tx, rq, nowWall, admitted, out); err != nil {
			return err
		}
		if out.history, err = r.history(ctx, tx, rq.history); err != nil {
			return err
		}
		if out.bpmn, err = r.bpmnEvidence(ctx, tx, newDeletions(out.history.entries, rq.history)); err != nil {
			return err
		}
		if out.incidents, err = r.incidents(ctx, tx); err != nil {
			return err
		}
		return r.incidentTopics(ctx, tx, out)
	})
	return out, err
}

// bpmnEvidence looks up what tells a BPMN error apart for the new deletion
// entries (bpmn.go): which of their tasks' activity instances completed
// their scope (by primary key), and the error catch events started around
// them (ACT_HI_ACTINST's index on START_TIME_).
func (r *engineDBReader) bpmnEvidence(ctx context.Context, tx pgx.Tx, dels []historyEntry) (bpmnEvidence, error) {
	ev := bpmnEvidence{scopeCompleted: map[string]bool{}}
	if len(dels) == 0 {
		return ev, nil
	}
	ids := make([]string, 0, len(dels))
	for _, e := range dels {
		ids = append(ids, e.actInst)
	}
	rows, err := tx.Query(ctx, `SELECT id_ FROM `+r.prefix+`act_hi_actinst WHERE id_ = ANY($1) AND act_inst_state_ = $2`, ids, actInstScopeComplete)
	if err != nil {
		return ev, fmt.Errorf("%s: reading act_hi_actinst: %w", r.key, err)
	}
	completed, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return ev, fmt.Errorf("%s: reading act_hi_actinst: %w", r.key, err)
	}
	for _, id := range completed {
		ev.scopeCompleted[id] = true
	}
	first, last := deletionSpan(dels)
	rows, err = tx.Query(ctx, `SELECT id_, coalesce(root_proc_inst_id_, ''), start_time_ FROM `+r.prefix+`act_hi_actinst
WHERE act_type_ = ANY($1) AND start_time_ >= $2::timestamp AND start_time_ <= $3::timestamp
ORDER BY id_`, []string{activityBoundaryError, activityErrorStartEvent}, r.wall(first.Add(-catchWindow)), r.wall(last.Add(catchWindow)))
	if err != nil {
		return ev, fmt.Errorf("%s: reading act_hi_actinst: %w", r.key, err)
	}
	defer rows.Close()
	for rows.Next() {
		var c catchEvent
		var start time.Time
		if err := rows.Scan(&c.id, &c.rootPI, &start); err != nil {
			return ev, fmt.Errorf("%s: reading act_hi_actinst: %w", r.key, err)
		}
		c.start = r.instant(start)
		ev.catches = append(ev.catches, c)
	}
	return ev, rows.Err()
}

// actInstScopeComplete is ActivityInstanceState.SCOPE_COMPLETE in the
// engine: an activity instance that ended its scope.
const actInstScopeComplete = 1

// incidentTopics reads the oldest failedExternalTask incident of each
// reported topic: incidents joined with their task by the incident's
// configuration (the task id), exact whatever their number.
func (r *engineDBReader) incidentTopics(ctx context.Context, tx pgx.Tx, out *engineRead) error {
	rows, err := tx.Query(ctx, `SELECT t.topic_name_, min(i.incident_timestamp_)
FROM `+r.prefix+`act_ru_incident i JOIN `+r.prefix+`act_ru_ext_task t ON t.id_ = i.configuration_
WHERE i.incident_type_ = $1
GROUP BY t.topic_name_`, incidentTypeFailedExternalTask)
	if err != nil {
		return fmt.Errorf("%s: reading act_ru_incident: %w", r.key, err)
	}
	defer rows.Close()
	for rows.Next() {
		var topic *string
		var oldest time.Time
		if err := rows.Scan(&topic, &oldest); err != nil {
			return fmt.Errorf("%s: reading act_ru_incident: %w", r.key, err)
		}
		if topic == nil {
			continue
		}
		if tr := out.topics[*topic]; tr != nil {
			tr.oldestIncident = r.instant(oldest)
		}
	}
	return rows.Err()
}

// counts reads every topic's counts and oldest fetchable task in one
// GROUP BY, admits new topics, and sums the folded ones into "other". It
// returns the reported topics that hold tasks.
func (r *engineDBReader) counts(ctx context.Context, tx pgx.Tx, rq readRequest, nowWall string, out *engineRead) ([]string, error) {
	rows, err := tx.Query(ctx, `SELECT topic_name_,
  count(*),
  count(*) FILTER (WHERE suspension_state_ = 2),
  count(*) FILTER (WHERE suspension_state_ = 1 AND retries_ = 0),
  count(*) FILTER (WHERE suspension_state_ = 1 AND (retries_ IS NULL OR retries_ > 0) AND lock_exp_time_ > $1::timestamp),
  count(*) FILTER (WHERE suspension_state_ = 1 AND (retries_ IS NULL OR retries_ > 0) AND lock_exp_time_ < $1::timestamp),
  min(create_time_) FILTER (WHERE suspension_state_ = 1 AND (retries_ IS NULL OR retries_ > 0)
                              AND (lock_exp_time_ IS NULL OR lock_exp_time_ < $1::timestamp))
FROM `+r.prefix+`act_ru_ext_task
GROUP BY topic_name_
ORDER BY topic_name_ COLLATE "C"`, nowWall)
	if err != nil {
		return nil, fmt.Errorf("%s: reading act_ru_ext_task: %w", r.key, err)
	}
	type topicRow struct {
		name   string
		c      topicCounts
		oldest *time.Time
	}
	var all []topicRow
	for rows.Next() {
		var t topicRow
		var name *string
		if err := rows.Scan(&name, &t.c.total, &t.c.suspended, &t.c.exhausted, &t.c.locked, &t.c.lapsed, &t.oldest); err != nil {
			rows.Close()
			return nil, fmt.Errorf("%s: reading act_ru_ext_task: %w", r.key, err)
		}
		if name != nil {
			t.name = *name
		}
		all = append(all, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: reading act_ru_ext_task: %w", r.key, err)
	}
	known := make(map[string]bool, len(rq.known))
	for _, t := range rq.known {
		known[t] = true
		out.topics[t] = &topicRead{}
	}
	var admitted []string
	var other topicCounts
	folded := rq.otherKnown
	for _, t := range all {
		if !known[t.name] {
			if !rq.admit(t.name) {
				folded = true
				other.add(t.c)
				continue
			}
			known[t.name] = true
			out.topics[t.name] = &topicRead{}
		}
		tr := out.topics[t.name]
		tr.counts = t.c
		if t.oldest != nil {
			tr.oldest = r.instant(*t.oldest)
		}
		admitted = append(admitted, t.name)
	}
	if folded {
		out.other = &other
	}
	return admitted, nil
}

// inflight lists the locked and lapsed tasks of the reported topics: topic
// by topic in name order, locked before lapsed, each by id, at most
// max_listed_tasks, the order the REST reader spends its budget in.
func (r *engineDBReader) inflight(ctx context.Context, tx pgx.Tx, rq readRequest, nowWall string, topics []string, out *engineRead) error {
	var want int64
	for _, t := range topics {
		want += out.topics[t].counts.locked + out.topics[t].counts.lapsed
	}
	if want == 0 {
		return nil
	}
	rows, err := tx.Query(ctx, `SELECT t.id_, t.topic_name_, coalesce(t.worker_id_, ''), t.lock_exp_time_, t.retries_,
  coalesce(t.error_msg_, ''), coalesce(t.proc_inst_id_, ''), coalesce(t.act_id_, ''), t.lock_exp_time_ > $1::timestamp,
  coalesce(pi.business_key_, '')
FROM `+r.prefix+`act_ru_ext_task t LEFT JOIN `+r.prefix+`act_ru_execution pi ON pi.id_ = t.proc_inst_id_
WHERE t.suspension_state_ = 1 AND (t.retries_ IS NULL OR t.retries_ > 0)
  AND t.lock_exp_time_ IS NOT NULL AND t.lock_exp_time_ <> $1::timestamp AND t.topic_name_ = ANY($2)
ORDER BY t.topic_name_ COLLATE "C", t.lock_exp_time_ > $1::timestamp DESC, t.id_
LIMIT $3`, nowWall, topics, rq.budget)
	if err != nil {
		return fmt.Errorf("%s: listing act_ru_ext_task: %w", r.key, err)
	}
	defer rows.Close()
	var listed int64
	for rows.Next() {
		var o taskObs
		var exp time.Time
		var retries *int32
		var locked bool
		if err := rows.Scan(&o.id, &o.topic, &o.worker, &exp, &retries, &o.errMsg, &o.pi, &o.activity, &locked, &o.businessKey); err != nil {
			return fmt.Errorf("%s: listing act_ru_ext_task: %w", r.key, err)
		}
		o.exp = r.instant(exp)
		if retries != nil {
			n := int(*retries)
			o.retries = &n
		}
		tr := out.topics[o.topic]
		if locked {
			tr.locked = append(tr.locked, o)
		} else {
			tr.lapsed = append(tr.lapsed, o)
		}
		listed++
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("%s: listing act_ru_ext_task: %w", r.key, err)
	}
	if listed < want {
		out.truncated = true
		out.unwatched = want - listed
	}
	return nil
}

// history reads the history log entries of the request's range, newest
// first, at most max_history_entries.
func (r *engineDBReader) history(ctx context.Context, tx pgx.Tx, hr historyRequest) (historyRead, error) {
	rows, err := tx.Query(ctx, fmt.Sprintf(historySQL, r.prefix), r.wall(hr.from), hr.max+1)
	if err != nil {
		return historyRead{}, fmt.Errorf("%s: reading act_hi_ext_task_log: %w", r.key, err)
	}
	defer rows.Close()
	var out historyRead
	for rows.Next() {
		var e historyEntry
		var ts time.Time
		var state *int32
		if err := rows.Scan(&e.id, &ts, &e.taskID, &e.topic, &e.worker, &state, &e.activity, &e.actInst, &e.rootPI); err != nil {
			return historyRead{}, fmt.Errorf("%s: reading act_hi_ext_task_log: %w", r.key, err)
		}
		if len(out.entries) == hr.max {
			out.cut = true
			break
		}
		e.ts = r.instant(ts)
		e.kind = logKindOf(state)
		out.entries = append(out.entries, e)
	}
	if err := rows.Err(); err != nil {
		return historyRead{}, fmt.Errorf("%s: reading act_hi_ext_task_log: %w", r.key, err)
	}
	return out, nil
}

// incidents groups the open incidents by type, process definition key and
// activity, oldest first: exact counts whatever their number (the REST
// reader can list only max_listed_tasks of them).
func (r *engineDBReader) incidents(ctx context.Context, tx pgx.Tx) (incidentRead, error) {
	rows, err := tx.Query(ctx, `SELECT coalesce(i.incident_type_, ''), coalesce(d.key_, i.proc_def_id_, ''), coalesce(i.activity_id_, ''),
  count(*), min(i.incident_timestamp_)
FROM `+r.prefix+`act_ru_incident i LEFT JOIN `+r.prefix+`act_re_procdef d ON d.id_ = i.proc_def_id_
GROUP BY 1, 2, 3
ORDER BY 5, 1, 2, 3`)
	if err != nil {
		return incidentRead{}, fmt.Errorf("%s: reading act_ru_incident: %w", r.key, err)
	}
	defer rows.Close()
	out := incidentRead{oldest: map[string]time.Time{}}
	for rows.Next() {
		var g incidentGroup
		var oldest *time.Time
		if err := rows.Scan(&g.key.typ, &g.key.key, &g.key.activity, &g.n, &oldest); err != nil {
			return incidentRead{}, fmt.Errorf("%s: reading act_ru_incident: %w", r.key, err)
		}
		out.groups = append(out.groups, g)
		if oldest != nil {
			ts := r.instant(*oldest)
			if prev, ok := out.oldest[g.key.typ]; !ok || ts.Before(prev) {
				out.oldest[g.key.typ] = ts
			}
		}
	}
	return out, rows.Err()
}

// verify checks every table and column the collectors read, and the time
// zone (what `workflow-exporter check` asks).
func (r *engineDBReader) verify(ctx context.Context) error {
	if err := r.checkTables(ctx, ""); err != nil {
		return err
	}
	return r.verifyZone(ctx)
}

// checkTables checks that the tables and columns one collector reads ("":
// every collector) are there and readable.
func (r *engineDBReader) checkTables(ctx context.Context, collector string) error {
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

// verifyZone checks that time_zone is the zone the engine writes its times
// in: the newest deployment's time as the REST API renders it (an instant,
// in the JVM's offset) must be the time the database holds, read in
// time_zone.
func (r *engineDBReader) verifyZone(ctx context.Context) error {
	deps, err := r.client.ListDeployments(ctx, camunda.Page{MaxResults: 1, Sort: camunda.Sort{By: camunda.DeploymentSortTime, Order: camunda.Descending}})
	if err != nil {
		return err
	}
	if len(deps) == 0 {
		return nil // nothing deployed, so no task and no time to compare yet
	}
	dep := deps[0]
	var held time.Time
	err = r.db.ReadOnly(ctx, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT deploy_time_ FROM `+r.prefix+`act_re_deployment WHERE id_ = $1`, dep.ID).Scan(&held)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%s: deployment %s, which the engine's REST API lists, is not in act_re_deployment: is this the engine's database (and schema)?", r.key, dep.ID)
	}
	if err != nil {
		return err
	}
	want := dep.DeploymentTime.Time
	got := r.instant(held)
	if d := got.Sub(want); d > time.Millisecond || d < -time.Millisecond {
		_, off := want.Zone()
		return fmt.Errorf("%s.time_zone: the engine made deployment %s at %s by its clock (UTC offset %s), which its database holds as %s; read in %q that is %s, %s off: set time_zone to the engine JVM's time zone (its user.timezone)",
			r.key, dep.ID, want.Format(time.RFC3339Nano), offset(off), held.Format("2006-01-02 15:04:05.999"), r.zone,
			got.Format(time.RFC3339Nano), d.Round(time.Minute))
	}
	return nil
}

func offset(sec int) string {
	sign := "+"
	if sec < 0 {
		sign, sec = "-", -sec
	}
	return fmt.Sprintf("%s%02d:%02d", sign, sec/3600, sec%3600/60)
}

// checkTable names a missing table or column (Camunda 7.21 added
// act_ru_ext_task.create_time_; older engines are not supported in this
// mode).
func (r *engineDBReader) checkTable(ctx context.Context, tx pgx.Tx, table string, columns []string) error {
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

// Job queries. executableJobsSQL is the engine's job query with
// executable=true (Job.xml: retries left, due date null or not after now,
// no execution or its process instance not suspended) and active=true (the
// job not suspended), grouped by key with the oldest due time (the due
// date, or the creation for a job without one).
const (
	exhaustedJobsSQL = `SELECT coalesce(nullif(j.process_def_key_, ''), d.key_, ''), count(*), NULL::timestamp
FROM %[1]sact_ru_job j LEFT JOIN %[1]sact_re_procdef d ON d.id_ = j.process_def_id_
WHERE j.retries_ = 0
GROUP BY 1
ORDER BY min(j.id_)`
	executableJobsSQL = `SELECT coalesce(nullif(j.process_def_key_, ''), d.key_, ''), count(*), min(coalesce(j.duedate_, j.create_time_))
FROM %[1]sact_ru_job j LEFT JOIN %[1]sact_re_procdef d ON d.id_ = j.process_def_id_
  LEFT JOIN %[1]sact_ru_execution pi ON pi.id_ = j.process_instance_id_
WHERE j.retries_ > 0 AND (j.duedate_ IS NULL OR j.duedate_ <= $1::timestamp)
  AND (j.execution_id_ IS NULL OR pi.suspension_state_ = 1 OR pi.suspension_state_ IS NULL)
  AND j.suspension_state_ = 1
GROUP BY 1
ORDER BY min(j.id_)`
	// jobLogSQL reads the job log entries since $1, newest first; like
	// historySQL it needs an index on timestamp_ the engine does not create.
	jobLogSQL = `SELECT id_, timestamp_, coalesce(process_def_key_, ''), job_state_
FROM %sact_hi_job_log WHERE timestamp_ >= $1::timestamp
ORDER BY timestamp_ DESC, id_ LIMIT $2`
)

// readJobs reads the jobs aspect in one read-only transaction: the jobs
// with no retries left and the executable jobs grouped by process
// definition key, in the order of their first job id (the REST reader's
// admission order), and the job log entries of the request's range.
func (r *engineDBReader) readJobs(ctx context.Context, rq jobsRequest) (out *jobsRead, err error) {
	defer func() { r.failed(nameJobs, err) }()
	if err := r.ready(ctx, nameJobs); err != nil {
		return nil, err
	}
	out = &jobsRead{}
	err = r.db.ReadOnly(ctx, func(ctx context.Context, tx pgx.Tx) error {
		now, err := pgsource.Now(ctx, tx)
		if err != nil {
			return err
		}
		out.now = now
		groups := func(query string, args ...any) ([]jobGroup, error) {
			rows, err := tx.Query(ctx, fmt.Sprintf(query, r.prefix), args...)
			if err != nil {
				return nil, fmt.Errorf("%s: reading act_ru_job: %w", r.key, err)
			}
			defer rows.Close()
			var gs []jobGroup
			for rows.Next() {
				var g jobGroup
				var oldest *time.Time
				if err := rows.Scan(&g.key, &g.n, &oldest); err != nil {
					return nil, fmt.Errorf("%s: reading act_ru_job: %w", r.key, err)
				}
				if oldest != nil {
					if ts := r.instant(*oldest); out.oldestDue.IsZero() || ts.Before(out.oldestDue) {
						out.oldestDue = ts
					}
				}
				gs = append(gs, g)
			}
			return gs, rows.Err()
		}
		if out.exhausted, err = groups(exhaustedJobsSQL); err != nil {
			return err
		}
		if out.executable, err = groups(executableJobsSQL, r.wall(now)); err != nil {
			return err
		}
		out.log, out.logCut, err = r.jobLog(ctx, tx, rq.log)
		return err
	})
	return out, err
}

// jobLog reads the job log entries of the request's range, newest first, at
// most max_history_entries.
func (r *engineDBReader) jobLog(ctx context.Context, tx pgx.Tx, hr historyRequest) ([]jobLogEntry, bool, error) {
	rows, err := tx.Query(ctx, fmt.Sprintf(jobLogSQL, r.prefix), r.wall(hr.from), hr.max+1)
	if err != nil {
		return nil, false, fmt.Errorf("%s: reading act_hi_job_log: %w", r.key, err)
	}
	defer rows.Close()
	var out []jobLogEntry
	for rows.Next() {
		var e jobLogEntry
		var ts time.Time
		var state *int32
		if err := rows.Scan(&e.id, &ts, &e.key, &state); err != nil {
			return nil, false, fmt.Errorf("%s: reading act_hi_job_log: %w", r.key, err)
		}
		if len(out) == hr.max {
			return out, true, nil
		}
		e.ts = r.instant(ts)
		e.kind = logKindOf(state)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("%s: reading act_hi_job_log: %w", r.key, err)
	}
	return out, false, nil
}

// processInstancesSQL is the engine's process definition statistics query
// (Statistics.xml: every definition, left joined with the executions that
// are process instances, ID_ = PROC_INST_ID_), summed per key.
const processInstancesSQL = `SELECT d.key_, count(e.id_)
FROM %[1]sact_re_procdef d LEFT JOIN %[1]sact_ru_execution e ON e.proc_def_id_ = d.id_ AND e.id_ = e.proc_inst_id_
GROUP BY d.key_`

// readProcesses reads the running process instances per process definition
// key, as GET /process-definition/statistics counts them.
func (r *engineDBReader) readProcesses(ctx context.Context) (out map[string]int64, err error) {
	defer func() { r.failed(nameProcesses, err) }()
	if err := r.ready(ctx, nameProcesses); err != nil {
		return nil, err
	}
	out = map[string]int64{}
	err = r.db.ReadOnly(ctx, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, fmt.Sprintf(processInstancesSQL, r.prefix))
		if err != nil {
			return fmt.Errorf("%s: reading act_ru_execution: %w", r.key, err)
		}
		defer rows.Close()
		for rows.Next() {
			var key string
			var n int64
			if err := rows.Scan(&key, &n); err != nil {
				return fmt.Errorf("%s: reading act_ru_execution: %w", r.key, err)
			}
			out[key] += n
		}
		return rows.Err()
	})
	return out, err
}
