//go:build !pgonly

package engine_test

// Real-engine tests of the Camunda collector: a Go test worker drives
// external tasks through every state on Camunda 7.24 and Operaton
// (test/harness/camundatest), and after each step the test asserts the
// exporter's metrics against what it did and against what the engine itself
// reports through the harness's independent REST client.
//
// One engine per flavor per test process: TestCamundaEngine starts them
// (both flavors in parallel, with basic auth on /engine-rest, so every
// scenario also exercises the exporter's credentials) and stops them when
// its subtests are done; the scenarios run in parallel on the shared engine,
// each with its own process key and topic. The request budget and the
// basic-auth checks run after the scenarios (a wrong password throttles the
// engine user for a few seconds, so it comes last).

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/workflow-exporter/workflow-exporter/blocks/correlate"
	"github.com/workflow-exporter/workflow-exporter/blocks/labellimit"
	"github.com/workflow-exporter/workflow-exporter/blocks/pgschema"
	"github.com/workflow-exporter/workflow-exporter/blocks/signature"
	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine/capability"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine/rest"
	"github.com/workflow-exporter/workflow-exporter/config"
	"github.com/workflow-exporter/workflow-exporter/internal/poll"
	"github.com/workflow-exporter/workflow-exporter/internal/sources"
	"github.com/workflow-exporter/workflow-exporter/sim/engineclient"
	"github.com/workflow-exporter/workflow-exporter/sim/faultproxy"
	"github.com/workflow-exporter/workflow-exporter/test/harness/camundatest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// camExporter is a Camunda source built exactly as the binary builds it.
type camExporter struct {
	t     *testing.T
	set   *poll.Set
	logs  *testkit.LogBuffer
	views *correlate.Registry // what the collector publishes for the joins
	// twin, when set, reads the same engine in engine-database mode: it
	// collects right after this one and must serve the same camunda_*
	// series with the same values, for the series twinOwns (scenarios run
	// in parallel on one engine, so other scenarios' series may change
	// between the two collections).
	twin     *camExporter
	twinOwns func(name string, labels map[string]string) bool
	// maxSpan is the longest time from the start of a collection to the
	// end of its twin's (see ageTolerance).
	maxSpan time.Duration
}

func newCamundaExporter(t *testing.T, yamlCfg string) *camExporter {
	t.Helper()
	return newCamundaExporterWith(t, yamlCfg, true)
}

// newCamundaExporterWith builds the source with the status page's reading
// on (as the binary does by default) or off (--web.disable-status).
func newCamundaExporterWith(t *testing.T, yamlCfg string, statusPage bool) *camExporter {
	t.Helper()
	cfg, err := config.Parse([]byte(yamlCfg))
	if err != nil {
		t.Fatal(err)
	}
	logs := &testkit.LogBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	folds := labellimit.NewStats()
	views := correlate.NewRegistry()
	statusItems := 0
	if statusPage {
		statusItems = cfg.Status.MaxItems
	}
	eng, err := sources.NewCamundaSource(cfg.Camunda[0], "camunda[0]", sources.CamundaOptions{Folds: folds, Views: views, StatusItems: statusItems, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Close)
	return &camExporter{t: t, set: poll.NewSet(folds, eng.Source), logs: logs, views: views}
}

func (e *camExporter) collect() {
	e.t.Helper()
	time.Sleep(2 * time.Millisecond) // past min_interval (1ms), so this is a new collection
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	start := time.Now()
	e.set.Refresh(ctx)
	if e.twin != nil {
		e.twin.collect()
		if v, _ := e.twin.get(catalog.CamundaUp, nil); v != 1 {
			e.t.Fatalf("engine-database mode: camunda_up %v; log:\n%s", v, e.twin.logs)
		}
		e.maxSpan = max(e.maxSpan, time.Since(start))
		sameCamundaSeries(e.t, e.set, e.twin.set, e.twinOwns, ageTolerance(e.maxSpan), false)
		sameStatusItems(e.t, e, e.twin, e.twinOwns)
	}
}

// ageTolerance is how far the two modes' ages (and idle times) may differ
// when the REST collection started span before the engine-database one
// ended: the REST mode reads the engine's clock from the Date header of GET
// /version at its start (up to dateLag behind),
// the engine-database mode the database clock at some point of its own
// collection, which ran after the REST one. Ages that count from an
// earlier collection's engine time (lock ages, idle workers) differ by the
// difference of two such gaps, so span is the longest of the exporter's
// collections so far. On an idle machine it is well under a second; under
// load (the race detector, other tests on the same two cores) it is longer,
// and so is the honest bound.
func ageTolerance(span time.Duration) float64 { return span.Seconds() + dateLag + 0.1 }

// dateLag is how far behind the engine's clock the Date header of its
// answer may be: truncated to the second, and Tomcat reuses the header it
// formatted for up to a second (FastHttpDateFormat), so nearly 2 s
// (measured: an age 1.34 s short on Camunda 7.20's Tomcat 10.1.10). The
// REST mode's ages are short by at most that, never long.
const dateLag = 2.0

// pastDateLag is how long a test waits for a new task, job or incident to
// age measurably: longer than dateLag, so that an age read against the
// Date header is above 0 too (1.5 s was not: an executable job read 0 s
// old on Camunda 7.19's Tomcat 9 in CI).
const pastDateLag = 2500 * time.Millisecond

// sameCamundaSeries checks that two exporters of one engine serve the same
// camunda_* series with the same values (a histogram's count, sum and every
// bucket), for the series whose labels own accepts; ages may differ by
// tolerance seconds (see ageTolerance).
//
// baselines: both exporters are new and their first collection is a
// baseline, read a late_commit_window back from each one's own clock (the
// Date header, then the database clock, a moment later). A log entry near
// that edge is in one window only, and the counters its key names at 0 are
// served by one exporter only; such a series is allowed, at 0 (a counted
// value never is: a baseline counts nothing).
func sameCamundaSeries(t *testing.T, rest, db prometheus.Collector, own func(string, map[string]string) bool, tolerance float64, baselines bool) {
	t.Helper()
	for _, d := range camundaSeriesDiff(t, rest, db, own, tolerance, baselines) {
		t.Error(d)
	}
}

// camundaSeriesDiff is what sameCamundaSeries finds different.
func camundaSeriesDiff(t *testing.T, rest, db prometheus.Collector, own func(string, map[string]string) bool, tolerance float64, baselines bool) []string {
	t.Helper()
	var diffs []string
	series := func(c prometheus.Collector) map[string]float64 {
		out := map[string]float64{}
		for _, mf := range testkit.Gather(t, c) {
			if !strings.HasPrefix(mf.GetName(), "camunda_") {
				continue
			}
			for _, m := range mf.GetMetric() {
				var ls []string
				labels := map[string]string{}
				for _, l := range m.GetLabel() {
					ls = append(ls, l.GetName()+"="+l.GetValue())
					labels[l.GetName()] = l.GetValue()
				}
				if !own(mf.GetName(), labels) {
					continue
				}
				key := mf.GetName() + "{" + strings.Join(ls, ",") + "}"
				if h := m.GetHistogram(); h != nil {
					out[key+"_count"] = float64(h.GetSampleCount())
					out[key+"_sum"] = h.GetSampleSum()
					for _, b := range h.GetBucket() {
						out[fmt.Sprintf("%s_bucket{le=%g}", key, b.GetUpperBound())] = float64(b.GetCumulativeCount())
					}
					continue
				}
				out[key] = m.GetGauge().GetValue() + m.GetCounter().GetValue()
			}
		}
		return out
	}
	a, b := series(rest), series(db)
	for k, va := range a {
		vb, ok := b[k]
		switch {
		case !ok && baselines && va == 0 && strings.HasSuffix(strings.SplitN(k, "{", 2)[0], "_total"):
			t.Logf("engine-database mode lacks %s (REST mode: 0): a key named by one baseline window only", k)
		case !ok:
			diffs = append(diffs, fmt.Sprintf("engine-database mode lacks %s (REST mode: %v)", k, va))
		case strings.Contains(k, "_age_seconds"), strings.Contains(k, "_idle_seconds"):
			if va-vb > tolerance || vb-va > tolerance {
				diffs = append(diffs, fmt.Sprintf("%s: REST mode %v, engine-database mode %v (tolerance %.1f s)", k, va, vb, tolerance))
			}
		case va != vb:
			diffs = append(diffs, fmt.Sprintf("%s: REST mode %v, engine-database mode %v", k, va, vb))
		}
	}
	for k, vb := range b {
		if _, ok := a[k]; !ok && baselines && vb == 0 && strings.HasSuffix(strings.SplitN(k, "{", 2)[0], "_total") {
			t.Logf("REST mode lacks %s (engine-database mode: 0): a key named by one baseline window only", k)
		} else if !ok {
			diffs = append(diffs, fmt.Sprintf("engine-database mode serves %s = %v, REST mode does not", k, vb))
		}
	}
	return diffs
}

// samples gathers every sample of one metric as labels -> value.
func (e *camExporter) samples(name string) []sample {
	e.t.Helper()
	return gatherSamples(e.t, e.set, name)
}

type sample struct {
	labels map[string]string
	value  float64
}

func gatherSamples(t *testing.T, c prometheus.Collector, name string) []sample {
	t.Helper()
	var out []sample
	for _, mf := range testkit.Gather(t, c) {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			s := sample{labels: map[string]string{}}
			for _, l := range m.GetLabel() {
				s.labels[l.GetName()] = l.GetValue()
			}
			switch {
			case m.Gauge != nil:
				s.value = m.GetGauge().GetValue()
			case m.Counter != nil:
				s.value = m.GetCounter().GetValue()
			}
			out = append(out, s)
		}
	}
	return out
}

// get returns the value of the sample whose labels include want.
func (e *camExporter) get(name string, want map[string]string) (float64, bool) {
	e.t.Helper()
next:
	for _, s := range e.samples(name) {
		for k, v := range want {
			if s.labels[k] != v {
				continue next
			}
		}
		return s.value, true
	}
	return 0, false
}

func (e *camExporter) must(name string, want map[string]string) float64 {
	e.t.Helper()
	v, ok := e.get(name, want)
	if !ok {
		e.t.Fatalf("no sample %s%v", name, want)
	}
	return v
}

