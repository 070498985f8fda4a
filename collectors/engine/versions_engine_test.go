//go:build !pgonly

package engine_test

import (
	"context"
	"fmt"
	"math"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine/capability"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine/enginedb"
	"github.com/workflow-exporter/workflow-exporter/sim/engineclient"
	"github.com/workflow-exporter/workflow-exporter/test/harness/camundatest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// The version matrix's own checks (docs/camunda-states.md, "The version
// matrix"): the oldest waiting age of one scenario compared across the
// engine versions, and the engine read from its database alone.

// createdAt is the engine's own record of when the scenario's tasks were
// created: their creation entries in the external task log (history level
// full, on every version; the REST API's createTime only from 7.24), by
// task id.
func (s *scenario) createdAt() map[string]time.Time {
	s.t.Helper()
	var log []struct {
		ExternalTaskID string
		Timestamp      string
	}
	s.ok(s.c.Get(s.ctx, "/history/external-task-log", url.Values{"topicName": {s.topic}, "creationLog": {"true"}, "maxResults": {"100"}}, &log))
	out := map[string]time.Time{}
	for _, e := range log {
		ts, err := engineclient.ParseTime(e.Timestamp)
		s.ok(err)
		out[e.ExternalTaskID] = ts
	}
	return out
}

// waitingAges are the oldest waiting ages scenarioOldestWaitingAge measured
// on each engine, less the age the engine's own creation entries give at
// the collection's start: per flavor and mode.
type waitingAges struct {
	mu sync.Mutex
	by map[camundatest.Flavor]map[string]float64
}

func (w *waitingAges) record(f camundatest.Flavor, mode string, deviation float64) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.by[f] == nil {
		w.by[f] = map[string]float64{}
	}
	w.by[f][mode] = deviation
}

// compare: every engine's figure deviates from the engine's own creation
// time as 7.24's does, within the REST mode's Date header truncation and a
// loaded machine's collection time.
func (w *waitingAges) compare(t *testing.T) {
	w.mu.Lock()
	defer w.mu.Unlock()
	ref, ok := w.by[camundatest.FlavorCamunda]
	if !ok {
		t.Log("no Camunda 7.24 figure to compare the versions with (CAMUNDATEST_FLAVORS leaves it out)")
		return
	}
	var flavors []string
	for f := range w.by {
		flavors = append(flavors, string(f))
	}
	sort.Strings(flavors)
	for _, f := range flavors {
		for mode, d := range w.by[camundatest.Flavor(f)] {
			r, ok := ref[mode]
			if !ok {
				r = ref["engine database"]
			}
			t.Logf("oldest waiting age on %s (%s): %+.3f s from the engine's creation entries (7.24: %+.3f s)", f, mode, d, r)
			if math.Abs(d-r) > 2 {
				t.Errorf("oldest waiting age on %s (%s) deviates %+.3f s from the engine's creation entries, 7.24's %+.3f s", f, mode, d, r)
			}
		}
	}
}

