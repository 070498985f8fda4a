package enginedb

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"regexp"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/workflow-exporter/workflow-exporter/blocks/pgsource"
	"github.com/workflow-exporter/workflow-exporter/camunda"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine/reading"
	"github.com/workflow-exporter/workflow-exporter/config"
)

// Reader reads an engine's own tables in its PostgreSQL database
// (camunda[].database), aspect by aspect: tasks.go, history.go,
// incidents.go, jobs.go, processes.go, cleanup.go; the tables and columns
// it needs, and the indexes, are capability.EngineTables and
// capability.DatabaseRequirements, checked in schema.go. The tasks reading
// is five queries in one short read-only transaction at REPEATABLE READ,
// so counts, lists and history come from one snapshot, whatever the number
// of topics. Every filter is the engine's own SQL
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
type Reader struct {
	db     *pgsource.DB
	client *camunda.Client // the time zone check reads the newest deployment
	engine string
	key    string // config key of the database section, for errors
	prefix string // schema prefix of the table names ("" or `"schema".`)
	schema string // the schema itself ("": the role's search path)
	zone   string
	loc    *time.Location
	logger *slog.Logger
	// verified holds the collectors whose tables and columns were checked
	// since their last failed collection; zoneChecked says the time zone
	// was checked since any collector's last failure (an engine restarted
	// with another zone is caught).
	verified    map[string]bool
	zoneChecked bool
	// tenants: tenant_label is on, and the readings key topics by tenant
	// (keyed).
	tenants bool
	// createTime: ACT_RU_EXT_TASK has CREATE_TIME_ (Camunda 7.21 on, the
	// forks), as the check of the camunda collector's tables found.
	createTime bool
	// flavor is camunda[].flavor ("" or auto: not configured), for an
	// engine read without its REST API (probe.go); probeWarned: the probe
	// said once that the role cannot read what names the engine.
	flavor      string
	probeWarned bool
}

func New(cfg config.Camunda, key string, client *camunda.Client, logger *slog.Logger) (*Reader, error) {
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
	return &Reader{db: db, client: client, engine: cfg.Name, key: key + ".database", prefix: prefix, schema: d.Schema,
		zone: d.TimeZone, loc: loc, logger: logger, verified: map[string]bool{}, tenants: cfg.TenantLabel, flavor: cfg.Flavor}, nil
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// topicColumn matches a topic column of the readings' SQL, with its table
// alias if any; definitionKeyColumn a process definition's key (alias d).
var (
	topicColumn         = regexp.MustCompile(`\b([a-z]+\.)?topic_name_\b`)
	definitionKeyColumn = regexp.MustCompile(`\b(d\.)key_\b`)
)

// keyed returns a reading's SQL with every topic column read as the topic key
// (reading.TenantKey) when tenant_label is on: the tenant, chr(31), the topic.
// GROUP BY and ORDER BY then work on the keys, in the order the REST reader's
// keys sort in.
func (r *Reader) keyed(sql string) string { return r.keyedBy(topicColumn, sql) }

// keyedBy is keyed for the columns col matches (its first group: the
// table alias, whose tenant_id_ is the tenant).
func (r *Reader) keyedBy(col *regexp.Regexp, sql string) string {
	if !r.tenants {
		return sql
	}
	return col.ReplaceAllStringFunc(sql, func(m string) string {
		alias := col.FindStringSubmatch(m)[1]
		return "(coalesce(" + alias + "tenant_id_, '') || chr(31) || " + m + ")"
	})
}

// keyOf is the key of a topic or process definition key of tenant read
// in Go: the topic or key itself without tenant_label.
func (r *Reader) keyOf(tenant, k string) string {
	if !r.tenants {
		return k
	}
	return reading.TenantKey(tenant, k)
}

var _ reading.Reader = (*Reader)(nil)

// Close implements reading.Reader.
func (r *Reader) Close() { r.db.Close() }

// collectRows runs one query of a reading and returns its rows, each
// converted by to (pgx.RowToStructByPos for a row type of the query, or
// pgx.RowTo for one column); an error names the reading (what, e.g.
// "reading act_ru_job") and the engine's database.
func collectRows[T any](ctx context.Context, tx pgx.Tx, r *Reader, what string, to pgx.RowToFunc[T], sql string, args ...any) ([]T, error) {
	rows, err := tx.Query(ctx, sql, args...)
	if err == nil {
		var out []T
		if out, err = pgx.CollectRows(rows, to); err == nil {
			return out, nil
		}
	}
	return nil, fmt.Errorf("%s: %s: %w", r.key, what, err)
}

// scanRows is collectRows for a hot query: scan fills each row's fields
// without reflection; n is the expected number of rows.
func scanRows[T any](ctx context.Context, tx pgx.Tx, r *Reader, what string, n int, scan func(pgx.Rows, *T) error, sql string, args ...any) ([]T, error) {
	rows, err := tx.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", r.key, what, err)
	}
	defer rows.Close()
	out := make([]T, 0, n)
	for rows.Next() {
		out = append(out, *new(T))
		if err := scan(rows, &out[len(out)-1]); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", r.key, what, err)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %s: %w", r.key, what, err)
	}
	return out, nil
}