func camundaConfig(url, topics string, extra string) string {
	return fmt.Sprintf(`
camunda:
  - name: e1
    url: %s
    min_interval: 1ms
    timeout: 80s
    request_timeout: 30s
    topics: [%s]
%s`, url, topics, extra)
}

// scenario is one sequence of worker actions on its own process and topic.
type scenario struct {
	t     *testing.T
	ctx   context.Context
	e     *camundatest.Engine
	u     engineUnderTest
	creds string // config lines with the exporter's credentials
	// dbConfig is the camunda[].database section of the engine's
	// database ("" when the engine runs without PostgreSQL).
	dbConfig string
	c        *engineclient.Client
	key      string
	topic    string
	exp      *camExporter
	labels   map[string]string
	// ages collects the oldest waiting age figures across versions
	// (scenarioOldestWaitingAge).
	ages *waitingAges
}

// engineUnderTest is a started engine with what the exporter needs to
// read it: REST credentials, and the engine database's URL and the JVM's
// time zone when it runs on PostgreSQL.
type engineUnderTest struct {
	e      *camundatest.Engine
	creds  string
	dbURL  string
	tzName string
}

// databaseConfig is the camunda[].database section for the engine's
// database.
func (u engineUnderTest) databaseConfig() string {
	return fmt.Sprintf("    database:\n      dsn: %s\n      time_zone: %s\n", u.dbURL, u.tzName)
}

// restAPI: the exporter reads the engine over its REST API (and, with a
// database, in engine-database mode beside it). CIB seven's test engine
// has no REST API the exporter may read (its /engine-rest is the test
// driver), so the exporter reads it from its database alone.
func (u engineUnderTest) restAPI() bool { return u.e.Flavor.RESTAPI() }

// config is the exporter's configuration of the engine: over REST (url
// and credentials, plus extra), or from its database alone (no url).
func (u engineUnderTest) config(topics, extra string) string {
	if u.restAPI() {
		return camundaConfig(u.e.BaseURL, topics, u.creds+extra)
	}
	return databaseAloneConfig(topics, u.databaseConfig()+"    flavor: "+string(u.e.Flavor.Product())+"\n"+extra)
}

// databaseAloneConfig is camundaConfig without url: the engine read from
// its database alone (extra holds the database section).
func databaseAloneConfig(topics, extra string) string {
	return fmt.Sprintf(`
camunda:
  - name: e1
    min_interval: 1ms
    timeout: 80s
    topics: [%s]
%s`, topics, extra)
}

// infoLabels are the labels camunda_engine_info must carry for the engine
// as the exporter reads it: over REST GET /version's version and the
// detected flavor; from the database alone the newest schema version and
// the flavor the tables tell (Operaton) or the configured one.
func (u engineUnderTest) infoLabels() map[string]string {
	if u.restAPI() {
		return map[string]string{"engine": "e1", "version": u.e.Version, "flavor": string(u.e.Flavor.Product())}
	}
	return map[string]string{"engine": "e1", "version": schemaVersion(u.e), "flavor": string(u.e.Flavor.Product())}
}

// schemaVersion is the newest ACT_GE_SCHEMA_LOG version the engine writes
// (measured: Camunda's own release, Operaton 1.0.3 7.24.0, CIB seven
// 2.0.0 7.23.0).
func schemaVersion(e *camundatest.Engine) string {
	switch e.Flavor {
	case camundatest.FlavorOperaton:
		return "7.24.0"
	case camundatest.FlavorCIBSeven:
		return "7.23.0"
	}
	return e.Version
}

// startTasks deploys the external task process of key on topic
// (engineclient.ExternalTaskProcess) and starts n instances of it: n open
// tasks on topic.
func startTasks(t *testing.T, ctx context.Context, c *engineclient.Client, key, topic string, n int) {
	t.Helper()
	if _, err := c.Deploy(ctx, key, map[string][]byte{key + ".bpmn": engineclient.ExternalTaskProcess(key, topic)}); err != nil {
		t.Fatal(err)
	}
	for range n {
		if _, err := c.StartProcess(ctx, key, "", nil); err != nil {
			t.Fatal(err)
		}
	}
}

func newScenario(t *testing.T, u engineUnderTest, bpmn func(key, topic string) []byte) *scenario {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	key := camundatest.UniqueName(t.Name())
	topic := key + ".topic"
	if bpmn == nil {
		bpmn = func(key, topic string) []byte { return engineclient.ExternalTaskProcess(key, topic) }
	}
	e, creds := u.e, u.creds
	c := e.Client()
	if _, err := c.Deploy(ctx, key, map[string][]byte{key + ".bpmn": bpmn(key, topic)}); err != nil {
		t.Fatal(err)
	}
	s := &scenario{t: t, ctx: ctx, e: e, u: u, creds: creds, c: c, key: key, topic: topic,
		exp:    newCamundaExporter(t, u.config(topic, "")),
		labels: map[string]string{"engine": "e1", "topic": topic}}
	if u.dbURL != "" && u.restAPI() {
		s.dbConfig = u.databaseConfig()
		s.exp.twin = newCamundaExporter(t, camundaConfig(e.BaseURL, topic, creds+u.databaseConfig()))
		// This scenario's topic and process, and the engine's own series
		// but those that other scenarios change (the engine-wide age of
		// executable jobs belongs to the AsyncJobs scenario, the history
		// cleanup's jobs to HistoryCleanup, which makes them between two
		// collections of any other scenario).
		s.exp.twinOwns = func(name string, l map[string]string) bool {
			return l["topic"] == topic || l["process_definition_key"] == key || l["flavor"] != "" ||
				len(l) == 1 && name != catalog.CamundaJobOldestExecutableAge && !strings.HasPrefix(name, "camunda_history_cleanup_")
		}
	}
	s.exp.collect() // baseline
	return s
}

func (s *scenario) start(n int) {
	s.t.Helper()
	for i := 0; i < n; i++ {
		if _, err := s.c.StartProcess(s.ctx, s.key, "", nil); err != nil {
			s.t.Fatal(err)
		}
	}
}

func (s *scenario) worker(id string) *engineclient.Worker { return engineclient.NewWorker(s.c, id) }

// lockOne starts one instance and has a worker named id fetch and lock its
// task for lock; the exporter sees it locked.
func (s *scenario) lockOne(id string, lock time.Duration) (*engineclient.Worker, engineclient.ExternalTask) {
	s.t.Helper()
	s.start(1)
	w := s.worker(id)
	tk := s.fetch(w, lock, 1)[0]
	s.states(map[string]int{vocab.StateLocked: 1})
	return w, tk
}

func (s *scenario) fetch(w *engineclient.Worker, lock time.Duration, n int) []engineclient.ExternalTask {
	s.t.Helper()
	tasks, err := w.FetchAndLock(s.ctx, s.topic, lock, n)
	if err != nil {
		s.t.Fatal(err)
	}
	if len(tasks) != n {
		s.t.Fatalf("worker %s fetched %d tasks, want %d", w.ID, len(tasks), n)
	}
	return tasks
}

func (s *scenario) ok(err error) {
	s.t.Helper()
	if err != nil {
		s.t.Fatal(err)
	}
}

// count is the engine's own answer to GET /external-task/count for the
// scenario's topic plus filters.
func (s *scenario) count(kv ...string) int {
	s.t.Helper()
	q := url.Values{"topicName": {s.topic}}
	for i := 0; i+1 < len(kv); i += 2 {
		q.Set(kv[i], kv[i+1])
	}
	n, err := s.c.Count(s.ctx, "/external-task/count", q)
	if err != nil {
		s.t.Fatal(err)
	}
	return n
}

// states collects and checks the partition: the six states equal want,
// they add up to the engine's open task count of the topic, and each group
// equals the engine's count for its filter.
func (s *scenario) states(want map[string]int) {
	s.t.Helper()
	s.exp.collect()
	got := map[string]int{}
	sum := 0
	for _, st := range vocab.ExternalTaskStates() {
		l := map[string]string{"engine": "e1", "topic": s.topic, "state": st}
		v := int(s.exp.must(catalog.CamundaExternalTasks, l))
		got[st] = v
		sum += v
	}
	for _, st := range vocab.ExternalTaskStates() {
		if got[st] != want[st] {
			s.t.Errorf("camunda_external_tasks: got %v, want %v", got, want)
			break
		}
	}
	engine := map[string]int{
		"total":     s.count(),
		"suspended": s.count("suspended", "true"),
		"exhausted": s.count("active", "true", "noRetriesLeft", "true"),
		"locked":    s.count("active", "true", "withRetriesLeft", "true", "locked", "true"),
		"fetchable": s.count("active", "true", "withRetriesLeft", "true", "notLocked", "true"),
	}
	check := func(what string, exporter, eng int) {
		s.t.Helper()
		if exporter != eng {
			s.t.Errorf("%s: exporter says %d, engine says %d (partition %v, engine %v)", what, exporter, eng, got, engine)
		}
	}
	check("sum of the six states vs open tasks", sum, engine["total"])
	check("suspended", got[vocab.StateSuspended], engine["suspended"])
	check("retries_exhausted vs active&noRetriesLeft", got[vocab.StateRetriesExhausted], engine["exhausted"])
	check("locked+retry_backoff vs active&withRetriesLeft&locked", got[vocab.StateLocked]+got[vocab.StateRetryBackoff], engine["locked"])
	check("waiting+lock_expired vs active&withRetriesLeft&notLocked", got[vocab.StateWaiting]+got[vocab.StateLockExpired], engine["fetchable"])
}

func (s *scenario) counter(name string) float64 {
	s.t.Helper()
	return s.exp.must(name, s.labels)
}

func (s *scenario) wantCounter(name string, want float64) {
	s.t.Helper()
	if got := s.counter(name); got != want {
		s.t.Errorf("%s%v = %v, want %v", name, s.labels, got, want)
	}
}

// historyCount is the engine's own history log count for the topic.
func (s *scenario) historyCount(kind string) int {
	s.t.Helper()
	n, err := s.c.Count(s.ctx, "/history/external-task-log/count", url.Values{"topicName": {s.topic}, kind: {"true"}})
	if err != nil {
		s.t.Fatal(err)
	}
	return n
}

func lockExpiry(t *testing.T, tk engineclient.ExternalTask) time.Time {
	t.Helper()
	ts, ok, err := tk.LockExpiration()
	if err != nil || !ok {
		t.Fatalf("task %s has no lock expiration (%v)", tk.ID, err)
	}
	return ts
}

