// Package collectortest builds the exporter's collectors exactly as the binary
// builds them (through internal/sources), against a throwaway PostgreSQL
// with the reference schema and a frozen database clock, and reads what
// they serve: the shared builders of the collectors' own tests.
package collectortest

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/workflow-exporter/workflow-exporter/blocks/correlate"
	"github.com/workflow-exporter/workflow-exporter/blocks/labellimit"
	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/collectors"
	"github.com/workflow-exporter/workflow-exporter/config"
	"github.com/workflow-exporter/workflow-exporter/internal/poll"
	"github.com/workflow-exporter/workflow-exporter/internal/sources"
	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

// T0 is the frozen database clock at the start of every test.
var T0 = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

// DB is a fresh database with the reference schema and the exporter's
// indexes, and a frozen clock for the exporter's sessions.
//
// The clock: the exporter's connections set search_path to
// "testclock, pg_catalog, public", so the unqualified now() in its queries
// resolves to testclock.now(), which reads a one-row table the test sets.
// Nothing in the exporter knows about it: production sessions resolve
// now() to pg_catalog.now(). Ages and windows are therefore computed with
// the database clock, exactly, and tests can move that clock.
type DB struct {
	T     *testing.T
	Admin *pgx.Conn
	DSN   string
}

func NewDB(t *testing.T, withDuplicateCount bool) *DB {
	t.Helper()
	return NewDBAt(t, pgtest.NewDatabase(t), withDuplicateCount)
}

// NewDBAt is NewDB on the empty database at url: one on a server of the
// test's own (tests across two servers), or on a wal_level=logical server
// (the outbox relay's tests).
func NewDBAt(t *testing.T, url string, withDuplicateCount bool) *DB {
	t.Helper()
	conn := pgtest.Connect(t, url)
	files := []string{"deploy/sql/001_reference_schema.sql"}
	if withDuplicateCount {
		files = append(files, "deploy/sql/002_duplicate_count_extension.sql")
	}
	files = append(files, "deploy/sql/003_exporter_indexes.sql")
	skip := func(stmt string) bool { return !withDuplicateCount && strings.Contains(stmt, "duplicate_count") }
	pgtest.ExecRepoFiles(t, conn, skip, files...)
	pgtest.Exec(t, conn, `CREATE SCHEMA testclock;
CREATE TABLE testclock.clock (t timestamptz NOT NULL);
INSERT INTO testclock.clock VALUES ('`+T0.Format(time.RFC3339)+`');
CREATE FUNCTION testclock.now() RETURNS timestamptz LANGUAGE sql STABLE AS 'SELECT t FROM testclock.clock';`)
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	return &DB{T: t, Admin: conn, DSN: url + sep + "search_path=testclock,pg_catalog,public"}
}

// Exec runs SQL as the application would (its own session, real now()).
func (d *DB) Exec(sql string, args ...any) { d.T.Helper(); pgtest.Exec(d.T, d.Admin, sql, args...) }

// SetClock moves the exporter's database clock to t0 plus offset.
func (d *DB) SetClock(offset time.Duration) {
	d.T.Helper()
	d.Exec("UPDATE testclock.clock SET t = $1", T0.Add(offset))
}

// At formats t0 plus seconds as a timestamptz literal argument.
func At(seconds float64) time.Time { return T0.Add(time.Duration(seconds * float64(time.Second))) }

// AtOrNull is at(*seconds), or NULL for a column when seconds is nil.
func AtOrNull(seconds *float64) any {
	if seconds == nil {
		return nil
	}
	return At(*seconds)
}

// Exporter is a database source built exactly as the binary builds it.
type Exporter struct {
	Views    *correlate.Registry
	T        *testing.T
	Set      *poll.Set
	Database *sources.DatabaseSource
	Logs     *testkit.LogBuffer
}

