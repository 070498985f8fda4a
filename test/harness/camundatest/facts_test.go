package camundatest_test

// The fact suite: every REST behaviour the collector relies on (see docs/camunda-rest.md and
// docs/camunda-rest-verified.md), asserted against a real engine of every flavor. Each fact
// deploys its own process with its own topics, so facts run in parallel on the shared engine.

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/sim/engineclient"
	"github.com/workflow-exporter/workflow-exporter/test/harness/camundatest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
)

// expectation holds what differs between flavors (releases). Measured on 2026-12-06, see
// test/camunda-engine/README.md.
type expectation struct {
	version string // GET /version
	product string // GET /telemetry/data .product.name
	// createTime: GET /external-task items carry createTime (7.24, Operaton 1.0.3).
	createTime bool
	// lockedCreateTime: fetchAndLock items carry createTime (from 7.22; 7.21 not measured).
	lockedCreateTime bool
	// sortByCreateTime: sortBy=createTime is accepted by GET /external-task and in the sorting of
	// POST /external-task and of fetchAndLock (from 7.22; 7.19 and 7.20 answer 400 to the first two
	// and ignore the third).
	sortByCreateTime bool
	// ttlRequired: a process without historyTimeToLive cannot be deployed (from 7.20).
	ttlRequired bool
	// schemaVersion is the version ACT_GE_SCHEMA_LOG records (GET /schema/log): the engine's, but
	// Operaton 1.0.3 records Camunda's 7.24.0 and CIB seven 2.0.0 records 7.23.0.
	schemaVersion string
	// createTimeColumn: ACT_RU_EXT_TASK has CREATE_TIME_ (from 7.22 here; 7.21 not measured).
	createTimeColumn bool
}

var expectations = map[camundatest.Flavor]expectation{
	camundatest.FlavorCamunda: {version: "7.24.0", product: "Camunda BPM Runtime", createTime: true, lockedCreateTime: true,
		sortByCreateTime: true, ttlRequired: true, schemaVersion: "7.24.0", createTimeColumn: true},
	camundatest.FlavorOperaton: {version: "1.0.3", product: "Operaton BPM Runtime", createTime: true, lockedCreateTime: true,
		sortByCreateTime: true, ttlRequired: true, schemaVersion: "7.24.0", createTimeColumn: true},
	camundatest.FlavorCamunda722: {version: "7.22.0", product: "Camunda BPM Runtime", createTime: false, lockedCreateTime: true,
		sortByCreateTime: true, ttlRequired: true, schemaVersion: "7.22.0", createTimeColumn: true},
	camundatest.FlavorCamunda720: {version: "7.20.0", product: "Camunda BPM Runtime", ttlRequired: true, schemaVersion: "7.20.0"},
	camundatest.FlavorCamunda719: {version: "7.19.0", product: "Camunda BPM Runtime", schemaVersion: "7.19.0"},
	// Through the test driver (the facts of driverlessFacts are skipped): its JSON always has
	// createTime, it sorts by createTime; the database facts are the engine's.
	camundatest.FlavorCIBSeven: {version: "2.0.0", product: "CIB seven", createTime: true, lockedCreateTime: true,
		sortByCreateTime: true, ttlRequired: true, schemaVersion: "7.23.0", createTimeColumn: true},
}

// clockSlack bounds the difference between this process's clock and the engine's when comparing
// timestamps: both run on this machine, the slack covers request latency and millisecond rounding.
const clockSlack = 1500 * time.Millisecond

type fact struct {
	name string
	run  func(t *testing.T, f *fixture)
}

var facts = []fact{
	{"Version", factVersion},
	{"FailureKeepsWorkerAndLocksForRetryTimeout", factFailureBackoff},
	{"WithRetriesLeftIncludesNullRetries", factWithRetriesLeftNull},
	{"NoRetriesLeftAndIncident", factNoRetriesLeftIncident},
	{"LockExpirationBeforeExcludesNeverLocked", factLockExpirationBefore},
	{"NotLockedIncludesLapsedLocks", factLapsedLock},
	{"WorkerCallsAfterLapsedLock", factAfterLapse},
	{"DateParameterFormat", factDateFormat},
	{"TopicNamesDropDrainedTopic", factTopicNames},
	{"HistoryExternalTaskLogCounts", factHistoryLog},
	{"CreateTime", factCreateTime},
	{"ListWithoutMaxResults", factListWithoutMaxResults},
	{"SuspendedTasks", factSuspended},
	{"ExtendLock", factExtendLock},
	{"UnlockClearsLock", factUnlock},
	{"BpmnErrorRemovesTask", factBpmnError},
	{"WrongWorkerIsRejected", factWrongWorker},
	{"BooleanFalseMeansNoFilter", factBooleanFalse},
	{"SortingNeedsSortOrder", factSorting},
	{"DeployNeedsHistoryTimeToLive", factHistoryTimeToLive},
	{"HistoricActivityInstanceOfWaitingTask", factActivityInstance},
}

// driverlessFacts need endpoints the cibseven test driver does not answer (telemetry, schema log,
// statistics, history of incidents and activity instances, POST /external-task): they are REST
// facts only. The others run on the driver too, which checks that it answers as the REST API does.
var driverlessFacts = map[string]bool{
	"Version": true, "NoRetriesLeftAndIncident": true, "CreateTime": true, "HistoricActivityInstanceOfWaitingTask": true,
}