// scenarioOldestWaitingAge: three tasks created a second or more apart, the
// oldest locked; camunda_external_task_oldest_waiting_age_seconds is the
// second one's age by the engine's own creation entry, exact
// (camunda_engine_capability), in every mode, on every version: 7.24 from
// createTime, 7.22 from the activity instance of the task it sorts first,
// 7.20 and 7.19 from the oldest unfinished activity instance of the listed
// tasks, engine-database mode from CREATE_TIME_ or ACT_HI_ACTINST. The
// deviation is recorded for the comparison across versions.
func scenarioOldestWaitingAge(s *scenario) {
	for range 3 {
		s.start(1)
		time.Sleep(1100 * time.Millisecond)
	}
	created := s.createdAt()
	if len(created) != 3 {
		s.t.Fatalf("engine: %d creation entries, want 3", len(created))
	}
	type task struct {
		id string
		at time.Time
	}
	var tasks []task
	for id, at := range created {
		tasks = append(tasks, task{id, at})
	}
	sort.Slice(tasks, func(i, j int) bool { return tasks[i].at.Before(tasks[j].at) })
	// The oldest one fetched: the second is the oldest waiting.
	got := s.fetch(s.worker("w1"), time.Minute, 1)
	if got[0].ID != tasks[0].id {
		// fetchAndLock takes any waiting task: before 7.22 it cannot
		// sort by creation. The waiting ones are the others.
		s.t.Logf("fetchAndLock took %s, not the oldest %s", got[0].ID, tasks[0].id)
	}
	var oldest time.Time
	for _, tk := range tasks {
		if tk.id != got[0].ID && (oldest.IsZero() || tk.at.Before(oldest)) {
			oldest = tk.at
		}
	}
	time.Sleep(pastDateLag)
	start := time.Now()
	s.exp.collect()
	want := start.Sub(oldest).Seconds()
	check := func(mode string, e *camExporter) {
		s.t.Helper()
		age := e.must(catalog.CamundaExternalTaskOldestWaitingAge, s.labels)
		// Over REST the engine's clock is the Date header, truncated to
		// the second; engine-database mode's is the database clock, read
		// after the REST collection (the twin collects second).
		if d := age - want; d < -dateLag-0.2 || d > dateLag+0.2+time.Since(start).Seconds() {
			s.t.Errorf("%s: oldest waiting age %.3f s, the engine's creation entry says %.3f s", mode, age, want)
		}
		if v, _ := e.get(catalog.CamundaEngineCapability, map[string]string{"metric": catalog.CamundaExternalTaskOldestWaitingAge, "support": "exact"}); v != 1 {
			s.t.Errorf("%s: camunda_engine_capability does not call the oldest waiting age exact: %v", mode, e.samples(catalog.CamundaEngineCapability))
		}
		s.ages.record(s.e.Flavor, mode, age-want)
	}
	mode := "REST"
	if !s.u.restAPI() {
		mode = "engine database"
	}
	check(mode, s.exp)
	if s.exp.twin != nil {
		check("engine database", s.exp.twin)
	}
	s.states(map[string]int{vocab.StateWaiting: 2, vocab.StateLocked: 1})
}

// engineDatabaseAlone: the engine read from its database alone (no url), as
// embedded engines without a REST API are: camunda_up 1 from the database,
// camunda_engine_info with the schema version and the flavor the tables
// tell (Operaton) or "unknown" (Camunda 7, CIB seven: their tables are
// alike) unless camunda[].flavor names it, and every other camunda_*
// series of the scenarios' topics as in the mode the matrix reads it in
// (REST, or with flavor configured for CIB seven). The exporter never
// calls the engine's /engine-rest (CIB seven's is the test driver).
func engineDatabaseAlone(t *testing.T, u engineUnderTest) {
	alone := compareDatabaseAlone(t, u, "")
	if v, _ := alone.get(catalog.CamundaUp, nil); v != 1 {
		t.Fatalf("camunda_up = %v read from the database alone; log:\n%s", v, alone.logs)
	}
	flavor := "unknown"
	if u.e.Flavor == camundatest.FlavorOperaton {
		flavor = "operaton"
	}
	info := map[string]string{"version": schemaVersion(u.e), "flavor": flavor, "history_level": "full"}
	if v, ok := alone.get(catalog.CamundaEngineInfo, info); !ok || v != 1 {
		t.Errorf("camunda_engine_info%v missing: %v", info, alone.samples(catalog.CamundaEngineInfo))
	}
	for _, line := range []string{"GET /version", "telemetry"} {
		if strings.Contains(alone.logs.String(), line) {
			t.Errorf("the exporter without url asked the REST API (%q in its log):\n%s", line, alone.logs)
		}
	}
	// With topics folded into "other" (label_value_limit 2 of the
	// scenarios' topics), engine-database mode lists only the reported
	// topics' in-flight tasks, as REST mode does.
	folded := compareDatabaseAlone(t, u, "    label_value_limit: 2\n")
	if _, ok := folded.get(catalog.CamundaExternalTasks, map[string]string{"topic": "other"}); !ok {
		t.Errorf("label_value_limit 2 folded no topic into \"other\": %v", folded.samples(catalog.CamundaExternalTasks))
	}
}