func (d *DB) NewExporter(configYAML string) *Exporter {
	d.T.Helper()
	d.T.Setenv("WFX_TEST_DSN", d.DSN)
	cfg, err := config.Parse([]byte(configYAML))
	if err != nil {
		d.T.Fatal(err)
	}
	logs := &testkit.LogBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	folds := labellimit.NewStats()
	views := correlate.NewRegistry()
	var engines []string
	for _, e := range cfg.Camunda {
		engines = append(engines, e.Name)
	}
	db, err := sources.NewDatabase(cfg.Databases[0], "databases[0]", sources.DatabaseOptions{Folds: folds, Views: views, Engines: engines,
		StatusItems: cfg.Status.MaxItems, Logger: logger})
	if err != nil {
		d.T.Fatal(err)
	}
	d.T.Cleanup(db.DB.Close)
	return &Exporter{T: d.T, Set: poll.NewSet(folds, db.Source), Database: db, Logs: logs, Views: views}
}

// Collect runs one collection now (min_interval is tiny in the tests).
func (e *Exporter) Collect() {
	e.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e.Set.Refresh(ctx)
}

// Expect compares the named metric families with the exposition text.
func (e *Exporter) Expect(want string, names ...string) {
	e.T.Helper()
	if err := testutil.CollectAndCompare(e.Set, strings.NewReader(want), names...); err != nil {
		e.T.Fatal(err)
	}
}

// Value returns one sample's Value, failing if it is absent.
func (e *Exporter) Value(name string, labels map[string]string) float64 {
	e.T.Helper()
	m := Series(e.T, e.Set, name, labels)
	switch {
	case m == nil:
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	}
	e.T.Fatalf("no sample %s%v", name, labels)
	return 0
}

// Series returns the first Series of the metric whose labels include
// want, or nil.
func Series(t *testing.T, c prometheus.Collector, name string, want map[string]string) *dto.Metric {
	t.Helper()
	for _, mf := range testkit.Gather(t, c) {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			for k, v := range want {
				if got[k] != v {
					continue next
				}
			}
			return m
		}
	}
	return nil
}

const BaseConfig = `
databases:
  - name: orders
    dsn_env: WFX_TEST_DSN
    min_interval: 1ms
    late_commit_window: 60s
`

func HelpHeader(name string) string {
	m := catalog.MustGet(name)
	return "# HELP " + m.Name + " " + m.Help + "\n# TYPE " + m.Name + " " + string(m.Type) + "\n"
}

// NewConn opens another application session on the test database.
func NewConn(t *testing.T, d *DB) *pgx.Conn {
	t.Helper()
	return pgtest.Connect(t, d.Admin.Config().ConnString())
}

// Compare is expect returning the error, for "must be absent" checks.
func (e *Exporter) Compare(want string, names ...string) error {
	return testutil.CollectAndCompare(e.Set, strings.NewReader(want), names...)
}

// LintAndGather registers c, fails the test on any promlint problem, and
// returns the gathered families.
func LintAndGather(t *testing.T, c prometheus.Collector) []*dto.MetricFamily {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	return mfs
}

// ExpectCatalogFamilies checks every gathered family against the catalog
// (known name, same HELP, same label names) and returns the names served.
func ExpectCatalogFamilies(t *testing.T, mfs []*dto.MetricFamily) map[string]bool {
	t.Helper()
	served := map[string]bool{}
	for _, mf := range mfs {
		served[mf.GetName()] = true
		m, ok := catalog.Lookup(mf.GetName())
		if !ok {
			t.Errorf("served metric %s is not in the catalog", mf.GetName())
			continue
		}
		if mf.GetHelp() != m.Help {
			t.Errorf("%s HELP differs from the catalog", mf.GetName())
		}
		for _, s := range mf.GetMetric() {
			var names []string
			for _, l := range s.GetLabel() {
				names = append(names, l.GetName())
			}
			if !slices.Equal(slices.Sorted(slices.Values(names)), slices.Sorted(slices.Values(m.Labels))) {
				t.Errorf("%s labels %v, catalog says %v", mf.GetName(), names, m.Labels)
			}
		}
	}
	return served
}