// shortLock is the lock duration and retry timeout of tasks meant to lapse:
// long enough for a collection in both modes (REST, then engine database)
// to see them locked first on a loaded machine (the matrix's six JVMs, the
// race detector and other packages' tests on two cores: a collection pair
// took up to 5 s, and a backoff of 5 s ended within it), short enough to
// keep the suite fast.
const shortLock = 8 * time.Second

// subsetConcurrency bounds the version subset's scenarios running at once
// on one engine: each scenario's two exporters read every topic of the
// engine at every collection, so nine at once on four engines slowed
// collections past shortLock.
const subsetConcurrency = 3

// sleepPast waits until the engine's clock (the same machine's) is past ts.
func sleepPast(ts time.Time) { time.Sleep(time.Until(ts) + 1200*time.Millisecond) }

// engineTimeZone is the JVM time zone of the engines on PostgreSQL: not
// UTC and with daylight saving time, so a missing conversion shows.
const engineTimeZone = "Europe/Berlin"

func startCamundaEngine(t *testing.T, opts camundatest.Options) *camundatest.Engine {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a JVM")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	e, err := camundatest.Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Stop)
	t.Logf("%s engine %s started in %s", opts.Flavor, e.Version, e.StartupTime.Round(100*time.Millisecond))
	return e
}

// engineRun is one engine of TestCamundaEngine's version matrix and what
// it runs there (docs/camunda-states.md, "The version matrix").
type engineRun struct {
	flavor camundatest.Flavor
	// full: every scenario, then the checks that need the scenarios'
	// leftovers (tenants, the request budget, missing endpoints, basic
	// auth); otherwise the scenarios of versionScenarios, or for CIB seven
	// every scenario its test driver can drive (cibsevenScenarios).
	full bool
}

// runs says whether the run includes a scenario.
func (r engineRun) runs(name string) bool {
	switch {
	case r.full:
		return true
	case r.flavor == camundatest.FlavorCIBSeven:
		return name != "HistoryCleanup" // POST /history/cleanup: not in the test driver
	}
	return slices.Contains(versionScenarios, name)
}

// versionScenarios are the scenarios the older releases and CIB seven run:
// the states, lapses and redeliveries, failures, completions, BPMN errors,
// incidents, jobs and the join, plus the oldest waiting age compared across
// versions. The others (extendLock, first sightings, suspension, lock ages,
// durations, status lists, failure groups, history cleanup, process
// instances) read what those read, by the same code, and run on the newest
// release of each distribution.
var versionScenarios = []string{"WaitingLockedCompleteDrain", "FailureBackoffRefetch", "LockLapseRedelivery", "RetriesExhaustedIncident",
	"JobRetriesExhausted", "AsyncJobs", "BpmnErrors", "JoinCrashCases", "OldestWaitingAge"}

// engineRuns is the matrix: the newest Camunda 7 and Operaton in full,
// Camunda 7.22, 7.20 and 7.19 the versionScenarios, each in REST mode and
// engine-database mode side by side, and CIB seven, from its database
// alone, every scenario but history cleanup. CAMUNDATEST_FLAVORS narrows it (the newest releases
// then run in full, the others the subset).
func engineRuns() []engineRun {
	flavors := camundatest.KnownFlavors()
	if os.Getenv("CAMUNDATEST_FLAVORS") != "" {
		flavors = camundatest.Flavors()
	}
	var out []engineRun
	for _, f := range flavors {
		out = append(out, engineRun{flavor: f, full: slices.Contains(camundatest.AllFlavors(), f)})
	}
	return out
}

// engineOptions are how TestCamundaEngine starts an engine: on PostgreSQL
// in a zone that is not UTC, its job executor off (async jobs stay
// executable until a scenario runs one), REST flavors with basic auth.
func engineOptions(flavor camundatest.Flavor, dbURL string) camundatest.Options {
	o := camundatest.Options{Flavor: flavor, PostgresURL: dbURL, TimeZone: engineTimeZone}
	switch {
	case !flavor.RESTAPI():
		o.ExtraArgs = []string{"--job-executor=false"}
		return o
	case flavor == camundatest.FlavorCamunda719:
		// 7.19 deploys definitions without a time to live anyway, and
		// knows no enforceHistoryTimeToLive.
		o.ExtraArgs = []string{"--" + flavor.PropertyPrefix() + ".job-execution.enabled=false"}
	default:
		// Definitions without a history time to live deploy (the
		// HistoryCleanup scenario has one), as on engines upgraded from
		// before 7.20.
		o.ExtraArgs = []string{"--" + flavor.PropertyPrefix() + ".job-execution.enabled=false",
			"--" + flavor.PropertyPrefix() + ".generic-properties.properties.enforceHistoryTimeToLive=false"}
	}
	o.Username, o.Password = engineUser, enginePassword
	return o
}

func TestCamundaEngine(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a JVM per flavor")
	}
	t.Parallel()
	scenarios := []struct {
		name string
		bpmn func(key, topic string) []byte
		run  func(s *scenario)
	}{
		{"WaitingLockedCompleteDrain", nil, scenarioWaitingLocked},
		{"FailureBackoffRefetch", nil, scenarioBackoff},
		{"LockLapseRedelivery", nil, scenarioLapse},
		{"ExtendLock", nil, scenarioExtendLock},
		{"LateHolderAfterLapse", nil, scenarioLateHolder},
		{"RetriesExhaustedIncident", nil, scenarioExhausted},
		{"Suspended", nil, scenarioSuspended},
		{"FirstSightingOfFailedTasks", nil, scenarioFirstSighting},
		{"JobRetriesExhausted", timerProcess, scenarioJobs},
		{"JoinCrashCases", nil, scenarioJoinCrashCases},
		{"ProcessInstances", nil, scenarioProcessInstances},
		{"AsyncJobs", asyncProcess, scenarioAsyncJobs},
		{"Durations", nil, scenarioDurations},
		{"LockAgeAndIdleWorker", nil, scenarioLockAge},
		{"BpmnErrors", func(key, topic string) []byte { return engineclient.ErrorProcess(key, topic, key+"_interrupt") }, scenarioBpmnErrors},
		{"StatusLists", nil, scenarioStatusLists},
		{"FailureGroups", nil, scenarioFailureGroups},
		{"HistoryCleanup", ttlZeroProcess, scenarioHistoryCleanup},
		{"OldestWaitingAge", nil, scenarioOldestWaitingAge},
	}
	ages := &waitingAges{by: map[camundatest.Flavor]map[string]float64{}}
	t.Run("matrix", func(t *testing.T) {
		for _, run := range engineRuns() {
			flavor := run.flavor
			t.Run(string(flavor), func(t *testing.T) {
				t.Parallel()
				// The engine runs on PostgreSQL in a zone that is not UTC,
				// and every scenario is read in both modes (REST and
				// engine database) side by side: the values must be
				// identical.
				u := engineUnderTest{dbURL: pgtest.NewDatabase(t), tzName: engineTimeZone}
				e := startCamundaEngine(t, engineOptions(flavor, u.dbURL))
				u.e = e
				if flavor.RESTAPI() {
					u.creds = credentialsConfig(t, enginePassword)
				}
				// An engine in use has history: one task created and
				// completed before the exporters start, so REST mode finds
				// the history level (full) from the external task log at
				// its first collection, as engine-database mode reads it
				// from the engine's property (a fresh engine reads as
				// unknown over REST until its first task:
				// TestCamundaHistoryLevels).
				warmUpHistory(t, e)
				sc := func(t *testing.T, name string, bpmn func(key, topic string) []byte, fn func(*scenario)) {
					s := newScenario(t, u, bpmn)
					s.ages = ages
					fn(s)
				}
				t.Run("scenarios", func(t *testing.T) {
					if !run.full {
						// The subset's scenarios run in goroutines,
						// subsetConcurrency at a time, under this
						// engine's one place among the package's
						// parallel tests: they mostly wait for locks
						// to lapse.
						var wg sync.WaitGroup
						slots := make(chan struct{}, subsetConcurrency)
						for _, x := range scenarios {
							if !run.runs(x.name) {
								continue
							}
							wg.Add(1)
							go func() {
								defer wg.Done()
								slots <- struct{}{}
								defer func() { <-slots }()
								t.Run(x.name, func(t *testing.T) { sc(t, x.name, x.bpmn, x.run) })
							}()
						}
						wg.Wait()
						return
					}
					for _, x := range scenarios {
						t.Run(x.name, func(t *testing.T) {
							t.Parallel()
							sc(t, x.name, x.bpmn, x.run)
						})
					}
				})
				if u.restAPI() {
					t.Run("EngineDatabaseChecks", func(t *testing.T) { engineDatabaseChecks(t, u) })
				}
				t.Run("DatabaseAlone", func(t *testing.T) { engineDatabaseAlone(t, u) })
				if flavor == camundatest.FlavorCamunda {
					t.Run("InflightPlans", func(t *testing.T) { engineInflightPlans(t, u) })
				}
				if flavor == camundatest.FlavorCamunda720 {
					// The version without CREATE_TIME_ whose fetchable
					// tasks are each dated by ACT_HI_ACTINST.
					t.Run("OldestWaitingOnLargeHistory", func(t *testing.T) { engineOldestWaitingOnLargeHistory(t, u) })
				}
				if !run.full {
					return
				}
				// With the engine full of the scenarios' leftovers: the
				// request budget of docs/camunda-states.md, counted at a
				// proxy.
				t.Run("Tenants", func(t *testing.T) { engineTenants(t, u) })
				t.Run("RequestBudget", func(t *testing.T) { engineRequestBudget(t, e, u.creds) })
				t.Run("MissingEndpoints", func(t *testing.T) { engineMissingEndpoints(t, e, u.creds) })
				t.Run("BasicAuth", func(t *testing.T) { engineBasicAuth(t, e) })
			})
		}
	})
	ages.compare(t)
}

// startCountingProxy starts a proxy in front of the engine that counts
// requests per path (Counts); paths in missing answer 404, as an engine
// without the endpoint does.
func startCountingProxy(t *testing.T, e *camundatest.Engine, missing ...string) *faultproxy.Proxy {
	t.Helper()
	p := faultproxy.Start(t, e.BaseURL, faultproxy.Options{})
	p.Use(faultproxy.Hook{Request: func(w http.ResponseWriter, r *http.Request, endpoint string) bool {
		if slices.Contains(missing, endpoint) {
			http.NotFound(w, r)
			return true
		}
		return false
	}})
	return p
}