// compareDatabaseAlone compares the engine read from its database alone
// with the mode the matrix reads it in, both configured with extra, and
// returns the exporter that read the database. Tasks change between the
// two collections only where the scenarios left locks or retry backoffs
// to end; the scenarios are done, so every series is the same but the
// engine's identity and ages (two clocks, one after the other). A lock or
// backoff that ends in the moment between the two collections changes a
// state's count: the comparison is made again with two new exporters, at
// most three times, and fails on the last one's differences. Without the
// REST API the history cleanup's switch is not known; the table sizes are
// engine-database mode's own.
func compareDatabaseAlone(t *testing.T, u engineUnderTest, extra string) *camExporter {
	const attempts = 3
	for attempt := 1; ; attempt++ {
		alone := newCamundaExporter(t, databaseAloneConfig("", u.databaseConfig()+extra))
		reference := newCamundaExporter(t, u.config("", extra))
		reference.collect()
		alone.collect()
		diffs := camundaSeriesDiff(t, reference.set, alone.set, func(name string, _ map[string]string) bool {
			return name != catalog.CamundaEngineInfo && name != catalog.CamundaHistoryCleanupEnabled && name != catalog.CamundaEngineTableBytes
		}, ageTolerance(10*time.Second), true)
		if len(diffs) == 0 {
			return alone
		}
		if attempt == attempts {
			for _, d := range diffs {
				t.Errorf("%s%s", extra, d)
			}
			return alone
		}
		t.Logf("attempt %d: REST mode and engine-database mode differ (a lock or backoff ended between the two collections?), again:\n%s", attempt, strings.Join(diffs, "\n"))
	}
}

// engineOldestWaitingOnLargeHistory: on an engine without CREATE_TIME_ (7.20): with
// an ACT_HI_ACTINST of historyRows finished instances (made by SQL in the
// engine's own table) and waiting tasks, the counts query of
// engine-database mode dates the fetchable tasks by primary key lookups of
// ACT_HI_ACTINST, never a scan of it (EXPLAIN), and still serves the
// topic's age.
func engineOldestWaitingOnLargeHistory(t *testing.T, u engineUnderTest) {
	const historyRows = 100_000
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c := u.e.Client()
	key := camundatest.UniqueName(t.Name())
	topic := key + ".topic"
	startTasks(t, ctx, c, key, topic, 20)
	conn := pgtest.Connect(t, u.dbURL)
	started := time.Now()
	pgtest.Exec(t, conn, fmt.Sprintf(`INSERT INTO act_hi_actinst (id_, proc_def_key_, proc_def_id_, root_proc_inst_id_, proc_inst_id_, execution_id_,
		act_id_, act_type_, start_time_, end_time_, duration_, act_inst_state_, sequence_counter_)
	SELECT 'bulk-' || i, 'bulk', 'bulk:1:x', 'pi-' || i, 'pi-' || i, 'ex-' || i, 'task_1', 'serviceTask',
		timestamp '2026-01-01' + i * interval '1 second', timestamp '2026-01-01' + i * interval '1 second' + interval '2 seconds', 2000, 1, 1
	FROM generate_series(1, %d) i;
	ANALYZE act_hi_actinst`, historyRows))
	t.Logf("%d finished activity instances made in %s", historyRows, time.Since(started).Round(time.Second))
	t.Cleanup(func() { _, _ = conn.Exec(context.Background(), `DELETE FROM act_hi_actinst WHERE id_ LIKE 'bulk-%'`) })

	sql := enginedb.CountsSQL("", false, capability.LevelFull)
	rows, err := conn.Query(ctx, "EXPLAIN "+sql, time.Now().Format("2006-01-02 15:04:05"))
	if err != nil {
		t.Fatal(err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(lines, "\n")
	t.Logf("plan of the counts query without CREATE_TIME_, %d rows in act_hi_actinst:\n%s", historyRows, text)
	if strings.Contains(text, "Seq Scan on act_hi_actinst") || !strings.Contains(text, "act_hi_actinst_pkey") {
		t.Errorf("the counts query does not look up act_hi_actinst by its primary key:\n%s", text)
	}
	// The readings agree with REST mode on the waiting tasks' age.
	x := newCamundaExporter(t, u.config(topic, u.databaseConfig()))
	x.collect()
	if age, ok := x.get(catalog.CamundaExternalTaskOldestWaitingAge, map[string]string{"topic": topic}); !ok || age < 0 {
		t.Errorf("no oldest waiting age for the topic with %d rows in act_hi_actinst", historyRows)
	}
}