func TestEngineFacts(t *testing.T) {
	for _, flavor := range camundatest.Flavors() {
		t.Run(string(flavor), func(t *testing.T) {
			var e *camundatest.Engine
			if flavor.NeedsPostgres() {
				// An engine of its own: a shared one would outlive the test's database.
				dbURL := pgtest.NewDatabase(t)
				var err error
				if e, err = camundatest.Start(context.Background(), camundatest.Options{Flavor: flavor, PostgresURL: dbURL}); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(e.Stop) // before the database is dropped
			} else {
				e = camundatest.Shared(t, flavor)
			}
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("engine log (tail):\n%s", e.LogTail(6000))
				}
			})
			for _, fc := range facts {
				t.Run(fc.name, func(t *testing.T) {
					if !flavor.RESTAPI() && driverlessFacts[fc.name] {
						t.Skipf("%s has a test driver, not the REST API this fact needs", flavor)
					}
					t.Parallel()
					fc.run(t, newFixture(t, e))
				})
			}
		})
	}
}

// fixture is one fact's view of the shared engine: its client, its own process key and topics.
type fixture struct {
	t      *testing.T
	ctx    context.Context
	e      *camundatest.Engine
	c      *engineclient.Client
	exp    expectation
	key    string
	topics []string
}

func newFixture(t *testing.T, e *camundatest.Engine) *fixture {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	exp, ok := expectations[e.Flavor]
	if !ok {
		t.Fatalf("no expectations for flavor %s", e.Flavor)
	}
	return &fixture{t: t, ctx: ctx, e: e, c: e.Client(), exp: exp}
}

// deploy deploys a process with n external tasks in a row on topics <key>.t1, <key>.t2, ...
func (f *fixture) deploy(n int) {
	f.t.Helper()
	f.key = camundatest.UniqueName(f.t.Name())
	f.topics = nil
	for i := 1; i <= n; i++ {
		f.topics = append(f.topics, f.key+".t"+string(rune('0'+i)))
	}
	d, err := f.c.Deploy(f.ctx, f.key, map[string][]byte{f.key + ".bpmn": engineclient.ExternalTaskProcess(f.key, f.topics...)})
	if err != nil {
		f.t.Fatal(err)
	}
	if len(d.DeployedProcessDefinitions) != 1 {
		f.t.Fatalf("deployment %s deployed %d definitions", d.ID, len(d.DeployedProcessDefinitions))
	}
}

func (f *fixture) start(n int) []engineclient.ProcessInstance {
	f.t.Helper()
	var out []engineclient.ProcessInstance
	for i := 0; i < n; i++ {
		pi, err := f.c.StartProcess(f.ctx, f.key, "bk-"+f.key, map[string]any{"i": i})
		if err != nil {
			f.t.Fatal(err)
		}
		out = append(out, pi)
	}
	return out
}

func q(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Add(kv[i], kv[i+1])
	}
	return v
}

// count is GET /external-task/count for the fixture's first topic plus filters.
func (f *fixture) count(kv ...string) int {
	f.t.Helper()
	v := q(kv...)
	if v.Get("topicName") == "" {
		v.Set("topicName", f.topics[0])
	}
	n, err := f.c.Count(f.ctx, "/external-task/count", v)
	if err != nil {
		f.t.Fatal(err)
	}
	return n
}

func (f *fixture) task(id string) engineclient.ExternalTask {
	f.t.Helper()
	tk, err := f.c.ExternalTask(f.ctx, id)
	if err != nil {
		f.t.Fatal(err)
	}
	return tk
}

func (f *fixture) fetch(w *engineclient.Worker, lock time.Duration, max int) []engineclient.ExternalTask {
	f.t.Helper()
	tasks, err := w.FetchAndLock(f.ctx, f.topics[0], lock, max)
	if err != nil {
		f.t.Fatal(err)
	}
	return tasks
}

func (f *fixture) fetchOne(w *engineclient.Worker, lock time.Duration) engineclient.ExternalTask {
	f.t.Helper()
	tasks := f.fetch(w, lock, 1)
	if len(tasks) != 1 {
		f.t.Fatalf("fetchAndLock on %s by %s returned %d tasks, want 1", f.topics[0], w.ID, len(tasks))
	}
	return tasks[0]
}

func (f *fixture) worker(id string) *engineclient.Worker { return engineclient.NewWorker(f.c, id) }

// lockOne deploys the process, starts one instance and has a worker named
// id fetch and lock its task for lock.
func (f *fixture) lockOne(id string, lock time.Duration) (*engineclient.Worker, engineclient.ExternalTask) {
	f.t.Helper()
	f.deploy(1)
	f.start(1)
	w := f.worker(id)
	return w, f.fetchOne(w, lock)
}

func (f *fixture) wantCount(want int, kv ...string) {
	f.t.Helper()
	if got := f.count(kv...); got != want {
		f.t.Errorf("GET /external-task/count %v on %s = %d, want %d", kv, f.topics[0], got, want)
	}
}

func lockExp(t *testing.T, tk engineclient.ExternalTask) time.Time {
	t.Helper()
	ts, ok, err := tk.LockExpiration()
	if err != nil || !ok {
		t.Fatalf("task %s: lockExpirationTime %v: ok=%v err=%v", tk.ID, tk.LockExpirationTime, ok, err)
	}
	return ts
}

func within(t *testing.T, what string, got, lo, hi time.Time) {
	t.Helper()
	if got.Before(lo.Add(-clockSlack)) || got.After(hi.Add(clockSlack)) {
		t.Errorf("%s = %s, want between %s and %s (±%s)", what, got.Format(time.RFC3339Nano), lo.Format(time.RFC3339Nano), hi.Format(time.RFC3339Nano), clockSlack)
	}
}

func str(p *string) string {
	if p == nil {
		return "<null>"
	}
	return *p
}