// wall renders an instant as a local time of the engine's zone, the way the
// engine writes it, for a timestamp parameter.
func (r *Reader) wall(t time.Time) string {
	return t.In(r.loc).Format("2006-01-02 15:04:05.999999")
}

// faceRange is FaceRange in the engine's zone.
func (r *Reader) faceRange(hr reading.HistoryRequest) (from, to string) { return FaceRange(r.loc, hr) }

// FaceRange renders a history reading's range as the engine stamps its
// entries, local times of its zone loc without the zone: from base's local
// time less back, to before the later of base's and now's local times
// plus ahead. It is reckoned on the clock face, not from instants: across
// a DST fall-back the local times of instants run back an hour, and a
// range from instants would skip the entries stamped on the clock face in
// between (or be empty, its end before its start). Exported for the test
// of the history cursor across DST changes (collectors/engine).
func FaceRange(loc *time.Location, hr reading.HistoryRequest) (from, to string) {
	face := func(t time.Time) time.Time {
		w := t.In(loc)
		return time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), w.Nanosecond(), time.UTC)
	}
	const layout = "2006-01-02 15:04:05.999999"
	base, end := face(hr.Base), face(hr.Now)
	if end.Before(base) {
		end = base
	}
	return base.Add(-hr.Back).Format(layout), end.Add(hr.Ahead).Format(layout)
}

// instant is Instant in the engine's zone.
func (r *Reader) instant(t time.Time) time.Time { return Instant(r.loc, t) }

// Instant reads a timestamp column (pgx returns its wall time in UTC) as a
// local time of the engine's zone loc.
func Instant(loc *time.Location, t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), loc)
}

// verifyZone checks that time_zone is the zone the engine writes its times
// in: the newest deployment's time as the REST API renders it (an instant,
// in the JVM's offset) must be the time the database holds, read in
// time_zone. Without the REST API (no camunda[].url) only what the
// database shows can be checked (zoneInFuture).
func (r *Reader) verifyZone(ctx context.Context) error {
	if r.client == nil {
		return r.zoneInFuture(ctx)
	}
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

// ready checks, once after the collector's last failure, the tables and
// columns the collector reads, and the time zone.
func (r *Reader) ready(ctx context.Context, collector string) error {
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

// read runs one collector's reading in one read-only transaction, after
// the checks of ready; a failure makes the next reading check again.
func (r *Reader) read(ctx context.Context, collector string, fn func(context.Context, pgx.Tx) error) (err error) {
	defer func() { r.failed(collector, err) }()
	if err := r.ready(ctx, collector); err != nil {
		return err
	}
	return r.db.ReadOnly(ctx, fn)
}

// readNow is read for a reading that needs the database clock at the
// start of its transaction (the engine's clock of the reading).
func (r *Reader) readNow(ctx context.Context, collector string, fn func(context.Context, pgx.Tx, time.Time) error) error {
	return r.read(ctx, collector, func(ctx context.Context, tx pgx.Tx) error {
		now, err := pgsource.Now(ctx, tx)
		if err != nil {
			return err
		}
		return fn(ctx, tx, now)
	})
}

// failed makes the next collection of the collector check again.
func (r *Reader) failed(collector string, err error) {
	if err != nil {
		r.verified[collector], r.zoneChecked = false, false
	}
}