// Lists returns the status page's Lists of the last collection by kind and
// table, without collecting.
func (e *Exporter) Lists() map[string]collectors.List {
	e.T.Helper()
	snap := e.Database.Source.Current()
	if snap == nil {
		e.T.Fatal("not collected")
	}
	out := map[string]collectors.List{}
	for _, l := range snap.Lists {
		k := l.Kind + "/" + l.Table
		if _, dup := out[k]; dup {
			e.T.Fatalf("two %s lists", k)
		}
		out[k] = l
	}
	return out
}

// WantList checks one list's total and its items, each rendered by show,
// in order (oldest first).
func WantList(t *testing.T, lists map[string]collectors.List, key string, total int, show func(collectors.Item) string, want ...string) {
	t.Helper()
	l, ok := lists[key]
	if !ok {
		t.Errorf("no list %s", key)
		return
	}
	var got []string
	for _, it := range l.Items {
		got = append(got, show(it))
	}
	if l.Total != total || l.More != (total > len(want)) || strings.Join(got, " | ") != strings.Join(want, " | ") {
		t.Errorf("%s: total %d (more %v), items\n  %s\nwant total %d, items\n  %s", key, l.Total, l.More,
			strings.Join(got, "\n  "), total, strings.Join(want, "\n  "))
	}
}

// Age renders an item's time and Age by the frozen database clock.
func Age(it collectors.Item) string {
	if it.Since == nil {
		return "no time"
	}
	return fmt.Sprintf("%s %.0fs", it.Since.Sub(T0), it.AgeSeconds)
}

// Sources is every source of a configuration built as the binary builds
// them (internal/sources' Manager): for what spans sources, such as a
// delivery between two databases.
type Sources struct {
	T       *testing.T
	Manager *sources.Manager
	Logs    *testkit.LogBuffer
}

// NewSources builds the sources of configYAML; env holds the environment
// variables its dsn_env keys name. The sources are closed when the test
// ends.
func NewSources(t *testing.T, configYAML string, env map[string]string) *Sources {
	t.Helper()
	for k, v := range env {
		t.Setenv(k, v)
	}
	cfg, err := config.Parse([]byte(configYAML))
	if err != nil {
		t.Fatal(err)
	}
	logs := &testkit.LogBuffer{}
	m := sources.New(sources.Options{Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if _, err := m.Apply(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		m.Close(ctx)
	})
	return &Sources{T: t, Manager: m, Logs: logs}
}

// Collect refreshes every source now (min_interval is tiny in the tests),
// phase by phase as a scrape does.
func (s *Sources) Collect() {
	s.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s.Manager.Set().Refresh(ctx)
}

// Expect compares the named metric families with the exposition text.
func (s *Sources) Expect(want string, names ...string) {
	s.T.Helper()
	if err := s.Compare(want, names...); err != nil {
		s.T.Fatal(err)
	}
}

// Compare is Expect returning the error.
func (s *Sources) Compare(want string, names ...string) error {
	return testutil.CollectAndCompare(s.Manager.Set(), strings.NewReader(want), names...)
}

// Value returns one sample's value (a gauge's or a counter's), failing if
// it is absent.
func (s *Sources) Value(name string, labels map[string]string) float64 {
	s.T.Helper()
	m := Series(s.T, s.Manager.Set(), name, labels)
	switch {
	case m == nil:
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	}
	s.T.Fatalf("no sample %s%v", name, labels)
	return 0
}

// Lists returns the status page's lists of the source of that kind and
// name, from its last collection, by kind.
func (s *Sources) Lists(kind, name string) map[string]collectors.List {
	s.T.Helper()
	for _, src := range s.Manager.Set().Sources() {
		if src.Kind() != kind || src.Name() != name {
			continue
		}
		snap := src.Current()
		if snap == nil {
			s.T.Fatalf("%s %s not collected", kind, name)
		}
		out := map[string]collectors.List{}
		for _, l := range snap.Lists {
			out[l.Kind] = l
		}
		return out
	}
	s.T.Fatalf("no source %s %s", kind, name)
	return nil
}