func engineRequestBudget(t *testing.T, e *camundatest.Engine, creds string) {
	p := startCountingProxy(t, e)
	// The budget without the status page's reading first; its extra
	// requests are checked at the end.
	x := newCamundaExporterWith(t, camundaConfig(p.URL, "", creds), false)
	x.collect()
	p.Counts()
	x.collect() // steady state: telemetry and definition keys cached
	got := p.Counts()
	if v, _ := x.get(catalog.CamundaUp, nil); v != 1 {
		t.Fatalf("camunda_up = %v; log:\n%s", v, x.logs)
	}
	topics := map[string]float64{} // open tasks per topic
	for _, s := range x.samples(catalog.CamundaExternalTasks) {
		topics[s.labels["topic"]] += s.value
	}
	T, open := len(topics), 0
	for _, n := range topics {
		if n > 0 {
			open++
		}
	}
	if T < 3 { // the scenarios leave tasks on at least the backoff, exhausted and suspended topics
		t.Fatalf("only %d topics reported after the scenarios", T)
	}
	total := 0
	for _, n := range got {
		total += n
	}
	t.Logf("%d topics (%d with open tasks): %d requests: %v", T, open, total, got)
	// The engine's own engine-wide counts decide which state groups the
	// reader lists engine-wide and which it counts per topic.
	c := e.Client()
	ctx := context.Background()
	engineCount := func(kv ...string) int {
		q := url.Values{}
		for i := 0; i+1 < len(kv); i += 2 {
			q.Set(kv[i], kv[i+1])
		}
		n, err := c.Count(ctx, "/external-task/count", q)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	perTopic, listed := 0, 0
	for _, n := range []int{engineCount("suspended", "true"), engineCount("active", "true", "noRetriesLeft", "true")} {
		switch {
		case n == 0:
		case n/rest.ListPageSize+1+n/rest.ItemsPerCountRequest < open:
			listed++
		default:
			perTopic += open
		}
	}
	exact := map[string]int{
		"/version": 1, "/external-task/topic-names": 1, "/history/external-task-log": 1,
		// 4 engine-wide state-group counts, one total per topic holding tasks
		"/external-task/count": 4 + open + perTopic,
		"/incident/count":      1,
		// camunda_jobs: no retries left, executable; one job log page
		"/job/count": 2, "/history/job-log": 1,
		"/process-definition/statistics": 1,
	}
	for path, want := range exact {
		if got[path] != want {
			t.Errorf("%s: %d requests, want %d", path, got[path], want)
		}
	}
	// Lists: the listed state groups, the locked and the lapsed tasks
	// engine-wide (one page each, all shorter than a page), and per topic
	// at most the oldest waiting task; one page each of incidents and jobs;
	// definition keys come from the cache.
	// (+1: the tasks out of retries, listed when a failedExternalTask
	// incident is open, for the incident age per topic.)
	if n, max := got["/external-task"], listed+2+open+1; n > max {
		t.Errorf("/external-task: %d list requests for %d topics with tasks, want at most %d", n, open, max)
	}
	// The BPMN error evidence costs requests only when new deletion
	// entries appeared: none in a steady collection.
	for path, max := range map[string]int{"/incident": 1, "/job": 2, "/process-definition": 0, "/telemetry/data": 0, "/history/activity-instance": 0} {
		if got[path] > max {
			t.Errorf("%s: %d requests, want at most %d", path, got[path], max)
		}
	}
	known := 0
	for path := range exact {
		known += got[path]
	}
	for _, path := range []string{"/external-task", "/incident", "/job", "/process-definition", "/telemetry/data", "/history/activity-instance"} {
		known += got[path]
	}
	if known != total {
		t.Errorf("requests to unexpected endpoints: %v", got)
	}

	// With the status page's reading (docs/status.md): while the engine
	// has failedExternalTask incidents (the StatusLists scenario leaves
	// one), one more incident list and one list of their tasks by id;
	// nothing else.
	failed := engineCount0(t, c, "/incident/count", url.Values{"incidentType": {"failedExternalTask"}})
	if failed == 0 {
		t.Fatal("no failedExternalTask incident left by the scenarios: the status reading is not measured")
	}
	xs := newCamundaExporterWith(t, camundaConfig(p.URL, "", creds), true)
	xs.collect()
	// The other scenarios run on this engine meanwhile: a lock that
	// lapses or a task that appears between the two collections changes
	// what one of them lists. The pair is measured again (at most three
	// times) until nothing moved in between.
	var extra map[string]int
	for attempt := 1; attempt <= 3; attempt++ {
		p.Counts()
		xs.collect()
		withStatus := p.Counts()
		x.collect()
		without := p.Counts()
		extra = map[string]int{}
		for path, n := range withStatus {
			if d := n - without[path]; d != 0 {
				extra[path] = d
			}
		}
		for path, n := range without {
			if _, ok := withStatus[path]; !ok {
				extra[path] = -n
			}
		}
		if len(extra) == 2 && extra["/incident"] == 1 && extra["/external-task"] == 1 {
			break
		}
		t.Logf("attempt %d: the status page's reading added %v requests", attempt, extra)
	}
	if len(extra) != 2 || extra["/incident"] != 1 || extra["/external-task"] != 1 {
		t.Errorf("the status page's reading added %v requests, want /incident 1 and /external-task 1 (%d failedExternalTask incidents)", extra, failed)
	}
	t.Logf("status page's reading: %v more requests per collection (%d failedExternalTask incidents)", extra, failed)
}

func engineCount0(t *testing.T, c *engineclient.Client, path string, q url.Values) int {
	t.Helper()
	n, err := c.Count(context.Background(), path, q)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func scenarioWaitingLocked(s *scenario) {
	// A configured topic with no task yet reports zeros.
	s.states(map[string]int{})
	info := s.u.infoLabels()
	if v := s.exp.must(catalog.CamundaEngineInfo, info); v != 1 {
		s.t.Errorf("camunda_engine_info%v = %v", info, v)
	}
	if age := s.exp.must(catalog.CamundaExternalTaskOldestWaitingAge, s.labels); age != 0 {
		s.t.Errorf("oldest waiting age with nothing waiting = %v, want 0", age)
	}
	s.start(4)
	time.Sleep(pastDateLag) // let the oldest task age measurably
	collected := time.Now()
	s.states(map[string]int{vocab.StateWaiting: 4})
	// The engine's own creation time of its oldest task: the creation
	// entries of the external task log, on every version (createTime is
	// in the REST API's answers from 7.24 only).
	var created time.Time
	for _, at := range s.createdAt() {
		if created.IsZero() || at.Before(created) {
			created = at
		}
	}
	// The exporter measures against the engine's Date header at the start
	// of the collection, up to dateLag behind: its age is up to that short
	// of the age at that moment, never longer than the age now. The engine
	// runs on this machine, so its clock is ours.
	lo, hi := collected.Sub(created).Seconds()-dateLag-0.2, time.Since(created).Seconds()+0.2
	age := s.exp.must(catalog.CamundaExternalTaskOldestWaitingAge, s.labels)
	if age < lo || age > hi || age <= 0 {
		s.t.Errorf("oldest waiting age = %.3f s, want between %.3f and %.3f by the engine's createTime", age, lo, hi)
	}

	w1, w2 := s.worker("w1"), s.worker("w2")
	t1 := s.fetch(w1, time.Minute, 2)
	t2 := s.fetch(w2, time.Minute, 1)
	s.states(map[string]int{vocab.StateWaiting: 1, vocab.StateLocked: 3})
	for w, want := range map[string]float64{"w1": 2, "w2": 1} {
		l := map[string]string{"engine": "e1", "topic": s.topic, "worker_id": w}
		if got := s.exp.must(catalog.CamundaExternalTasksLockedByWorker, l); got != want {
			s.t.Errorf("locked_by_worker %s = %v, want %v", w, got, want)
		}
		if n := s.count("workerId", w, "locked", "true"); float64(n) != want {
			s.t.Errorf("engine: %s holds %d locks, want %v", w, n, want)
		}
	}
	for _, tk := range t1 {
		s.ok(w1.Complete(s.ctx, tk.ID, nil))
	}
	s.states(map[string]int{vocab.StateWaiting: 1, vocab.StateLocked: 1})
	s.wantCounter(catalog.CamundaExternalTaskCompletions, 2)
	s.ok(w2.Complete(s.ctx, t2[0].ID, nil))
	last := s.fetch(w1, time.Minute, 1)
	s.ok(w1.Complete(s.ctx, last[0].ID, nil))
	// Drained: the topic keeps reporting zeros.
	s.states(map[string]int{})
	s.wantCounter(catalog.CamundaExternalTaskCompletions, float64(s.historyCount("successLog")))
	s.wantCounter(catalog.CamundaExternalTaskCompletions, 4)
	s.wantCounter(catalog.CamundaExternalTaskFailures, 0)
	if age := s.exp.must(catalog.CamundaExternalTaskOldestWaitingAge, s.labels); age != 0 {
		s.t.Errorf("oldest waiting age after drain = %v, want 0", age)
	}
	if ws := s.exp.samples(catalog.CamundaExternalTasksLockedByWorker); len(filterTopic(ws, s.topic)) != 0 {
		s.t.Errorf("locked_by_worker after drain: %v", filterTopic(ws, s.topic))
	}
	s.wantCounter(catalog.CamundaExternalTaskLockExpirations, 0)
	s.wantCounter(catalog.CamundaExternalTaskRedeliveries, 0)
}

func filterTopic(ss []sample, topic string) []sample {
	var out []sample
	for _, s := range ss {
		if s.labels["topic"] == topic {
			out = append(out, s)
		}
	}
	return out
}

func scenarioBackoff(s *scenario) {
	w1, tk := s.lockOne("w1", time.Minute)
	w2 := s.worker("w2")
	const retryTimeout = shortLock
	s.ok(w1.Failure(s.ctx, tk.ID, 2, retryTimeout, "boom"))
	// Engine: the failed task is still locked, by w1, with retries 2.
	if n := s.count("locked", "true", "workerId", "w1"); n != 1 {
		s.t.Fatalf("engine: locked by w1 after failure = %d, want 1 (backoff counts as locked)", n)
	}
	s.states(map[string]int{vocab.StateRetryBackoff: 1})
	s.wantCounter(catalog.CamundaExternalTaskFailures, 1)
	if got, _ := s.exp.get(catalog.CamundaExternalTasksLockedByWorker, map[string]string{"topic": s.topic, "worker_id": "w1"}); got != 0 {
		s.t.Errorf("a task in retry backoff counts as w1's lock: %v", got)
	}
	got, err := s.c.ExternalTask(s.ctx, tk.ID)
	s.ok(err)
	sleepPast(lockExpiry(s.t, got))
	// The backoff ended: the task waits to be fetched again; no lock lapsed.
	if n := s.count("notLocked", "true", "lockExpirationBefore", engineclient.FormatTime(time.Now())); n != 1 {
		s.t.Fatalf("engine: tasks with a past lock expiration = %d, want 1", n)
	}
	s.states(map[string]int{vocab.StateWaiting: 1})
	s.wantCounter(catalog.CamundaExternalTaskLockExpirations, 0)
	// Fetched again (by another worker) after the backoff: locked, and not a
	// redelivery.
	s.fetch(w2, time.Minute, 1)
	s.states(map[string]int{vocab.StateLocked: 1})
	s.wantCounter(catalog.CamundaExternalTaskRedeliveries, 0)
	if v := s.exp.must(catalog.CamundaExternalTasksLockedByWorker, map[string]string{"topic": s.topic, "worker_id": "w2"}); v != 1 {
		s.t.Errorf("locked_by_worker w2 = %v, want 1", v)
	}
	// Fails again: back to backoff.
	s.ok(w2.Failure(s.ctx, tk.ID, 1, shortLock, "boom again"))
	s.states(map[string]int{vocab.StateRetryBackoff: 1})
	s.wantCounter(catalog.CamundaExternalTaskFailures, 2)
	if n := s.historyCount("failureLog"); n != 2 {
		s.t.Errorf("engine failure log = %d, want 2", n)
	}
	// A worker that fails without decrementing retries, with the same
	// message: the task's fields look like a re-fetch, the failure log says
	// it failed.
	got, err = s.c.ExternalTask(s.ctx, tk.ID)
	s.ok(err)
	sleepPast(lockExpiry(s.t, got))
	s.fetch(w1, time.Minute, 1)
	s.states(map[string]int{vocab.StateLocked: 1})
	s.ok(w1.Failure(s.ctx, tk.ID, 1, time.Minute, "boom again"))
	after, err := s.c.ExternalTask(s.ctx, tk.ID)
	s.ok(err)
	if after.Retries == nil || *after.Retries != 1 || after.ErrorMessage == nil || *after.ErrorMessage != "boom again" {
		s.t.Fatalf("engine: retries %v, message %v after the same failure", after.Retries, after.ErrorMessage)
	}
	s.states(map[string]int{vocab.StateRetryBackoff: 1})
	s.wantCounter(catalog.CamundaExternalTaskFailures, 3)
	s.wantCounter(catalog.CamundaExternalTaskRedeliveries, 0)
}

func scenarioLapse(s *scenario) {
	s.start(2)
	w1, w2 := s.worker("w1"), s.worker("w2")
	tk := s.fetch(w1, shortLock, 1)[0]
	s.states(map[string]int{vocab.StateWaiting: 1, vocab.StateLocked: 1})
	sleepPast(lockExpiry(s.t, tk))
	if n := s.count("notLocked", "true", "workerId", "w1"); n != 1 {
		s.t.Fatalf("engine: lapsed tasks still naming w1 = %d, want 1", n)
	}
	s.states(map[string]int{vocab.StateWaiting: 1, vocab.StateLockExpired: 1})
	s.wantCounter(catalog.CamundaExternalTaskLockExpirations, 1)
	s.wantCounter(catalog.CamundaExternalTaskRedeliveries, 0)
	// Counted once however often it is seen lapsed.
	s.states(map[string]int{vocab.StateWaiting: 1, vocab.StateLockExpired: 1})
	s.wantCounter(catalog.CamundaExternalTaskLockExpirations, 1)
	// Another worker fetches it (fetchAndLock takes the lapsed task and the
	// waiting one): a redelivery for the lapsed one only.
	got := s.fetch(w2, time.Minute, 2)
	ids := map[string]bool{got[0].ID: true, got[1].ID: true}
	if !ids[tk.ID] {
		s.t.Fatalf("w2 did not get the lapsed task back")
	}
	s.states(map[string]int{vocab.StateLocked: 2})
	s.wantCounter(catalog.CamundaExternalTaskRedeliveries, 1)
	s.wantCounter(catalog.CamundaExternalTaskLockExpirations, 1)
	view, ok := s.exp.views.Get("e1")
	if !ok {
		s.t.Fatal("no in-flight view published")
	}
	found := false
	for _, vt := range view.Tasks {
		if vt.ID == tk.ID {
			found = true
			if vt.State != correlate.Locked || !vt.Redelivered || vt.WorkerID != "w2" || vt.ProcessInstanceID != tk.ProcessInstanceID || vt.ActivityID != "task_1" {
				s.t.Errorf("view of the redelivered task: %+v", vt)
			}
		}
	}
	if !found {
		s.t.Errorf("redelivered task %s not in the published view", tk.ID)
	}
	if v := s.exp.must(catalog.CamundaExternalTasksLockedByWorker, map[string]string{"topic": s.topic, "worker_id": "w2"}); v != 2 {
		s.t.Errorf("locked_by_worker w2 = %v, want 2", v)
	}
	// The original holder may still complete the redelivered task (the
	// engine only checks the worker id): here w2 completes both.
	for _, x := range got {
		s.ok(w2.Complete(s.ctx, x.ID, nil))
	}
	s.states(map[string]int{})
	s.wantCounter(catalog.CamundaExternalTaskCompletions, 2)
	s.wantCounter(catalog.CamundaExternalTaskRedeliveries, 1)
}

func scenarioExtendLock(s *scenario) {
	w1, tk := s.lockOne("w1", shortLock)
	s.ok(w1.ExtendLock(s.ctx, tk.ID, time.Minute))
	sleepPast(lockExpiry(s.t, tk)) // past the original lock
	if n := s.count("locked", "true", "workerId", "w1"); n != 1 {
		s.t.Fatalf("engine: w1's extended lock = %d, want 1", n)
	}
	s.states(map[string]int{vocab.StateLocked: 1})
	s.wantCounter(catalog.CamundaExternalTaskLockExpirations, 0)
	s.wantCounter(catalog.CamundaExternalTaskRedeliveries, 0)
}

// scenarioLateHolder checks the engine facts behind rules L2 and L6: a lock
// that lapsed cannot be extended, but its holder may still report failure
// (or complete): that is a failure, not a redelivery.
func scenarioLateHolder(s *scenario) {
	w1, tk := s.lockOne("w1", shortLock)
	sleepPast(lockExpiry(s.t, tk))
	s.states(map[string]int{vocab.StateLockExpired: 1})
	s.wantCounter(catalog.CamundaExternalTaskLockExpirations, 1)
	var apiErr *engineclient.APIError
	if err := w1.ExtendLock(s.ctx, tk.ID, time.Minute); !errors.As(err, &apiErr) || apiErr.Status != http.StatusBadRequest {
		s.t.Fatalf("engine: extendLock of a lapsed lock: %v, want HTTP 400", err)
	}
	s.ok(w1.Failure(s.ctx, tk.ID, 1, time.Minute, "late failure"))
	s.states(map[string]int{vocab.StateRetryBackoff: 1})
	s.wantCounter(catalog.CamundaExternalTaskRedeliveries, 0)
	s.wantCounter(catalog.CamundaExternalTaskLockExpirations, 1)
	s.wantCounter(catalog.CamundaExternalTaskFailures, 1)
}

func scenarioExhausted(s *scenario) {
	s.start(2)
	w1 := s.worker("w1")
	tks := s.fetch(w1, time.Minute, 2)
	s.ok(w1.Failure(s.ctx, tks[0].ID, 0, 0, "gave up"))
	// Retries 0 with a retry timeout: still locked by the engine's SQL, but
	// retries_exhausted wins.
	s.ok(w1.Failure(s.ctx, tks[1].ID, 0, time.Minute, "gave up too"))
	if n := s.count("noRetriesLeft", "true", "locked", "true"); n != 1 {
		s.t.Fatalf("engine: locked with no retries = %d, want 1", n)
	}
	s.states(map[string]int{vocab.StateRetriesExhausted: 2})
	s.wantCounter(catalog.CamundaExternalTaskFailures, 2)
	inc := map[string]string{"engine": "e1", "incident_type": "failedExternalTask", "process_definition_key": s.key, "activity_id": "task_1"}
	n, err := s.c.Count(s.ctx, "/incident/count", url.Values{"incidentType": {"failedExternalTask"}, "processDefinitionKeyIn": {s.key}})
	s.ok(err)
	if got := s.exp.must(catalog.CamundaIncidents, inc); got != 2 || n != 2 {
		s.t.Errorf("camunda_incidents%v = %v, engine counts %d, want 2", inc, got, n)
	}
	if age := s.exp.must(catalog.CamundaIncidentOldestAge, map[string]string{"incident_type": "failedExternalTask"}); age < 0 {
		s.t.Errorf("oldest incident age %v", age)
	}
	// The topic's oldest incident, joined with its task by the incident's
	// configuration, against the engine's own incident timestamps.
	incs, err := s.c.Incidents(s.ctx, url.Values{"incidentType": {"failedExternalTask"}, "processDefinitionKeyIn": {s.key}})
	s.ok(err)
	var oldest time.Time
	for _, in := range incs {
		ts, err := engineclient.ParseTime(in.IncidentTimestamp)
		s.ok(err)
		if oldest.IsZero() || ts.Before(oldest) {
			oldest = ts
		}
	}
	time.Sleep(pastDateLag)
	collected := time.Now()
	s.exp.collect()
	lo, hi := collected.Sub(oldest).Seconds()-dateLag-0.2, time.Since(oldest).Seconds()+0.2
	if age := s.counter(catalog.CamundaExternalTaskOldestIncidentAge); age < lo || age > hi || age <= 0 {
		s.t.Errorf("oldest incident age of the topic = %.3f s, want between %.3f and %.3f by the engine's incidentTimestamp", age, lo, hi)
	}
	// Raising retries resolves the incidents; the series stays, at 0.
	for _, tk := range tks {
		s.ok(w1.SetRetries(s.ctx, tk.ID, 1))
	}
	s.exp.collect()
	if got := s.exp.must(catalog.CamundaIncidents, inc); got != 0 {
		s.t.Errorf("camunda_incidents after resolution = %v, want 0", got)
	}
	s.wantCounter(catalog.CamundaExternalTaskOldestIncidentAge, 0)
}

func scenarioSuspended(s *scenario) {
	s.start(3)
	w1 := s.worker("w1")
	s.fetch(w1, time.Minute, 1)
	s.states(map[string]int{vocab.StateWaiting: 2, vocab.StateLocked: 1})
	s.ok(s.c.SetProcessDefinitionSuspended(s.ctx, s.key, true, true))
	s.states(map[string]int{vocab.StateSuspended: 3})
	s.ok(s.c.SetProcessDefinitionSuspended(s.ctx, s.key, false, true))
	s.states(map[string]int{vocab.StateWaiting: 2, vocab.StateLocked: 1})
}

// scenarioFirstSighting: an exporter that starts while tasks are already in
// backoff or lapsed reads them by the first-sighting rules.
func scenarioFirstSighting(s *scenario) {
	s.start(3)
	w1 := s.worker("w1")
	tks := s.fetch(w1, shortLock, 3)
	s.ok(w1.Failure(s.ctx, tks[0].ID, 2, time.Minute, "in backoff")) // locked, retries 2
	s.ok(w1.Failure(s.ctx, tks[1].ID, 2, 0, "backoff over"))         // lapsed at once, retries 2
	sleepPast(lockExpiry(s.t, tks[2]))                               // tks[2]: a lapsed worker lock
	fresh := newCamundaExporter(s.t, s.u.config(s.topic, ""))
	s.exp = fresh
	s.states(map[string]int{vocab.StateRetryBackoff: 1, vocab.StateWaiting: 1, vocab.StateLockExpired: 1})
	// Nothing is counted on a first sighting.
	s.wantCounter(catalog.CamundaExternalTaskLockExpirations, 0)
	s.wantCounter(catalog.CamundaExternalTaskFailures, 0)
}

// timerProcess adapts engineclient.TimerProcess to the scenarios' process
// builder (the topic is unused: the process has no external task).
func timerProcess(key, _ string) []byte { return engineclient.TimerProcess(key) }

func scenarioJobs(s *scenario) {
	s.start(2)
	var jobs []struct{ ID string }
	s.ok(s.c.Get(s.ctx, "/job", url.Values{"processDefinitionKey": {s.key}, "maxResults": {"10"}}, &jobs))
	if len(jobs) != 2 {
		s.t.Fatalf("engine: %d timer jobs, want 2", len(jobs))
	}
	l := map[string]string{"engine": "e1", "process_definition_key": s.key}
	s.exp.collect()
	if v, ok := s.exp.get(catalog.CamundaJobsRetriesExhausted, l); ok && v != 0 {
		s.t.Errorf("jobs retries exhausted before = %v", v)
	}
	s.ok(s.c.Do(s.ctx, http.MethodPut, "/job/"+jobs[0].ID+"/retries", map[string]any{"retries": 0}, nil))
	n, err := s.c.Count(s.ctx, "/job/count", url.Values{"processDefinitionKey": {s.key}, "noRetriesLeft": {"true"}})
	s.ok(err)
	s.exp.collect()
	if v := s.exp.must(catalog.CamundaJobsRetriesExhausted, l); v != 1 || n != 1 {
		s.t.Errorf("camunda_jobs_retries_exhausted = %v, engine counts %d, want 1", v, n)
	}
	ni, err := s.c.Count(s.ctx, "/incident/count", url.Values{"incidentType": {"failedJob"}, "processDefinitionKeyIn": {s.key}})
	s.ok(err)
	inc := map[string]string{"incident_type": "failedJob", "process_definition_key": s.key, "activity_id": "wait"}
	if v := s.exp.must(catalog.CamundaIncidents, inc); v != float64(ni) || ni != 1 {
		s.t.Errorf("camunda_incidents%v = %v, engine counts %d, want 1", inc, v, ni)
	}
	s.ok(s.c.Do(s.ctx, http.MethodPut, "/job/"+jobs[0].ID+"/retries", map[string]any{"retries": 3}, nil))
	s.exp.collect()
	if v := s.exp.must(catalog.CamundaJobsRetriesExhausted, l); v != 0 {
		s.t.Errorf("camunda_jobs_retries_exhausted after retries restored = %v, want 0 (kept)", v)
	}
}

// scenarioDurations: camunda_external_task_duration_seconds observes each
// success once, creation to success by the history log's own timestamps,
// retries included; a task ended by a BPMN error is not observed.
func scenarioDurations(s *scenario) {
	s.start(3)
	time.Sleep(1200 * time.Millisecond)
	w1 := s.worker("w1")
	tks := s.fetch(w1, time.Minute, 3)
	s.ok(w1.Complete(s.ctx, tks[0].ID, nil))
	s.ok(w1.Failure(s.ctx, tks[1].ID, 1, 0, "retry me"))
	s.ok(w1.BpmnError(s.ctx, tks[2].ID, "REJECTED", "no"))
	s.exp.collect()
	s.fetch(w1, time.Minute, 1) // the failed task again, after its backoff of 0
	time.Sleep(600 * time.Millisecond)
	s.ok(w1.Complete(s.ctx, tks[1].ID, nil))
	s.exp.collect()
	s.exp.collect() // read again: nothing twice
	// The engine's own log: creation and success timestamps per task.
	var log []struct {
		ExternalTaskID          string
		Timestamp               string
		CreationLog, SuccessLog bool
	}
	s.ok(s.c.Get(s.ctx, "/history/external-task-log", url.Values{"topicName": {s.topic}, "maxResults": {"100"}}, &log))
	created, succeeded := map[string]time.Time{}, map[string]time.Time{}
	for _, e := range log {
		ts, err := engineclient.ParseTime(e.Timestamp)
		s.ok(err)
		switch {
		case e.CreationLog:
			created[e.ExternalTaskID] = ts
		case e.SuccessLog:
			succeeded[e.ExternalTaskID] = ts
		}
	}
	if len(succeeded) != 2 {
		s.t.Fatalf("engine: %d success entries, want 2", len(succeeded))
	}
	var wantSum float64
	wantBuckets := map[float64]uint64{}
	for id, done := range succeeded {
		d := done.Sub(created[id]).Seconds()
		wantSum += d
		for _, ub := range config.DefaultDurationBuckets() {
			if d <= ub {
				wantBuckets[ub]++
			} else {
				wantBuckets[ub] += 0
			}
		}
	}
	n, sum, buckets := histogram(s.t, s.exp, catalog.CamundaExternalTaskDuration, s.labels)
	if n != 2 || math.Abs(sum-wantSum) > 1e-9 || fmt.Sprint(buckets) != fmt.Sprint(wantBuckets) {
		s.t.Errorf("durations: count %d, sum %v, buckets %v; the engine's log says 2, %v, %v", n, sum, buckets, wantSum, wantBuckets)
	}
	if sum < 1.8 {
		s.t.Errorf("durations sum %v s: the tasks were at least 1.2 s and 1.8 s old", sum)
	}
}

// scenarioLockAge: camunda_external_task_oldest_lock_age_seconds counts
// from the first collection that saw the lock, through extendLock, by the
// engine's clock; camunda_external_task_worker_idle_seconds counts from the
// worker's last completion; both reset or disappear when the lock goes.
func scenarioLockAge(s *scenario) {
	s.start(2)
	w1 := s.worker("w1")
	tk := s.fetch(w1, 20*time.Second, 1)[0]
	first := time.Now()
	s.exp.collect()
	w1l := map[string]string{"topic": s.topic, "worker_id": "w1"}
	if age := s.counter(catalog.CamundaExternalTaskOldestLockAge); age != 0 {
		s.t.Errorf("oldest lock age at first sight = %v, want 0", age)
	}
	if idle := s.exp.must(catalog.CamundaExternalTaskWorkerIdle, w1l); idle != 0 {
		s.t.Errorf("worker idle at first sight = %v, want 0", idle)
	}
	time.Sleep(2500 * time.Millisecond)
	s.ok(w1.ExtendLock(s.ctx, tk.ID, 20*time.Second))
	second := time.Now()
	s.exp.collect()
	// The REST mode's engine clock is the Date header, truncated to the
	// second: a difference of two is off by up to 1 s.
	elapsed := second.Sub(first).Seconds()
	for _, v := range []float64{s.counter(catalog.CamundaExternalTaskOldestLockAge), s.exp.must(catalog.CamundaExternalTaskWorkerIdle, w1l)} {
		if v < elapsed-dateLag-0.2 || v > elapsed+dateLag+0.2+float64(time.Since(second).Seconds()) {
			s.t.Errorf("lock age / idle %v s after extendLock, want about %.1f s", v, elapsed)
		}
	}
	// w1 completes the other task: progress, its idleness starts again;
	// the lock on tk keeps its age.
	other := s.fetch(w1, time.Minute, 1)[0]
	s.ok(w1.Complete(s.ctx, other.ID, nil))
	s.exp.collect()
	if idle := s.exp.must(catalog.CamundaExternalTaskWorkerIdle, w1l); idle > dateLag+0.5 {
		s.t.Errorf("worker idle right after a completion = %v, want at most 1 s (the Date header's truncation)", idle)
	}
	if age := s.counter(catalog.CamundaExternalTaskOldestLockAge); age < elapsed-dateLag-0.2 {
		s.t.Errorf("oldest lock age %v after w1 completed another task, want at least %.1f", age, elapsed-dateLag-0.2)
	}
	// The lock goes: no lock, no idle worker.
	s.ok(w1.Complete(s.ctx, tk.ID, nil))
	s.exp.collect()
	if age := s.counter(catalog.CamundaExternalTaskOldestLockAge); age != 0 {
		s.t.Errorf("oldest lock age with no lock = %v, want 0", age)
	}
	if ws := filterTopic(s.exp.samples(catalog.CamundaExternalTaskWorkerIdle), s.topic); len(ws) != 0 {
		s.t.Errorf("idle workers with no lock held: %v", ws)
	}
}

// scenarioBpmnErrors: of six external tasks ended without a completion,
// camunda_external_task_bpmn_errors_total counts the three BPMN errors (an
// uncaught one, one caught by a boundary event, one caught by an event
// subprocess), not the cancellation, the modification or the interrupting
// message, although the engine logs all six as deletions.
func scenarioBpmnErrors(s *scenario) {
	esp := s.key + "_esp"
	_, err := s.c.Deploy(s.ctx, esp, map[string][]byte{esp + ".bpmn": engineclient.ErrorEventSubprocessProcess(esp, s.topic)})
	s.ok(err)
	pis := map[string]string{}
	for _, how := range []string{"uncaught", "caught", "cancelled", "modified", "interrupted"} {
		pi, err := s.c.StartProcess(s.ctx, s.key, how, nil)
		s.ok(err)
		pis[pi.ID] = how
	}
	pi, err := s.c.StartProcess(s.ctx, esp, "", nil)
	s.ok(err)
	pis[pi.ID] = "event subprocess"
	w1 := s.worker("w1")
	for _, tk := range s.fetch(w1, time.Minute, 6) {
		id := tk.ProcessInstanceID
		switch pis[id] {
		case "uncaught":
			s.ok(w1.BpmnError(s.ctx, tk.ID, "NOT_MODELLED", "no boundary event catches this"))
		case "caught":
			s.ok(w1.BpmnError(s.ctx, tk.ID, "CAUGHT", "rejected"))
		case "event subprocess":
			s.ok(w1.BpmnError(s.ctx, tk.ID, "ESP", "rejected"))
		case "cancelled":
			s.ok(s.c.Do(s.ctx, http.MethodDelete, "/process-instance/"+id, nil, nil))
		case "modified":
			var tree struct {
				ChildActivityInstances []struct{ ID string }
			}
			s.ok(s.c.Get(s.ctx, "/process-instance/"+id+"/activity-instances", nil, &tree))
			s.ok(s.c.Do(s.ctx, http.MethodPost, "/process-instance/"+id+"/modification", map[string]any{"instructions": []map[string]any{
				{"type": "cancel", "activityInstanceId": tree.ChildActivityInstances[0].ID},
				{"type": "startBeforeActivity", "activityId": "after"}}}, nil))
		case "interrupted":
			s.ok(s.c.Do(s.ctx, http.MethodPost, "/message", map[string]any{"messageName": s.key + "_interrupt", "processInstanceId": id}, nil))
		default:
			s.t.Fatalf("task of an unknown process instance %s", id)
		}
	}
	s.exp.collect()
	if n := s.historyCount("deletionLog"); n != 6 {
		s.t.Fatalf("engine: %d deletion entries, want 6", n)
	}
	s.wantCounter(catalog.CamundaExternalTaskBpmnErrors, 3)
	s.wantCounter(catalog.CamundaExternalTaskCompletions, 0)
	s.wantCounter(catalog.CamundaExternalTaskFailures, 0)
	s.exp.collect() // the same entries again: each once
	s.wantCounter(catalog.CamundaExternalTaskBpmnErrors, 3)
	s.states(map[string]int{})
}

// asyncProcess adapts engineclient.AsyncProcess to the scenarios' process
// builder (the topic is unused: the process has no external task).
func asyncProcess(key, _ string) []byte { return engineclient.AsyncProcess(key) }

// scenarioAsyncJobs: with the job executor off, async continuations stay
// executable: camunda_jobs_executable counts them as the engine's
// executable&active query does, and camunda_job_oldest_executable_age_seconds
// grows from the oldest one's creation (they have no due date). Executing
// them one by one (POST /job/{id}/execute) writes job log entries: each
// failure and success counts once, as the engine's job log counts them.
func scenarioAsyncJobs(s *scenario) {
	if own := s.exp.twinOwns; own != nil {
		// No other scenario makes jobs executable: the engine-wide age is
		// this scenario's.
		s.exp.twinOwns = func(name string, l map[string]string) bool {
			return own(name, l) || name == catalog.CamundaJobOldestExecutableAge
		}
	}
	key := map[string]string{"engine": "e1", "process_definition_key": s.key}
	engine := map[string]string{"engine": "e1"}
	jobCount := func(kv ...string) int {
		s.t.Helper()
		q := url.Values{"processDefinitionKey": {s.key}}
		for i := 0; i+1 < len(kv); i += 2 {
			q.Set(kv[i], kv[i+1])
		}
		n, err := s.c.Count(s.ctx, "/job/count", q)
		s.ok(err)
		return n
	}
	logCount := func(kind string) int {
		s.t.Helper()
		n, err := s.c.Count(s.ctx, "/history/job-log/count", url.Values{"processDefinitionKey": {s.key}, kind: {"true"}})
		s.ok(err)
		return n
	}
	want := func(name string, labels map[string]string, v float64) {
		s.t.Helper()
		if got := s.exp.must(name, labels); got != v {
			s.t.Errorf("%s%v = %v, want %v", name, labels, got, v)
		}
	}
	for _, fail := range []bool{false, false, true} {
		_, err := s.c.StartProcess(s.ctx, s.key, "", map[string]any{"fail": fail})
		s.ok(err)
	}
	var jobs []struct {
		ID, CreateTime string
		DueDate        *string
	}
	s.ok(s.c.Get(s.ctx, "/job", url.Values{"processDefinitionKey": {s.key}, "sortBy": {"jobId"}, "sortOrder": {"asc"}, "maxResults": {"10"}}, &jobs))
	if len(jobs) != 3 {
		s.t.Fatalf("engine: %d jobs, want 3", len(jobs))
	}
	var oldest time.Time
	for _, j := range jobs {
		if j.DueDate != nil {
			s.t.Fatalf("engine: an async continuation with due date %s", *j.DueDate)
		}
		created, err := engineclient.ParseTime(j.CreateTime)
		s.ok(err)
		if oldest.IsZero() || created.Before(oldest) {
			oldest = created
		}
	}
	time.Sleep(pastDateLag) // let the oldest job age measurably
	collected := time.Now()
	s.exp.collect()
	if n := jobCount("executable", "true", "active", "true"); n != 3 {
		s.t.Fatalf("engine: %d executable jobs, want 3", n)
	}
	want(catalog.CamundaJobsExecutable, key, 3)
	// The engine runs on this machine: its clock is ours. The REST mode's
	// engine clock is the Date header, up to dateLag behind.
	lo, hi := collected.Sub(oldest).Seconds()-dateLag-0.2, time.Since(oldest).Seconds()+0.2
	if age := s.exp.must(catalog.CamundaJobOldestExecutableAge, engine); age < lo || age > hi || age <= 0 {
		s.t.Errorf("oldest executable job age = %.3f s, want between %.3f and %.3f by the engine's createTime", age, lo, hi)
	}

	// Run them: the two that succeed, and the failing one once.
	var failing string
	for _, j := range jobs {
		resp, err := s.c.Raw(s.ctx, http.MethodPost, "/job/"+j.ID+"/execute", nil, "")
		s.ok(err)
		switch {
		case resp.Status == http.StatusNoContent:
		case resp.Status >= 400 && strings.Contains(string(resp.Body), "missingBean"):
			failing = j.ID
		default:
			s.t.Fatalf("engine: POST /job/%s/execute: HTTP %d %s", j.ID, resp.Status, resp.Body)
		}
	}
	if failing == "" {
		s.t.Fatal("no job failed")
	}
	s.exp.collect()
	if f, ok := logCount("failureLog"), logCount("successLog"); f != 1 || ok != 2 {
		s.t.Fatalf("engine: job log failures %d, successes %d; want 1, 2", f, ok)
	}
	want(catalog.CamundaJobFailures, key, 1)
	want(catalog.CamundaJobSuccesses, key, 2)
	// The failed job lost one retry and, with no due date, stays executable.
	want(catalog.CamundaJobsExecutable, key, float64(jobCount("executable", "true", "active", "true")))
	want(catalog.CamundaJobsExecutable, key, 1)
	// Fails again: counted once, however often the log is read.
	resp, err := s.c.Raw(s.ctx, http.MethodPost, "/job/"+failing+"/execute", nil, "")
	s.ok(err)
	if resp.Status < 400 {
		s.t.Fatalf("engine: the failing job ran: HTTP %d", resp.Status)
	}
	s.exp.collect()
	s.exp.collect()
	want(catalog.CamundaJobFailures, key, 2)
	want(catalog.CamundaJobFailures, key, float64(logCount("failureLog")))
	// Grouped by the exception message's signature: the two failures are
	// one cause.
	var failures []struct{ JobExceptionMessage string }
	s.ok(s.c.Get(s.ctx, "/history/job-log", url.Values{"processDefinitionKey": {s.key}, "failureLog": {"true"}}, &failures))
	if len(failures) != 2 || failures[0].JobExceptionMessage == "" {
		s.t.Fatalf("engine: job log failures %+v, want 2 with a message", failures)
	}
	sig := signature.Of(failures[0].JobExceptionMessage)
	if signature.Of(failures[1].JobExceptionMessage) != sig {
		s.t.Errorf("the engine's two messages of one failure have different signatures: %q, %q", failures[0].JobExceptionMessage, failures[1].JobExceptionMessage)
	}
	want(catalog.CamundaJobFailuresByError, map[string]string{"engine": "e1", "process_definition_key": s.key, "error": sig}, 2)
	// Out of retries: not executable any more, counted as exhausted; with
	// no executable job left on the engine, the age is 0.
	s.ok(s.c.Do(s.ctx, http.MethodPut, "/job/"+failing+"/retries", map[string]any{"retries": 0}, nil))
	s.exp.collect()
	want(catalog.CamundaJobsRetriesExhausted, key, 1)
	want(catalog.CamundaJobsExecutable, key, 0)
	if n, err := s.c.Count(s.ctx, "/job/count", url.Values{"executable": {"true"}, "active": {"true"}}); err != nil || n != 0 {
		s.t.Fatalf("engine: %d executable jobs left (%v), want 0", n, err)
	}
	want(catalog.CamundaJobOldestExecutableAge, engine, 0)
}

// engineMissingEndpoints: an engine version without an endpoint one
// collector needs (a proxy answers 404 for it) fails that collector with an
// error naming the endpoint and the status; the engine is up and the other
// collectors report.
func engineMissingEndpoints(t *testing.T, e *camundatest.Engine, creds string) {
	for path, collector := range map[string]string{
		"/process-definition/statistics": vocab.CollectorCamundaProcesses,
		"/job/count":                     vocab.CollectorCamundaJobs,
		"/history/job-log":               vocab.CollectorCamundaJobs,
		"/external-task/topic-names":     vocab.CollectorCamunda,
	} {
		t.Run(strings.ReplaceAll(strings.Trim(path, "/"), "/", "_"), func(t *testing.T) {
			p := startCountingProxy(t, e, path)
			x := newCamundaExporter(t, camundaConfig(p.URL, "", creds))
			x.collect()
			if v := x.must(catalog.CamundaUp, nil); v != 1 {
				t.Fatalf("camunda_up = %v", v)
			}
			for _, c := range []string{vocab.CollectorCamunda, vocab.CollectorCamundaJobs, vocab.CollectorCamundaProcesses} {
				want := 1.0
				if c == collector {
					want = 0
				}
				if v := x.must(catalog.ExporterCollectorUp, map[string]string{"collector": c}); v != want {
					t.Errorf("collector %s up = %v, want %v", c, v, want)
				}
			}
			if msg := "GET " + path + ": HTTP 404 Not Found"; !strings.Contains(x.logs.String(), msg) {
				t.Errorf("the log does not say %q:\n%s", msg, x.logs)
			}
		})
	}
}

// scenarioProcessInstances: camunda_process_instances counts the running
// instances of every version of the key, suspended ones included, as the
// engine's own process instance count does.
func scenarioProcessInstances(s *scenario) {
	l := map[string]string{"engine": "e1", "process_definition_key": s.key}
	want := func(n int) {
		s.t.Helper()
		s.exp.collect()
		engine, err := s.c.Count(s.ctx, "/process-instance/count", url.Values{"processDefinitionKey": {s.key}})
		s.ok(err)
		if got := s.exp.must(catalog.CamundaProcessInstances, l); got != float64(n) || engine != n {
			s.t.Errorf("camunda_process_instances = %v, the engine counts %d, want %d", got, engine, n)
		}
	}
	want(0) // deployed, no instance yet
	s.start(3)
	want(3)
	// A second version of the same key: its instances add up under the key.
	_, err := s.c.Deploy(s.ctx, s.key, map[string][]byte{s.key + ".bpmn": engineclient.ExternalTaskProcess(s.key, s.topic, s.topic+".2")})
	s.ok(err)
	pi, err := s.c.StartProcess(s.ctx, s.key, "", nil)
	s.ok(err)
	want(4)
	s.ok(s.c.SetProcessInstanceSuspended(s.ctx, pi.ID, true))
	want(4)
	s.ok(s.c.Do(s.ctx, http.MethodDelete, "/process-instance/"+pi.ID, nil, nil))
	want(3)
	tasks := s.fetch(s.worker("w1"), time.Minute, 3)
	for _, tk := range tasks {
		s.ok(s.worker("w1").Complete(s.ctx, tk.ID, nil))
	}
	want(0)
}

// engineDatabaseChecks: what `check` relies on in engine-database mode, on
// the real engine's database: the first collection's checks pass with the
// engine's time zone; the history query is served by no index until the
// one of deploy/sql/camunda is created; a wrong time_zone fails the
// collectors that read the database with an error that names the key and
// the engine's offset (never a silent shift of every lock by hours); a
// table one collector cannot read fails that collector only.
func engineDatabaseChecks(t *testing.T, u engineUnderTest) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg, err := config.Parse([]byte(camundaConfig(u.e.BaseURL, "", u.creds+u.databaseConfig())))
	if err != nil {
		t.Fatal(err)
	}
	ed, err := engine.OpenSchemaCheck(cfg.Camunda[0], "camunda[0]", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ed.DB.Close()
	if err := ed.Verify(ctx); err != nil {
		t.Fatalf("verify with the engine's time zone: %v", err)
	}
	var hist pgschema.Requirements
	for _, r := range capability.DatabaseRequirements("", "camunda[0].database") {
		if r.Table == "act_hi_ext_task_log" {
			hist = r
		}
	}
	served := func() string {
		t.Helper()
		var ix string
		if err := ed.DB.ReadOnly(ctx, func(ctx context.Context, tx pgx.Tx) (err error) {
			ix, err = pgschema.ServingIndex(ctx, tx, hist.Table, hist.Queries[0].SQL, hist.Queries[0].Args...)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return ix
	}
	if ix := served(); ix != "" {
		t.Fatalf("history query served by %q on an engine that creates no index on timestamp_", ix)
	}
	conn := pgtest.Connect(t, u.dbURL)
	pgtest.Exec(t, conn, hist.Indexes[0].CreateStatement(hist.Table))
	if ix := served(); ix != hist.Indexes[0].Name {
		t.Fatalf("history query served by %q after creating %s", ix, hist.Indexes[0].Name)
	}

	// The role of deploy/sql/camunda/002_exporter_role.sql may read all the
	// exporter needs, and no more: the engine reads as up through it.
	roleSQL, err := os.ReadFile(testkit.Path(t, "deploy/sql/camunda/002_exporter_role.sql"))
	if err != nil {
		t.Fatal(err)
	}
	role := "wfx_engine_" + strings.NewReplacer("-", "_", ".", "_").Replace(strings.ToLower(string(u.e.Flavor)))
	roleSQL = []byte(strings.NewReplacer("workflow_exporter_engine", role, "change-me", "s3cret").Replace(string(roleSQL)))
	if _, err := conn.Exec(ctx, string(roleSQL)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = conn.Exec(context.Background(), "DROP OWNED BY "+role+"; DROP ROLE "+role)
	})
	roleURL, err := url.Parse(u.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	roleURL.User = url.UserPassword(role, "s3cret")
	asRole := strings.Replace(u.databaseConfig(), u.dbURL, roleURL.String(), 1)
	r := newCamundaExporter(t, camundaConfig(u.e.BaseURL, "", u.creds+asRole))
	r.collect()
	if v, _ := r.get(catalog.CamundaUp, nil); v != 1 {
		t.Fatalf("camunda_up = %v through the role of 002_exporter_role.sql; log:\n%s", v, r.logs)
	}
	for _, c := range []string{vocab.CollectorCamunda, vocab.CollectorCamundaJobs, vocab.CollectorCamundaProcesses, vocab.CollectorCamundaHistory} {
		if v, _ := r.get(catalog.ExporterCollectorUp, map[string]string{"collector": c}); v != 1 {
			t.Errorf("collector %s up = %v through the role of 002_exporter_role.sql; log:\n%s", c, v, r.logs)
		}
	}
	// Read from the database alone through the role: the engine's
	// version from its schema log, which the role may read.
	alone := newCamundaExporter(t, databaseAloneConfig("", asRole))
	alone.collect()
	if v, ok := alone.get(catalog.CamundaEngineInfo, map[string]string{"version": schemaVersion(u.e)}); !ok || v != 1 {
		t.Errorf("without url through the role of 002_exporter_role.sql: camunda_engine_info %v, want version %s; log:\n%s",
			alone.samples(catalog.CamundaEngineInfo), schemaVersion(u.e), alone.logs)
	}
	if _, err := conn.Exec(ctx, "REVOKE SELECT ON act_ru_job FROM "+role); err != nil {
		t.Fatal(err)
	}
	r.collect()
	// The jobs collector fails alone, naming the table; the engine answers
	// and its external-task series stay.
	jobsUp, _ := r.get(catalog.ExporterCollectorUp, map[string]string{"collector": "camunda_jobs"})
	tasksUp, _ := r.get(catalog.ExporterCollectorUp, map[string]string{"collector": "camunda"})
	if up, _ := r.get(catalog.CamundaUp, nil); up != 1 || jobsUp != 0 || tasksUp != 1 || !strings.Contains(r.logs.String(), "act_ru_job") {
		t.Fatalf("without SELECT on act_ru_job: camunda_up = %v, collector_up camunda_jobs %v, camunda %v; log:\n%s", up, jobsUp, tasksUp, r.logs)
	}

	wrong := strings.Replace(u.databaseConfig(), "time_zone: "+u.tzName, "time_zone: UTC", 1)
	x := newCamundaExporter(t, camundaConfig(u.e.BaseURL, "", u.creds+wrong))
	x.collect()
	// The engine answers GET /version (camunda_up 1), but nothing is read
	// from its database with the wrong zone.
	for _, name := range []string{"camunda", "camunda_jobs"} {
		if v, _ := x.get(catalog.ExporterCollectorUp, map[string]string{"collector": name}); v != 0 {
			t.Fatalf("collector %s up = %v with time_zone UTC on an engine in %s", name, v, u.tzName)
		}
	}
	for _, name := range []string{catalog.CamundaExternalTasks, catalog.CamundaJobsRetriesExhausted, catalog.CamundaEngineInfo} {
		if s := x.samples(name); len(s) != 0 {
			t.Fatalf("data series served with a wrong time zone: %v", s)
		}
	}
	logs := x.logs.String()
	if !strings.Contains(logs, "camunda[0].database.time_zone") || !regexp.MustCompile(`UTC offset \+0[12]:00`).MatchString(logs) {
		t.Fatalf("the error does not name time_zone and the engine's offset:\n%s", logs)
	}
}

// warmUpHistory creates and completes one external task, so the engine's
// external task log is not empty.
func warmUpHistory(t *testing.T, e *camundatest.Engine) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := e.Client()
	key := camundatest.UniqueName(t.Name() + "_warmup")
	if _, err := c.Deploy(ctx, key, map[string][]byte{key + ".bpmn": engineclient.ExternalTaskProcess(key, key)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.StartProcess(ctx, key, "", nil); err != nil {
		t.Fatal(err)
	}
	w := engineclient.NewWorker(c, "warmup")
	tasks, err := w.FetchAndLock(ctx, key, time.Minute, 1)
	if err != nil || len(tasks) != 1 {
		t.Fatalf("warm-up: fetched %d tasks (%v), want 1", len(tasks), err)
	}
	if err := w.Complete(ctx, tasks[0].ID, nil); err != nil {
		t.Fatal(err)
	}
}
