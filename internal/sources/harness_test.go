package sources

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/collectors/correlate"
	"github.com/workflow-exporter/workflow-exporter/collectors/labellimit"
	"github.com/workflow-exporter/workflow-exporter/config"
	"github.com/workflow-exporter/workflow-exporter/internal/poll"
	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// t0 is the frozen database clock at the start of every test.
var t0 = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

// testDB is a fresh database with the reference schema and the exporter's
// indexes, and a frozen clock for the exporter's sessions.
//
// The clock: the exporter's connections set search_path to
// "testclock, pg_catalog, public", so the unqualified now() in its queries
// resolves to testclock.now(), which reads a one-row table the test sets.
// Nothing in the exporter knows about it: production sessions resolve
// now() to pg_catalog.now(). Ages and windows are therefore computed with
// the database clock, exactly, and tests can move that clock.
type testDB struct {
	t           *testing.T
	admin       *pgx.Conn
	exporterDSN string
}

func newTestDB(t *testing.T, withDuplicateCount bool) *testDB {
	t.Helper()
	url := pgtest.NewDatabase(t)
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
INSERT INTO testclock.clock VALUES ('`+t0.Format(time.RFC3339)+`');
CREATE FUNCTION testclock.now() RETURNS timestamptz LANGUAGE sql STABLE AS 'SELECT t FROM testclock.clock';`)
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	return &testDB{t: t, admin: conn, exporterDSN: url + sep + "search_path=testclock,pg_catalog,public"}
}

// exec runs SQL as the application would (its own session, real now()).
func (d *testDB) exec(sql string, args ...any) { d.t.Helper(); pgtest.Exec(d.t, d.admin, sql, args...) }

// setClock moves the exporter's database clock to t0 plus offset.
func (d *testDB) setClock(offset time.Duration) {
	d.t.Helper()
	d.exec("UPDATE testclock.clock SET t = $1", t0.Add(offset))
}

// at formats t0 plus seconds as a timestamptz literal argument.
func at(seconds float64) time.Time { return t0.Add(time.Duration(seconds * float64(time.Second))) }

// atOrNull is at(*seconds), or NULL for a column when seconds is nil.
func atOrNull(seconds *float64) any {
	if seconds == nil {
		return nil
	}
	return at(*seconds)
}

// exporter is a database source built exactly as the binary builds it.
type exporter struct {
	views *correlate.Registry
	t     *testing.T
	set   *poll.Set
	db    *DatabaseSource
	logs  *testkit.LogBuffer
}

func (d *testDB) newExporter(configYAML string) *exporter {
	d.t.Helper()
	d.t.Setenv("WFX_TEST_DSN", d.exporterDSN)
	cfg, err := config.Parse([]byte(configYAML))
	if err != nil {
		d.t.Fatal(err)
	}
	logs := &testkit.LogBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	folds := labellimit.NewStats()
	views := correlate.NewRegistry()
	var engines []string
	for _, e := range cfg.Camunda {
		engines = append(engines, e.Name)
	}
	db, err := NewDatabase(cfg.Databases[0], "databases[0]", DatabaseOptions{Folds: folds, Views: views, Engines: engines,
		StatusItems: cfg.Status.MaxItems, Logger: logger})
	if err != nil {
		d.t.Fatal(err)
	}
	d.t.Cleanup(db.DB.Close)
	return &exporter{t: d.t, set: poll.NewSet(folds, db.Source), db: db, logs: logs, views: views}
}

// collect runs one collection now (min_interval is tiny in the tests).
func (e *exporter) collect() {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e.set.Refresh(ctx)
}

// expect compares the named metric families with the exposition text.
func (e *exporter) expect(want string, names ...string) {
	e.t.Helper()
	if err := testutil.CollectAndCompare(e.set, strings.NewReader(want), names...); err != nil {
		e.t.Fatal(err)
	}
}

// value returns one sample's value, failing if it is absent.
func (e *exporter) value(name string, labels map[string]string) float64 {
	e.t.Helper()
	m := series(e.t, e.set, name, labels)
	switch {
	case m == nil:
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	}
	e.t.Fatalf("no sample %s%v", name, labels)
	return 0
}

// series returns the first series of the metric whose labels include
// want, or nil.
func series(t *testing.T, c prometheus.Collector, name string, want map[string]string) *dto.Metric {
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

const baseConfig = `
databases:
  - name: orders
    dsn_env: WFX_TEST_DSN
    min_interval: 1ms
    late_commit_window: 60s
`

func helpHeader(name string) string {
	m := catalog.MustGet(name)
	return "# HELP " + m.Name + " " + m.Help + "\n# TYPE " + m.Name + " " + string(m.Type) + "\n"
}

// newTestConn opens another application session on the test database.
func newTestConn(t *testing.T, d *testDB) *pgx.Conn {
	t.Helper()
	return pgtest.Connect(t, d.admin.Config().ConnString())
}

// expect2 is expect returning the error, for "must be absent" checks.
func (e *exporter) expect2(want string, names ...string) error {
	return testutil.CollectAndCompare(e.set, strings.NewReader(want), names...)
}

// lintAndGather registers c, fails the test on any promlint problem, and
// returns the gathered families.
func lintAndGather(t *testing.T, c prometheus.Collector) []*dto.MetricFamily {
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

// expectCatalogFamilies checks every gathered family against the catalog
// (known name, same HELP, same label names) and returns the names served.
func expectCatalogFamilies(t *testing.T, mfs []*dto.MetricFamily) map[string]bool {
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