func factVersion(t *testing.T, f *fixture) {
	resp, err := f.c.Raw(f.ctx, http.MethodGet, "/version", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(resp.Body, &v); err != nil || resp.Status != 200 {
		t.Fatalf("GET /version: HTTP %d %s (%v)", resp.Status, resp.Body, err)
	}
	if v["version"] != f.exp.version || len(v) != 1 {
		t.Errorf("GET /version = %s, want {\"version\":%q}", resp.Body, f.exp.version)
	}
	t.Logf("GET /version -> %s; headers %v", resp.Body, resp.Header)
	for name, vals := range resp.Header {
		for _, val := range append(vals, name) {
			if l := strings.ToLower(val); strings.Contains(l, "camunda") || strings.Contains(l, "operaton") {
				t.Errorf("header %s: %s names the product (the doc says headers do not tell flavors apart)", name, val)
			}
		}
	}

	var engines []map[string]any
	if err := f.c.Get(f.ctx, "/engine", nil, &engines); err != nil {
		t.Fatal(err)
	}
	if len(engines) != 1 || engines[0]["name"] != "default" {
		t.Errorf("GET /engine = %v, want [{name: default}]", engines)
	}

	// Telemetry data names the product: a flavor detector that does not depend on version numbers.
	tel, err := f.c.Raw(f.ctx, http.MethodGet, "/telemetry/data", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("GET /telemetry/data -> HTTP %d %s", tel.Status, truncate(tel.Body, 300))
	var td struct {
		Product struct {
			Name, Version, Edition string
		}
	}
	if err := json.Unmarshal(tel.Body, &td); err != nil || tel.Status != 200 {
		t.Fatalf("GET /telemetry/data: HTTP %d, %v", tel.Status, err)
	}
	if td.Product.Name != f.exp.product || td.Product.Version != f.exp.version || td.Product.Edition != "community" {
		t.Errorf("telemetry product = %+v, want name %q version %q edition community", td.Product, f.exp.product, f.exp.version)
	}

	// The schema log names the schema's version: the engine's own, except for the forks.
	var schemaLog []struct{ Version string }
	if err := f.c.Get(f.ctx, "/schema/log", nil, &schemaLog); err != nil {
		t.Fatal(err)
	}
	if len(schemaLog) == 0 || schemaLog[len(schemaLog)-1].Version != f.exp.schemaVersion {
		t.Errorf("GET /schema/log = %+v, want the last entry %s", schemaLog, f.exp.schemaVersion)
	}

	// The engine can also be addressed by name.
	if n, err := f.c.Count(f.ctx, "/engine/default/external-task/count", nil); err != nil || n < 0 {
		t.Errorf("GET /engine/default/external-task/count: %d, %v", n, err)
	}
	// Error bodies: {"type","message","code"} in both flavors.
	nf, err := f.c.Raw(f.ctx, http.MethodGet, "/external-task/no-such-task", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	var eb map[string]any
	if err := json.Unmarshal(nf.Body, &eb); err != nil || nf.Status != 404 || eb["type"] == nil || eb["message"] == nil {
		t.Errorf("GET /external-task/<unknown id>: HTTP %d %s, want 404 with type and message", nf.Status, nf.Body)
	}
	t.Logf("GET /external-task/<unknown id> -> HTTP %d %s", nf.Status, nf.Body)
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}

func factFailureBackoff(t *testing.T, f *fixture) {
	w, tk := f.lockOne("w-backoff", time.Minute)
	if tk.Retries != nil {
		t.Errorf("fetched task retries = %d, want null before any failure", *tk.Retries)
	}
	const retryTimeout = 3 * time.Second
	before := time.Now()
	if err := w.Failure(f.ctx, tk.ID, 2, retryTimeout, "boom"); err != nil {
		t.Fatal(err)
	}
	after := time.Now()
	got := f.task(tk.ID)
	if str(got.WorkerID) != w.ID {
		t.Errorf("after failure workerId = %s, want %s (kept)", str(got.WorkerID), w.ID)
	}
	if got.Retries == nil || *got.Retries != 2 || str(got.ErrorMessage) != "boom" {
		t.Errorf("after failure retries=%v errorMessage=%s, want 2, boom", got.Retries, str(got.ErrorMessage))
	}
	exp := lockExp(t, got)
	within(t, "lockExpirationTime after failure", exp, before.Add(retryTimeout), after.Add(retryTimeout))
	if details, err := f.c.ErrorDetails(f.ctx, tk.ID); err != nil || details != w.ID+": boom" {
		t.Errorf("GET /external-task/{id}/errorDetails = %q, %v; want the details sent", details, err)
	}
	if r, err := f.c.Raw(f.ctx, http.MethodGet, "/external-task/"+tk.ID+"/errorDetails", nil, ""); err != nil || r.Status != http.StatusNotAcceptable {
		t.Errorf("errorDetails with Accept: application/json: %v %v, want 406", r, err)
	}
	// In backoff the task counts as locked and cannot be fetched.
	f.wantCount(1, "locked", "true")
	f.wantCount(0, "notLocked", "true")
	f.wantCount(1, "workerId", w.ID, "locked", "true")
	if other := f.fetch(f.worker("w-other"), time.Minute, 5); len(other) != 0 {
		t.Errorf("fetchAndLock during backoff returned %d tasks, want 0", len(other))
	}
	time.Sleep(time.Until(exp) + 700*time.Millisecond)
	f.wantCount(0, "locked", "true")
	f.wantCount(1, "notLocked", "true")
	if again := f.fetch(f.worker("w-other"), time.Minute, 5); len(again) != 1 {
		t.Errorf("fetchAndLock after backoff returned %d tasks, want 1", len(again))
	}
}

func factWithRetriesLeftNull(t *testing.T, f *fixture) {
	f.deploy(1)
	f.start(1)
	tasks, err := f.c.ExternalTasks(f.ctx, q("topicName", f.topics[0], "maxResults", "10"))
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 1 || tasks[0].Retries != nil {
		t.Fatalf("new task: %d tasks, retries %v; want 1 task with retries null", len(tasks), tasks)
	}
	f.wantCount(1, "withRetriesLeft", "true")
	f.wantCount(0, "noRetriesLeft", "true")
}

func factNoRetriesLeftIncident(t *testing.T, f *fixture) {
	f.deploy(1)
	pis := f.start(1)
	w := f.worker("w-exhaust")
	tk := f.fetchOne(w, time.Minute)
	if err := w.Failure(f.ctx, tk.ID, 0, 0, "exhausted"); err != nil {
		t.Fatal(err)
	}
	got := f.task(tk.ID)
	if got.Retries == nil || *got.Retries != 0 {
		t.Errorf("retries after failure(retries=0) = %v, want 0", got.Retries)
	}
	t.Logf("retries exhausted: workerId=%s lockExpirationTime=%s", str(got.WorkerID), str(got.LockExpirationTime))
	f.wantCount(1, "noRetriesLeft", "true")
	f.wantCount(0, "withRetriesLeft", "true")
	incs, err := f.c.Incidents(f.ctx, q("incidentType", "failedExternalTask", "processInstanceId", pis[0].ID))
	if err != nil {
		t.Fatal(err)
	}
	if len(incs) != 1 {
		t.Fatalf("incidents of the instance = %d, want 1", len(incs))
	}
	inc := incs[0]
	if inc.Configuration != tk.ID || inc.ActivityID != "task_1" {
		t.Errorf("incident configuration=%q activityId=%q, want task id %q and task_1", inc.Configuration, inc.ActivityID, tk.ID)
	}
	if str(inc.IncidentMessage) != "exhausted" {
		t.Errorf("incidentMessage = %s, want the failure's errorMessage", str(inc.IncidentMessage))
	}
	t.Logf("incident: type=%s configuration=%s message=%s failedActivityId=%s", inc.IncidentType, inc.Configuration, str(inc.IncidentMessage), str(inc.FailedActivityID))
	n, err := f.c.Count(f.ctx, "/incident/count", q("incidentType", "failedExternalTask", "configuration", tk.ID))
	if err != nil || n != 1 {
		t.Errorf("GET /incident/count?configuration=<task id> = %d, %v; want 1", n, err)
	}
	if names := f.topicNames("withRetriesLeft", "true"); slices.Contains(names, f.topics[0]) {
		t.Errorf("topic-names?withRetriesLeft=true lists a topic whose only task has retries 0")
	}
	if names := f.topicNames(); !slices.Contains(names, f.topics[0]) {
		t.Errorf("topic-names without filters does not list a topic whose only task has retries 0")
	}
	var stats []struct {
		Definition struct{ Key string }
		Incidents  []struct {
			IncidentType  string
			IncidentCount int
		}
	}
	if err := f.c.Get(f.ctx, "/process-definition/statistics", q("incidents", "true"), &stats); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, st := range stats {
		if st.Definition.Key == f.key {
			found = len(st.Incidents) == 1 && st.Incidents[0].IncidentType == "failedExternalTask" && st.Incidents[0].IncidentCount == 1
		}
	}
	if !found {
		t.Errorf("GET /process-definition/statistics?incidents=true has no failedExternalTask count 1 for %s", f.key)
	}
	if n, err := f.c.Count(f.ctx, "/history/incident/count", q("open", "true", "processInstanceId", pis[0].ID)); err != nil || n != 1 {
		t.Errorf("GET /history/incident/count?open=true = %d, %v; want 1", n, err)
	}
	// Retries 0 is not fetchable; raising retries resolves the incident and makes it fetchable.
	if other := f.fetch(f.worker("w-other"), time.Minute, 5); len(other) != 0 {
		t.Errorf("fetchAndLock of a task with retries 0 returned %d tasks", len(other))
	}
	if err := w.SetRetries(f.ctx, tk.ID, 2); err != nil {
		t.Fatal(err)
	}
	n, err = f.c.Count(f.ctx, "/incident/count", q("incidentType", "failedExternalTask", "configuration", tk.ID))
	if err != nil || n != 0 {
		t.Errorf("open incidents after raising retries = %d, %v; want 0", n, err)
	}
	f.wantCount(0, "noRetriesLeft", "true")
	if n, err := f.c.Count(f.ctx, "/history/incident/count", q("resolved", "true", "processInstanceId", pis[0].ID)); err != nil || n != 1 {
		t.Errorf("GET /history/incident/count?resolved=true = %d, %v; want 1", n, err)
	}
	again := f.fetch(f.worker("w-other"), time.Minute, 5)
	if len(again) != 1 {
		t.Fatalf("fetchAndLock after raising retries returned %d tasks, want 1", len(again))
	}
	// failure(retries=0) with a retryTimeout: the task is locked AND has no retries left, so a
	// state classifier must test retries before the lock.
	if err := f.worker("w-other").Failure(f.ctx, again[0].ID, 0, time.Minute, "exhausted again"); err != nil {
		t.Fatal(err)
	}
	f.wantCount(1, "noRetriesLeft", "true", "locked", "true")
}

func factLockExpirationBefore(t *testing.T, f *fixture) {
	f.deploy(1)
	f.start(2)
	f.fetchOne(f.worker("w-leb"), time.Minute)
	future := engineclient.FormatTime(time.Now().Add(time.Hour))
	past := engineclient.FormatTime(time.Now().Add(-time.Hour))
	f.wantCount(2)
	f.wantCount(1, "lockExpirationBefore", future) // the never-locked task is not "before"
	f.wantCount(1, "lockExpirationAfter", past)
	f.wantCount(1, "notLocked", "true")
	f.wantCount(1, "locked", "true")
}

func factLapsedLock(t *testing.T, f *fixture) {
	f.deploy(1)
	f.start(1)
	w := f.worker("w-lapse")
	fetched := time.Now()
	tk := f.fetchOne(w, 2*time.Second)
	if n := f.count("locked", "true"); time.Since(fetched) < 1500*time.Millisecond && n != 1 {
		t.Errorf("locked count right after fetchAndLock(2s) = %d, want 1", n)
	}
	time.Sleep(time.Until(lockExp(t, f.task(tk.ID))) + 700*time.Millisecond)
	f.wantCount(0, "locked", "true")
	f.wantCount(1, "notLocked", "true")
	f.wantCount(1, "lockExpirationBefore", engineclient.FormatTime(time.Now()))
	got := f.task(tk.ID)
	// A lapsed lock keeps workerId and lockExpirationTime: "notLocked with a workerId" is how a
	// poller tells a lapsed lock from a task never fetched.
	if str(got.WorkerID) != w.ID || got.LockExpirationTime == nil {
		t.Errorf("lapsed task workerId=%s lockExpirationTime=%s, want %s and the old time", str(got.WorkerID), str(got.LockExpirationTime), w.ID)
	}
	f.wantCount(1, "workerId", w.ID)
	again := f.fetchOne(f.worker("w-second"), time.Minute)
	if again.ID != tk.ID || str(f.task(tk.ID).WorkerID) != "w-second" {
		t.Errorf("redelivery: fetched %s, workerId now %s", again.ID, str(f.task(tk.ID).WorkerID))
	}
}

// factAfterLapse records what a worker whose lock lapsed (nobody else locked the task) can still
// do: this is the "side effect done, completion late" path that the idempotency metrics watch.
func factAfterLapse(t *testing.T, f *fixture) {
	f.deploy(1)
	f.start(3)
	w := f.worker("w-late")
	tasks := f.fetch(w, time.Second, 3)
	if len(tasks) != 3 {
		t.Fatalf("fetched %d tasks, want 3", len(tasks))
	}
	time.Sleep(time.Until(lockExp(t, f.task(tasks[0].ID))) + 700*time.Millisecond)
	f.wantCount(3, "notLocked", "true")
	results := map[string]error{
		"extendLock": w.ExtendLock(f.ctx, tasks[0].ID, time.Minute),
		"failure":    w.Failure(f.ctx, tasks[1].ID, 1, 0, "late failure"),
		"complete":   w.Complete(f.ctx, tasks[2].ID, nil),
	}
	for call, err := range results {
		t.Logf("%s by the original worker after its lock lapsed: %v", call, err)
	}
	var apiErr *engineclient.APIError
	if err := results["extendLock"]; !errors.As(err, &apiErr) || apiErr.Status != 400 {
		t.Errorf("extendLock after the lock lapsed: %v, want HTTP 400", err)
	}
	if err := results["complete"]; err != nil {
		t.Errorf("complete by the original worker after its lock lapsed: %v, want success", err)
	}
	if err := results["failure"]; err != nil {
		t.Errorf("failure by the original worker after its lock lapsed: %v, want success", err)
	}
}

func factDateFormat(t *testing.T, f *fixture) {
	_, tk := f.lockOne("w-date", time.Minute)
	if s := str(tk.LockExpirationTime); len(s) != len("2006-01-02T15:04:05.000-0700") {
		t.Errorf("lockExpirationTime %q is not in yyyy-MM-dd'T'HH:mm:ss.SSSZ", s)
	}
	in := time.Now().Add(time.Hour)
	plus := in.In(time.FixedZone("+0100", 3600)).Format(engineclient.DateLayout)
	minus := in.In(time.FixedZone("-0700", -7*3600)).Format(engineclient.DateLayout)
	base := "/external-task/count?topicName=" + url.QueryEscape(f.topics[0]) + "&lockExpirationBefore="
	cases := []struct {
		name, raw  string
		wantStatus int
		wantCount  int // when 200
	}{
		{"plus offset, + encoded as %2B", url.QueryEscape(plus), 200, 1},
		{"minus offset, unencoded", minus, 200, 1},
		{"plus offset, raw +", plus, 400, 0},
		{"UTC as Z", url.QueryEscape(in.UTC().Format("2006-01-02T15:04:05.000Z")), 400, 0},
		{"offset with colon", url.QueryEscape(in.Format("2006-01-02T15:04:05.000-07:00")), 400, 0},
		{"no milliseconds", url.QueryEscape(in.Format("2006-01-02T15:04:05-0700")), 400, 0},
	}
	for _, c := range cases {
		resp, err := f.c.Raw(f.ctx, http.MethodGet, base+c.raw, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: lockExpirationBefore=%s -> HTTP %d %s", c.name, c.raw, resp.Status, truncate(resp.Body, 300))
		if resp.Status != c.wantStatus {
			t.Errorf("%s (%s): HTTP %d, want %d; body %s", c.name, c.raw, resp.Status, c.wantStatus, resp.Body)
			continue
		}
		if resp.Status == 200 {
			var v struct{ Count int }
			if err := json.Unmarshal(resp.Body, &v); err != nil || v.Count != c.wantCount {
				t.Errorf("%s: count %s, want %d", c.name, resp.Body, c.wantCount)
			}
		}
	}
}

func (f *fixture) topicNames(kv ...string) []string {
	f.t.Helper()
	names, err := f.c.TopicNames(f.ctx, q(kv...))
	if err != nil {
		f.t.Fatal(err)
	}
	return names
}

func factTopicNames(t *testing.T, f *fixture) {
	f.deploy(2) // a chain: t1 then t2
	f.start(1)
	t1, t2 := f.topics[0], f.topics[1]
	has := func(names []string, s string) bool { return slices.Contains(names, s) }
	if n := f.topicNames(); !has(n, t1) || has(n, t2) {
		t.Errorf("topic-names with a task on t1 only: t1 %v, t2 %v", has(n, t1), has(n, t2))
	}
	w := f.worker("w-topics")
	tk := f.fetchOne(w, time.Minute)
	if !has(f.topicNames("withLockedTasks", "true"), t1) || has(f.topicNames("withUnlockedTasks", "true"), t1) {
		t.Errorf("locked t1 task: withLockedTasks/withUnlockedTasks do not match")
	}
	if err := w.Complete(f.ctx, tk.ID, nil); err != nil {
		t.Fatal(err)
	}
	n := f.topicNames()
	if has(n, t1) || !has(n, t2) {
		t.Errorf("after completing t1: topic-names has t1=%v (want false, drained), t2=%v (want true)", has(n, t1), has(n, t2))
	}
}

func (f *fixture) historyCount(kind string) int {
	f.t.Helper()
	n, err := f.c.Count(f.ctx, "/history/external-task-log/count", q("topicName", f.topics[0], kind, "true"))
	if err != nil {
		f.t.Fatal(err)
	}
	return n
}

func factHistoryLog(t *testing.T, f *fixture) {
	w, tk := f.lockOne("w-hist", time.Minute)
	if err := w.Failure(f.ctx, tk.ID, 1, 0, "first try failed"); err != nil {
		t.Fatal(err)
	}
	tk = f.fetchOne(w, time.Minute)
	if err := w.Complete(f.ctx, tk.ID, nil); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"creationLog": 1, "failureLog": 1, "successLog": 1, "deletionLog": 0}
	for kind, n := range want {
		if got := f.historyCount(kind); got != n {
			t.Errorf("GET /history/external-task-log/count?topicName=..&%s=true = %d, want %d", kind, got, n)
		}
	}
	all, err := f.c.Count(f.ctx, "/history/external-task-log/count", q("topicName", f.topics[0]))
	if err != nil || all != 3 {
		t.Errorf("all log entries of the topic = %d, %v; want 3", all, err)
	}
}

func factCreateTime(t *testing.T, f *fixture) {
	f.deploy(1)
	before := time.Now()
	f.start(2)
	after := time.Now()
	var raw []map[string]any
	if err := f.c.Get(f.ctx, "/external-task", q("topicName", f.topics[0], "maxResults", "1"), &raw); err != nil {
		t.Fatal(err)
	}
	if len(raw) != 1 {
		t.Fatalf("%d tasks", len(raw))
	}
	ct, present := raw[0]["createTime"]
	t.Logf("GET /external-task: createTime present=%v value=%v", present, ct)
	if present != f.exp.createTime {
		t.Errorf("GET /external-task: createTime present = %v, want %v", present, f.exp.createTime)
	}
	if present {
		s, _ := ct.(string)
		ts, err := engineclient.ParseTime(s)
		if err != nil {
			t.Fatalf("createTime %v: %v", ct, err)
		}
		within(t, "createTime", ts, before, after)
	}

	// Sorting by createTime: GET, POST /external-task and fetchAndLock.
	wantStatus := map[bool]int{true: 200, false: 400}[f.exp.sortByCreateTime]
	resp, err := f.c.Raw(f.ctx, http.MethodGet, "/external-task?sortBy=createTime&sortOrder=asc&maxResults=1&topicName="+url.QueryEscape(f.topics[0]), nil, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("GET /external-task?sortBy=createTime -> HTTP %d %s", resp.Status, truncate(resp.Body, 200))
	if resp.Status != wantStatus {
		t.Errorf("GET /external-task?sortBy=createTime&sortOrder=asc: HTTP %d, want %d", resp.Status, wantStatus)
	}
	resp, err = f.c.Raw(f.ctx, http.MethodPost, "/external-task?maxResults=1", map[string]any{
		"topicName": f.topics[0], "sorting": []map[string]string{{"sortBy": "createTime", "sortOrder": "asc"}}}, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("POST /external-task sorting createTime -> HTTP %d %s", resp.Status, truncate(resp.Body, 200))
	if resp.Status != wantStatus {
		t.Errorf("POST /external-task with sorting by createTime: HTTP %d, want %d", resp.Status, wantStatus)
	}
	// fetchAndLock: newest first where sorting is known; older engines ignore the field, so an
	// unknown sort key shows the difference (400, or a fetch as if unsorted).
	fetch := func(sortBy string) *engineclient.Response {
		resp, err := f.c.Raw(f.ctx, http.MethodPost, "/external-task/fetchAndLock", map[string]any{
			"workerId": "w-sort", "maxTasks": 1, "sorting": []map[string]string{{"sortBy": sortBy, "sortOrder": "desc"}},
			"topics": []map[string]any{{"topicName": f.topics[0], "lockDuration": 60000}}}, "")
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	bad := fetch("noSuchKey")
	t.Logf("fetchAndLock sorting by noSuchKey -> HTTP %d %s", bad.Status, truncate(bad.Body, 200))
	if got := bad.Status == 400; got != f.exp.sortByCreateTime {
		t.Errorf("fetchAndLock with sorting by an unknown key: HTTP %d; refused = %v, want %v", bad.Status, got, f.exp.sortByCreateTime)
	}
	var locked []map[string]any
	if r := fetch("createTime"); r.Status != 200 || json.Unmarshal(r.Body, &locked) != nil || len(locked) != 1 {
		t.Fatalf("fetchAndLock with sorting by createTime: HTTP %d %s", r.Status, truncate(r.Body, 300))
	}
	_, present = locked[0]["createTime"]
	t.Logf("fetchAndLock: createTime present=%v", present)
	if present != f.exp.lockedCreateTime {
		t.Errorf("fetchAndLock: createTime present = %v, want %v", present, f.exp.lockedCreateTime)
	}
}

func factListWithoutMaxResults(t *testing.T, f *fixture) {
	f.deploy(1)
	f.start(3)
	tasks, err := f.c.ExternalTasks(f.ctx, q("topicName", f.topics[0]))
	if err != nil {
		t.Fatalf("list without maxResults (no auth): %v", err)
	}
	if len(tasks) != 3 {
		t.Errorf("list without maxResults returned %d tasks, want all 3", len(tasks))
	}
	page, err := f.c.ExternalTasks(f.ctx, q("topicName", f.topics[0], "maxResults", "2", "firstResult", "1"))
	if err != nil || len(page) != 2 {
		t.Errorf("firstResult=1&maxResults=2: %d tasks, %v", len(page), err)
	}
}

func factSuspended(t *testing.T, f *fixture) {
	f.deploy(1)
	pis := f.start(3)
	w := f.worker("w-susp")
	locked := f.fetchOne(w, time.Minute)
	// Suspend an instance whose task is not locked.
	var victim string
	for _, pi := range pis {
		if pi.ID != locked.ProcessInstanceID {
			victim = pi.ID
			break
		}
	}
	if err := f.c.SetProcessInstanceSuspended(f.ctx, victim, true); err != nil {
		t.Fatal(err)
	}
	f.wantCount(1, "suspended", "true")
	f.wantCount(2, "active", "true")
	tasks, err := f.c.ExternalTasks(f.ctx, q("processInstanceId", victim, "maxResults", "5"))
	if err != nil || len(tasks) != 1 || !tasks[0].Suspended {
		t.Errorf("task of the suspended instance: %+v %v, want suspended=true", tasks, err)
	}
	if got := f.fetch(f.worker("w-other"), time.Minute, 5); len(got) != 1 {
		t.Errorf("fetchAndLock with one suspended, one locked, one free task returned %d, want 1", len(got))
	}
	// Suspending the definition with its instances suspends the locked tasks too; they stay locked.
	if err := f.c.SetProcessDefinitionSuspended(f.ctx, f.key, true, true); err != nil {
		t.Fatal(err)
	}
	f.wantCount(3, "suspended", "true")
	f.wantCount(0, "active", "true")
	n := f.count("suspended", "true", "locked", "true")
	t.Logf("after suspending the definition: suspended&locked = %d (locked before: 2)", n)
	if n != 2 {
		t.Errorf("suspended&locked = %d, want 2 (suspension keeps locks)", n)
	}
	if err := w.Complete(f.ctx, locked.ID, nil); err == nil {
		t.Errorf("completing a suspended task succeeded")
	} else {
		t.Logf("complete on a suspended task: %v", err)
	}
	if err := f.c.SetProcessDefinitionSuspended(f.ctx, f.key, false, true); err != nil {
		t.Fatal(err)
	}
	f.wantCount(0, "suspended", "true")
	f.wantCount(3, "active", "true")
}

func factExtendLock(t *testing.T, f *fixture) {
	w, tk := f.lockOne("w-extend", 10*time.Second)
	old := lockExp(t, f.task(tk.ID))
	before := time.Now()
	if err := w.ExtendLock(f.ctx, tk.ID, time.Minute); err != nil {
		t.Fatal(err)
	}
	after := time.Now()
	got := lockExp(t, f.task(tk.ID))
	if !got.After(old) {
		t.Errorf("lockExpirationTime after extendLock %s not after %s", got, old)
	}
	within(t, "lockExpirationTime after extendLock(60s)", got, before.Add(time.Minute), after.Add(time.Minute))
	err := f.worker("w-intruder").ExtendLock(f.ctx, tk.ID, time.Minute)
	var apiErr *engineclient.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 400 || !strings.Contains(apiErr.Endpoint, "/extendLock") {
		t.Errorf("extendLock by another worker: %v, want HTTP 400 naming the endpoint", err)
	}
}

func factUnlock(t *testing.T, f *fixture) {
	w, tk := f.lockOne("w-unlock", time.Minute)
	if err := w.Unlock(f.ctx, tk.ID); err != nil {
		t.Fatal(err)
	}
	got := f.task(tk.ID)
	if got.WorkerID != nil || got.LockExpirationTime != nil {
		t.Errorf("after unlock workerId=%s lockExpirationTime=%s, want both null", str(got.WorkerID), str(got.LockExpirationTime))
	}
	f.wantCount(1, "notLocked", "true")
	if err := w.Lock(f.ctx, tk.ID, time.Minute); err != nil {
		t.Fatal(err)
	}
	f.wantCount(1, "locked", "true")
}

func factBpmnError(t *testing.T, f *fixture) {
	w, tk := f.lockOne("w-bpmn", time.Minute)
	if err := w.BpmnError(f.ctx, tk.ID, "BUSINESS_RULE", "rejected"); err != nil {
		t.Fatal(err)
	}
	f.wantCount(0)
	// An uncaught BPMN error ends the task: history logs it as a deletion, not a failure or success.
	got := map[string]int{}
	for _, kind := range []string{"failureLog", "successLog", "deletionLog"} {
		got[kind] = f.historyCount(kind)
	}
	if got["failureLog"] != 0 || got["successLog"] != 0 || got["deletionLog"] != 1 {
		t.Errorf("history after an uncaught bpmnError = %v, want failure 0, success 0, deletion 1", got)
	}
}

func factWrongWorker(t *testing.T, f *fixture) {
	f.deploy(1)
	f.start(1)
	tk := f.fetchOne(f.worker("w-owner"), time.Minute)
	intruder := f.worker("w-intruder")
	for name, call := range map[string]func() error{
		"failure":  func() error { return intruder.Failure(f.ctx, tk.ID, 1, 0, "not mine") },
		"complete": func() error { return intruder.Complete(f.ctx, tk.ID, nil) },
	} {
		err := call()
		var apiErr *engineclient.APIError
		if !errors.As(err, &apiErr) || apiErr.Status != 400 {
			t.Errorf("%s by a worker not holding the lock: %v, want HTTP 400", name, err)
		} else {
			t.Logf("%s by another worker: %v", name, err)
		}
	}
}

func factBooleanFalse(t *testing.T, f *fixture) {
	f.deploy(1)
	f.start(2)
	f.fetchOne(f.worker("w-bool"), time.Minute)
	f.wantCount(1, "locked", "true")
	f.wantCount(2, "locked", "false") // false = no filter, not "unlocked"
	f.wantCount(2, "notLocked", "false")
	f.wantCount(2, "suspended", "false")
}

func factSorting(t *testing.T, f *fixture) {
	f.deploy(1)
	f.start(1)
	for _, c := range []struct {
		query string
		want  int
	}{
		{"sortBy=id", 400},
		{"sortOrder=asc", 400},
		{"sortBy=id&sortOrder=asc", 200},
		{"sortBy=lockExpirationTime&sortOrder=desc", 200},
	} {
		resp, err := f.c.Raw(f.ctx, http.MethodGet, "/external-task?maxResults=5&topicName="+url.QueryEscape(f.topics[0])+"&"+c.query, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		if resp.Status != c.want {
			t.Errorf("GET /external-task?%s: HTTP %d, want %d; body %s", c.query, resp.Status, c.want, resp.Body)
		}
	}
}

func factHistoryTimeToLive(t *testing.T, f *fixture) {
	key := camundatest.UniqueName(t.Name())
	bpmn := engineclient.ExternalTaskProcess(key, key+".t1")
	noTTL := strings.Replace(string(bpmn), ` camunda:historyTimeToLive="P1D"`, "", 1)
	if noTTL == string(bpmn) {
		t.Fatal("test BPMN has no historyTimeToLive attribute to remove")
	}
	_, err := f.c.Deploy(f.ctx, key, map[string][]byte{key + ".bpmn": []byte(noTTL)})
	if !f.exp.ttlRequired {
		if err != nil {
			t.Fatalf("deploying without historyTimeToLive: %v, want success on %s", err, f.exp.version)
		}
		t.Logf("deploy without historyTimeToLive: accepted")
		return
	}
	var apiErr *engineclient.APIError
	// 7.20 says "History Time To Live cannot be null", later releases name historyTimeToLive.
	if !errors.As(err, &apiErr) || apiErr.Status != 400 ||
		(!strings.Contains(apiErr.Body, "historyTimeToLive") && !strings.Contains(apiErr.Body, "History Time To Live")) {
		t.Fatalf("deploying without historyTimeToLive: %v, want HTTP 400 mentioning historyTimeToLive", err)
	}
	t.Logf("deploy without historyTimeToLive: %s", truncate([]byte(apiErr.Body), 300))
}

// factActivityInstance: the historic activity instance of a waiting external task is the task's
// activityInstanceId, started when the task was created and not ended: its startTime is a task's
// waiting age where the task has no createTime (7.19, 7.20 over REST).
func factActivityInstance(t *testing.T, f *fixture) {
	f.deploy(1)
	before := time.Now()
	pis := f.start(1)
	after := time.Now()
	tasks, err := f.c.ExternalTasks(f.ctx, q("processInstanceId", pis[0].ID))
	if err != nil || len(tasks) != 1 {
		t.Fatalf("tasks of the instance: %d, %v", len(tasks), err)
	}
	var ais []struct {
		ID, ActivityID, ActivityType, StartTime string
		EndTime                                 *string
	}
	if err := f.c.Get(f.ctx, "/history/activity-instance", q("processInstanceId", pis[0].ID, "activityId", "task_1"), &ais); err != nil {
		t.Fatal(err)
	}
	if len(ais) != 1 {
		t.Fatalf("GET /history/activity-instance?activityId=task_1: %d instances, want 1", len(ais))
	}
	ai := ais[0]
	t.Logf("activity instance %s type %s startTime %s endTime %s; task activityInstanceId %s", ai.ID, ai.ActivityType, ai.StartTime, str(ai.EndTime), tasks[0].ActivityInstanceID)
	if ai.ID != tasks[0].ActivityInstanceID || ai.ActivityType != "serviceTask" || ai.EndTime != nil {
		t.Errorf("activity instance %+v, want id %s, serviceTask, not ended", ai, tasks[0].ActivityInstanceID)
	}
	st, err := engineclient.ParseTime(ai.StartTime)
	if err != nil {
		t.Fatal(err)
	}
	within(t, "activity instance startTime", st, before, after)
}
