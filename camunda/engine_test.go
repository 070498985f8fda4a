package camunda_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/camunda"
	"github.com/workflow-exporter/workflow-exporter/sim/engineclient"
	"github.com/workflow-exporter/workflow-exporter/test/harness/camundatest"
)

// Integration tests: every call of the client against a real engine per
// flavor (test/harness/camundatest), with results checked against what the
// engine reports through the harness's independent net/http client. Skipped
// with -short.

func TestMain(m *testing.M) { camundatest.Main(m) }

// tLogWriter sends slog output to the test log.
type tLogWriter struct{ t *testing.T }

func (w tLogWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func engineClient(t *testing.T, e *camundatest.Engine, mod func(*camunda.Config)) *camunda.Client {
	t.Helper()
	cfg := camunda.Config{
		BaseURL:  e.BaseURL,
		Username: e.Username,
		Password: e.Password,
		Timeout:  30 * time.Second,
		Logger:   slog.New(slog.NewTextHandler(tLogWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo})),
		Version:  "engine-test",
	}
	if mod != nil {
		mod(&cfg)
	}
	c, err := camunda.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// must(f(...))(t) fails the test on error and returns the value.
func must[T any](v T, err error) func(testing.TB) T {
	return func(t testing.TB) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func fetchOne(t *testing.T, ctx context.Context, w *engineclient.Worker, topic string, lock time.Duration) engineclient.ExternalTask {
	t.Helper()
	tasks := must(w.FetchAndLock(ctx, topic, lock, 1))(t)
	if len(tasks) != 1 {
		t.Fatalf("worker %s fetched %d tasks, want 1", w.ID, len(tasks))
	}
	return tasks[0]
}

func deref[T any](p *T) (v T) {
	if p != nil {
		v = *p
	}
	return v
}

func TestEngine(t *testing.T) {
	for _, flavor := range camundatest.Flavors() {
		t.Run(string(flavor), func(t *testing.T) {
			e := camundatest.Shared(t, flavor)
			ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
			defer cancel()
			c := engineClient(t, e, nil)
			hc := e.Client()

			t.Run("version and flavor", func(t *testing.T) { testVersion(t, ctx, c, e) })
			t.Run("external tasks, incidents, history", func(t *testing.T) { testExternalTasks(t, ctx, c, e, hc) })
			t.Run("jobs", func(t *testing.T) { testJobs(t, ctx, c, hc) })
			t.Run("fixture shapes", func(t *testing.T) { testFixtureShapes(t, ctx, hc) })
		})
	}
}

func testVersion(t *testing.T, ctx context.Context, c *camunda.Client, e *camundatest.Engine) {
	v := must(c.Version(ctx))(t)
	if v != e.Version {
		t.Errorf("Version = %q, harness saw %q", v, e.Version)
	}
	info := must(c.EngineInfo(ctx))(t)
	t.Logf("engine %s: version %q, telemetry product name %q, detected flavor %q", e.Flavor, info.Version, info.ProductName, info.Flavor)
	if want := camunda.Flavor(e.Flavor); info.Flavor != want {
		t.Errorf("flavor = %q, want %q (version %q, product %q)", info.Flavor, want, info.Version, info.ProductName)
	}
}

func testExternalTasks(t *testing.T, ctx context.Context, c *camunda.Client, e *camundatest.Engine, hc *engineclient.Client) {
	key := camundatest.UniqueName(t.Name(), "proc")
	topic := camundatest.UniqueName(t.Name(), "topic")
	must(hc.Deploy(ctx, key, map[string][]byte{key + ".bpmn": engineclient.ExternalTaskProcess(key, topic)}))(t)
	var instances []string
	for i := range 6 {
		pi := must(hc.StartProcess(ctx, key, fmt.Sprintf("order-%d", i), nil))(t)
		instances = append(instances, pi.ID)
	}
	// Suspended before any worker can fetch it.
	if err := hc.SetProcessInstanceSuspended(ctx, instances[5], true); err != nil {
		t.Fatal(err)
	}
	w1, w2, w3, w4 := engineclient.NewWorker(hc, "w1"), engineclient.NewWorker(hc, "w2"), engineclient.NewWorker(hc, "w3"), engineclient.NewWorker(hc, "w4")
	locked := fetchOne(t, ctx, w1, topic, 5*time.Minute)
	exhausted := fetchOne(t, ctx, w2, topic, time.Minute)
	if err := w2.Failure(ctx, exhausted.ID, 0, 0, "boom"); err != nil {
		t.Fatal(err)
	}
	backoff := fetchOne(t, ctx, w3, topic, time.Minute)
	if err := w3.Failure(ctx, backoff.ID, 2, 10*time.Minute, "transient"); err != nil {
		t.Fatal(err)
	}
	expired := fetchOne(t, ctx, w4, topic, time.Millisecond)
	time.Sleep(20 * time.Millisecond) // let the 1 ms lock lapse

	// The whole topic, compared field by field with the harness's view.
	all := must(c.ListExternalTasks(ctx, camunda.ExternalTaskQuery{TopicName: topic},
		camunda.Page{MaxResults: 50, Sort: camunda.Sort{By: camunda.ExternalTaskSortID}}))(t)
	raw := must(hc.ExternalTasks(ctx, url.Values{"topicName": {topic}}))(t)
	if len(all) != 6 || len(raw) != 6 {
		t.Fatalf("listed %d tasks, harness %d; want 6", len(all), len(raw))
	}
	if !slices.IsSortedFunc(all, func(a, b camunda.ExternalTask) int { return strings.Compare(a.ID, b.ID) }) {
		t.Error("sortBy=id&sortOrder=asc not honoured")
	}
	byID := map[string]camunda.ExternalTask{}
	for _, task := range all {
		byID[task.ID] = task
	}
	for _, r := range raw {
		got, ok := byID[r.ID]
		if !ok {
			t.Errorf("task %s missing", r.ID)
			continue
		}
		compareTask(t, got, r)
	}
	var waiting, suspended camunda.ExternalTask
	for _, task := range all {
		switch {
		case task.ProcessInstanceID == instances[5]:
			suspended = task
		case !slices.Contains([]string{locked.ID, exhausted.ID, backoff.ID, expired.ID}, task.ID):
			waiting = task
		}
	}
	if waiting.ID == "" || suspended.ID == "" {
		t.Fatalf("could not identify the waiting and suspended tasks in %+v", all)
	}
	checkTaskStates(t, byID, locked.ID, exhausted.ID, backoff.ID, waiting, suspended)

	// Filters: the client's count, its list and the harness's count with a
	// hand-written query must agree, and match the expected tasks.
	ist := time.FixedZone("IST", 5*3600+1800) // a '+' offset that must travel as %2B
	pivot := time.Now().Add(time.Minute).In(ist)
	lockOf := func(id string) time.Time {
		if lt := byID[id].LockExpirationTime; lt != nil {
			return lt.Time
		}
		return time.Time{}
	}
	var before, after []string
	for _, task := range all {
		if lt := lockOf(task.ID); !lt.IsZero() && lt.Before(pivot) {
			before = append(before, task.ID)
		} else if !lt.IsZero() && lt.After(pivot) {
			after = append(after, task.ID)
		}
	}
	allIDs := func(except ...string) []string {
		var ids []string
		for _, task := range all {
			if !slices.Contains(except, task.ID) {
				ids = append(ids, task.ID)
			}
		}
		return ids
	}
	filters := []struct {
		name    string
		q       camunda.ExternalTaskQuery
		raw     url.Values
		exact   []string // nil: use include/exclude
		include []string
		exclude []string
	}{
		{name: "topic", q: camunda.ExternalTaskQuery{TopicName: topic}, raw: url.Values{"topicName": {topic}}, exact: allIDs()},
		{name: "locked", q: camunda.ExternalTaskQuery{TopicName: topic, Lock: camunda.LockLocked},
			raw: url.Values{"topicName": {topic}, "locked": {"true"}}, include: []string{locked.ID, backoff.ID}, exclude: []string{waiting.ID, expired.ID, suspended.ID}},
		{name: "not locked", q: camunda.ExternalTaskQuery{TopicName: topic, Lock: camunda.LockNotLocked},
			raw: url.Values{"topicName": {topic}, "notLocked": {"true"}}, include: []string{waiting.ID, expired.ID, suspended.ID}, exclude: []string{locked.ID, backoff.ID}},
		{name: "with retries left", q: camunda.ExternalTaskQuery{TopicName: topic, Retries: camunda.RetriesLeft},
			raw: url.Values{"topicName": {topic}, "withRetriesLeft": {"true"}}, exact: allIDs(exhausted.ID)},
		{name: "no retries left", q: camunda.ExternalTaskQuery{TopicName: topic, Retries: camunda.RetriesNone},
			raw: url.Values{"topicName": {topic}, "noRetriesLeft": {"true"}}, exact: []string{exhausted.ID}},
		{name: "suspended", q: camunda.ExternalTaskQuery{TopicName: topic, Suspension: camunda.SuspensionSuspended},
			raw: url.Values{"topicName": {topic}, "suspended": {"true"}}, exact: []string{suspended.ID}},
		{name: "active", q: camunda.ExternalTaskQuery{TopicName: topic, Suspension: camunda.SuspensionActive},
			raw: url.Values{"topicName": {topic}, "active": {"true"}}, exact: allIDs(suspended.ID)},
		{name: "worker", q: camunda.ExternalTaskQuery{TopicName: topic, WorkerID: "w3"},
			raw: url.Values{"topicName": {topic}, "workerId": {"w3"}}, exact: []string{backoff.ID}},
		{name: "lock expiration before", q: camunda.ExternalTaskQuery{TopicName: topic, LockExpirationBefore: pivot},
			raw: url.Values{"topicName": {topic}, "lockExpirationBefore": {engineclient.FormatTime(pivot)}}, exact: before},
		{name: "lock expiration after", q: camunda.ExternalTaskQuery{TopicName: topic, LockExpirationAfter: pivot},
			raw: url.Values{"topicName": {topic}, "lockExpirationAfter": {engineclient.FormatTime(pivot)}}, exact: after},
		{name: "task ids", q: camunda.ExternalTaskQuery{ExternalTaskIDIn: []string{locked.ID, backoff.ID}},
			raw: url.Values{"externalTaskIdIn": {locked.ID + "," + backoff.ID}}, exact: []string{locked.ID, backoff.ID}},
		{name: "process instance ids", q: camunda.ExternalTaskQuery{ProcessInstanceIDIn: []string{instances[5]}},
			raw: url.Values{"processInstanceIdIn": {instances[5]}}, exact: []string{suspended.ID}},
		{name: "activity ids", q: camunda.ExternalTaskQuery{TopicName: topic, ActivityIDIn: []string{"task_1", "nope"}},
			raw: url.Values{"topicName": {topic}, "activityIdIn": {"task_1,nope"}}, exact: allIDs()},
		{name: "process definition id", q: camunda.ExternalTaskQuery{ProcessDefinitionID: byID[locked.ID].ProcessDefinitionID},
			raw: url.Values{"processDefinitionId": {byID[locked.ID].ProcessDefinitionID}}, exact: allIDs()},
		{name: "unknown tenant", q: camunda.ExternalTaskQuery{TopicName: topic, TenantIDIn: []string{"no-such-tenant"}},
			raw: url.Values{"topicName": {topic}, "tenantIdIn": {"no-such-tenant"}}, exact: []string{}},
		{name: "waiting: not locked, retries left, active",
			q:       camunda.ExternalTaskQuery{TopicName: topic, Lock: camunda.LockNotLocked, Retries: camunda.RetriesLeft, Suspension: camunda.SuspensionActive},
			raw:     url.Values{"topicName": {topic}, "notLocked": {"true"}, "withRetriesLeft": {"true"}, "active": {"true"}},
			include: []string{waiting.ID, expired.ID}, exclude: []string{locked.ID, backoff.ID, suspended.ID, exhausted.ID}},
	}
	for _, f := range filters {
		t.Run("filter "+f.name, func(t *testing.T) {
			n := must(c.CountExternalTasks(ctx, f.q))(t)
			list := must(c.ListExternalTasks(ctx, f.q, camunda.Page{MaxResults: 50}))(t)
			want := must(hc.Count(ctx, "/external-task/count", f.raw))(t)
			if int(n) != want || len(list) != want {
				t.Errorf("count %d, list %d, harness count %d", n, len(list), want)
			}
			var ids []string
			for _, task := range list {
				ids = append(ids, task.ID)
			}
			if f.exact != nil {
				if !sameSet(ids, f.exact) {
					t.Errorf("got %v, want %v", ids, f.exact)
				}
				return
			}
			for _, id := range f.include {
				if !slices.Contains(ids, id) {
					t.Errorf("missing %s", id)
				}
			}
			for _, id := range f.exclude {
				if slices.Contains(ids, id) {
					t.Errorf("unexpected %s", id)
				}
			}
		})
	}

	t.Run("topic names", func(t *testing.T) {
		for _, tc := range []struct {
			locked, unlocked, retries bool
			raw                       url.Values
		}{
			{raw: url.Values{}},
			{locked: true, raw: url.Values{"withLockedTasks": {"true"}}},
			{unlocked: true, raw: url.Values{"withUnlockedTasks": {"true"}}},
			{retries: true, raw: url.Values{"withRetriesLeft": {"true"}}},
		} {
			got := must(c.TopicNames(ctx, tc.locked, tc.unlocked, tc.retries))(t)
			want := must(hc.TopicNames(ctx, tc.raw))(t)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("TopicNames(%v,%v,%v) = %v, harness %v", tc.locked, tc.unlocked, tc.retries, got, want)
			}
			if !slices.Contains(got, topic) {
				t.Errorf("TopicNames(%v,%v,%v) lacks %s", tc.locked, tc.unlocked, tc.retries, topic)
			}
		}
	})

	t.Run("paging", func(t *testing.T) {
		fetch := func(ctx context.Context, p camunda.Page) ([]camunda.ExternalTask, error) {
			return c.ListExternalTasks(ctx, camunda.ExternalTaskQuery{TopicName: topic}, p)
		}
		sorted := camunda.Page{Sort: camunda.Sort{By: camunda.ExternalTaskSortID}}
		for _, tc := range []struct {
			pageSize, cap, want int
			truncated           bool
		}{{2, 4, 4, true}, {2, 6, 6, false}, {4, 100, 6, false}, {10, 1, 1, true}} {
			items, truncated, err := camunda.Collect(ctx, sorted, tc.pageSize, tc.cap, fetch)
			if err != nil {
				t.Fatal(err)
			}
			if len(items) != tc.want || truncated != tc.truncated {
				t.Errorf("page %d cap %d: %d items, truncated %v; want %d, %v", tc.pageSize, tc.cap, len(items), truncated, tc.want, tc.truncated)
			}
			for i, it := range items {
				if it.ID != all[i].ID {
					t.Errorf("page %d cap %d: item %d = %s, want %s", tc.pageSize, tc.cap, i, it.ID, all[i].ID)
				}
			}
		}
	})

	t.Run("incidents", func(t *testing.T) {
		q := camunda.IncidentQuery{IncidentType: camunda.IncidentFailedExternalTask, ProcessDefinitionKeyIn: []string{key}}
		if n := must(c.CountIncidents(ctx, q))(t); n != 1 {
			t.Errorf("CountIncidents = %d, want 1", n)
		}
		incs := must(c.ListIncidents(ctx, q, camunda.Page{Sort: camunda.Sort{By: camunda.IncidentSortTimestamp}}))(t)
		raw := must(hc.Incidents(ctx, url.Values{"processDefinitionKeyIn": {key}}))(t)
		if len(incs) != 1 || len(raw) != 1 {
			t.Fatalf("incidents: %d, harness %d", len(incs), len(raw))
		}
		inc := incs[0]
		if inc.ID != raw[0].ID || inc.Configuration != exhausted.ID || inc.ActivityID != "task_1" || inc.ProcessInstanceID != raw[0].ProcessInstanceID {
			t.Errorf("incident %+v, harness %+v", inc, raw[0])
		}
		if ts, err := engineclient.ParseTime(raw[0].IncidentTimestamp); err != nil || !inc.IncidentTimestamp.Equal(ts) {
			t.Errorf("incidentTimestamp %v, harness %q (%v)", inc.IncidentTimestamp, raw[0].IncidentTimestamp, err)
		}
		for _, tc := range []struct {
			q    camunda.IncidentQuery
			raw  url.Values
			want int64
		}{
			{camunda.IncidentQuery{ActivityID: "task_1", ProcessDefinitionKeyIn: []string{key}}, url.Values{"activityId": {"task_1"}, "processDefinitionKeyIn": {key}}, 1},
			{camunda.IncidentQuery{IncidentType: camunda.IncidentFailedJob, ProcessDefinitionKeyIn: []string{key}}, url.Values{"incidentType": {"failedJob"}, "processDefinitionKeyIn": {key}}, 0},
			{camunda.IncidentQuery{ProcessDefinitionID: inc.ProcessDefinitionID}, url.Values{"processDefinitionId": {inc.ProcessDefinitionID}}, 1},
		} {
			n := must(c.CountIncidents(ctx, tc.q))(t)
			h := must(hc.Count(ctx, "/incident/count", tc.raw))(t)
			if n != tc.want || int(n) != h {
				t.Errorf("CountIncidents(%+v) = %d, harness %d, want %d", tc.q, n, h, tc.want)
			}
		}
		keys := must(c.ProcessDefinitionKeys(ctx, []string{inc.ProcessDefinitionID, "no-such-definition"}))(t)
		if len(keys) != 1 || keys[inc.ProcessDefinitionID] != key {
			t.Errorf("ProcessDefinitionKeys = %v, want %s -> %s", keys, inc.ProcessDefinitionID, key)
		}
	})

	t.Run("history", func(t *testing.T) {
		check := func(kind camunda.LogKind, param string, want int64) {
			t.Helper()
			raw := url.Values{"topicName": {topic}}
			if param != "" {
				raw.Set(param, "true")
			}
			n := must(c.CountExternalTaskLog(ctx, camunda.HistoryLogQuery{TopicName: topic, Log: kind}))(t)
			h := must(hc.Count(ctx, "/history/external-task-log/count", raw))(t)
			if int(n) != h || (want >= 0 && n != want) {
				t.Errorf("%s: count %d, harness %d, want %d", param, n, h, want)
			}
		}
		check(camunda.LogCreation, "creationLog", 6)
		check(camunda.LogFailure, "failureLog", 2)
		check(camunda.LogSuccess, "successLog", 0)
		check(camunda.LogDeletion, "deletionLog", 0)
		check(camunda.LogAny, "", 8)
		if err := w1.Complete(ctx, locked.ID, nil); err != nil {
			t.Fatal(err)
		}
		check(camunda.LogSuccess, "successLog", 1)
		if n := must(c.CountExternalTasks(ctx, camunda.ExternalTaskQuery{TopicName: topic}))(t); n != 5 {
			t.Errorf("after completion: %d tasks, want 5", n)
		}
	})

	t.Run("named engine path", func(t *testing.T) {
		named := engineClient(t, e, func(cfg *camunda.Config) { cfg.Engine = "default" })
		n := must(named.CountExternalTasks(ctx, camunda.ExternalTaskQuery{TopicName: topic}))(t)
		d := must(c.CountExternalTasks(ctx, camunda.ExternalTaskQuery{TopicName: topic}))(t)
		if n != d {
			t.Errorf("/engine/default: %d tasks, default root %d", n, d)
		}
		_, err := engineClient(t, e, func(cfg *camunda.Config) { cfg.Engine = "no-such-engine" }).CountExternalTasks(ctx, camunda.ExternalTaskQuery{})
		var ae *camunda.APIError
		if !errors.As(err, &ae) || ae.Status < 400 {
			t.Errorf("unknown engine: err = %v, want an HTTP error", err)
		} else {
			t.Logf("unknown engine answers: %v", err)
		}
	})
}

func compareTask(t *testing.T, got camunda.ExternalTask, r engineclient.ExternalTask) {
	t.Helper()
	if got.TopicName != r.TopicName || got.WorkerID != deref(r.WorkerID) || got.Suspended != r.Suspended ||
		got.Priority != r.Priority || got.ActivityID != r.ActivityID || got.ActivityInstanceID != r.ActivityInstanceID ||
		got.ExecutionID != r.ExecutionID || got.ProcessInstanceID != r.ProcessInstanceID ||
		got.ProcessDefinitionID != r.ProcessDefinitionID || got.ProcessDefinitionKey != r.ProcessDefinitionKey ||
		got.BusinessKey != deref(r.BusinessKey) || got.TenantID != deref(r.TenantID) || got.ErrorMessage != deref(r.ErrorMessage) {
		t.Errorf("task %s differs:\n client  %+v\n harness %+v", r.ID, got, r)
	}
	if (got.Retries == nil) != (r.Retries == nil) || (got.Retries != nil && *got.Retries != *r.Retries) {
		t.Errorf("task %s retries %v, harness %v", r.ID, got.Retries, r.Retries)
	}
	lt, ok, err := r.LockExpiration()
	if err != nil {
		t.Fatal(err)
	}
	if ok != (got.LockExpirationTime != nil) || (ok && !got.LockExpirationTime.Equal(lt)) {
		t.Errorf("task %s lock %v, harness %q", r.ID, got.LockExpirationTime, deref(r.LockExpirationTime))
	}
	if (r.CreateTime == nil) != (got.CreateTime == nil) {
		t.Errorf("task %s createTime %v, harness %v", r.ID, got.CreateTime, r.CreateTime)
	} else if r.CreateTime != nil {
		ct, err := engineclient.ParseTime(*r.CreateTime)
		if err != nil || !got.CreateTime.Equal(ct) {
			t.Errorf("task %s createTime %v, harness %q", r.ID, got.CreateTime, *r.CreateTime)
		}
		// The offset the engine wrote is kept.
		if !strings.HasSuffix(*r.CreateTime, got.CreateTime.Format("-0700")) {
			t.Errorf("task %s createTime offset: client %s, engine wrote %s", r.ID, got.CreateTime, *r.CreateTime)
		}
	}
}

func checkTaskStates(t *testing.T, byID map[string]camunda.ExternalTask, lockedID, exhaustedID, backoffID string, waiting, suspended camunda.ExternalTask) {
	t.Helper()
	now := time.Now()
	if l := byID[lockedID]; l.WorkerID != "w1" || l.LockExpirationTime == nil || !l.LockExpirationTime.After(now.Add(3*time.Minute)) || l.Retries != nil {
		t.Errorf("locked task: %+v", l)
	}
	if x := byID[exhaustedID]; x.Retries == nil || *x.Retries != 0 || x.ErrorMessage != "boom" {
		t.Errorf("exhausted task: %+v", x)
	}
	if b := byID[backoffID]; b.Retries == nil || *b.Retries != 2 || b.WorkerID != "w3" || b.LockExpirationTime == nil || !b.LockExpirationTime.After(now.Add(8*time.Minute)) {
		t.Errorf("task in retry backoff (worker kept, lock = retry timeout): %+v", b)
	}
	if waiting.WorkerID != "" || waiting.LockExpirationTime != nil || waiting.Retries != nil || waiting.Suspended {
		t.Errorf("waiting task: %+v", waiting)
	}
	if !suspended.Suspended || suspended.LockExpirationTime != nil {
		t.Errorf("suspended task: %+v", suspended)
	}
}

// testFixtureShapes compares the JSON keys of the hand-written fixtures in
// testdata with what the engine really returns (after the other subtests
// left tasks, incidents and jobs behind), so the unit tests cannot drift
// from the engine.
func testFixtureShapes(t *testing.T, ctx context.Context, hc *engineclient.Client) {
	for _, tc := range []struct{ endpoint, fixture string }{
		{"/version", "version.json"},
		{"/telemetry/data", "telemetry_data.json"},
		{"/external-task?maxResults=5", "external_task_list.json"},
		{"/external-task/count", "external_task_count.json"},
		{"/incident?maxResults=5", "incident_list.json"},
		{"/job?maxResults=5&noRetriesLeft=true", "job_list.json"},
		{"/process-definition?maxResults=5", "process_definition_list.json"},
		{"/history/external-task-log/count", "history_external_task_log_count.json"},
		{"/process-definition/key/no-such-key", "error_404.json"},
	} {
		resp, err := hc.Raw(ctx, http.MethodGet, tc.endpoint, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		fixture, err := os.ReadFile(filepath.Join("testdata", tc.fixture))
		if err != nil {
			t.Fatal(err)
		}
		real, want := jsonKeys(t, resp.Body), jsonKeys(t, fixture)
		if real == nil {
			t.Errorf("%s: engine returned no object to compare (HTTP %d %s)", tc.endpoint, resp.Status, truncateBody(resp.Body))
			continue
		}
		if !slices.Equal(real, want) {
			t.Errorf("%s (HTTP %d): keys differ from %s\n engine  %v\n fixture %v", tc.endpoint, resp.Status, tc.fixture, real, want)
		}
	}
}

// jsonKeys returns the sorted top-level keys of a JSON object, or of the
// first element of a JSON array of objects.
func jsonKeys(t *testing.T, body []byte) []string {
	t.Helper()
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("not JSON: %s", truncateBody(body))
	}
	if arr, ok := v.([]any); ok {
		if len(arr) == 0 {
			return nil
		}
		v = arr[0]
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// failingJobProcess is an async service task whose expression cannot be
// resolved: the job executor fails it until its retries run out and a
// failedJob incident appears.
func failingJobProcess(key string) []byte {
	return engineclient.Chain(key, engineclient.Task{ID: "reserve", Expression: "${noSuchBean.reserve()}", Async: true})
}

func testJobs(t *testing.T, ctx context.Context, c *camunda.Client, hc *engineclient.Client) {
	key := camundatest.UniqueName(t.Name(), "jobs")
	must(hc.Deploy(ctx, key, map[string][]byte{key + ".bpmn": failingJobProcess(key)}))(t)
	must(hc.StartProcess(ctx, key, "", nil))(t)

	exhausted := camunda.JobQuery{ProcessDefinitionKey: key, Retries: camunda.RetriesNone}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		n := must(c.CountJobs(ctx, exhausted))(t)
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the job executor did not exhaust the job's retries in time (count %d)", n)
		}
		time.Sleep(500 * time.Millisecond)
	}
	jobs := must(c.ListJobs(ctx, camunda.JobQuery{ProcessDefinitionKey: key}, camunda.Page{Sort: camunda.Sort{By: camunda.JobSortID}}))(t)
	if len(jobs) != 1 {
		t.Fatalf("ListJobs: %d jobs", len(jobs))
	}
	j := jobs[0]
	if j.Retries != 0 || j.ExceptionMessage == "" || j.ProcessDefinitionKey != key || j.Suspended {
		t.Errorf("job = %+v", j)
	}
	t.Logf("job: failedActivityId %q, createTime %v, exception %q", j.FailedActivityID, j.CreateTime, j.ExceptionMessage)
	for _, tc := range []struct {
		name string
		q    camunda.JobQuery
		raw  url.Values
		want int64
	}{
		{"no retries left", exhausted, url.Values{"processDefinitionKey": {key}, "noRetriesLeft": {"true"}}, 1},
		{"with retries left", camunda.JobQuery{ProcessDefinitionKey: key, Retries: camunda.RetriesLeft}, url.Values{"processDefinitionKey": {key}, "withRetriesLeft": {"true"}}, 0},
		{"executable", camunda.JobQuery{ProcessDefinitionKey: key, Executable: true}, url.Values{"processDefinitionKey": {key}, "executable": {"true"}}, 0},
		{"with exception", camunda.JobQuery{ProcessDefinitionKey: key, WithException: true}, url.Values{"processDefinitionKey": {key}, "withException": {"true"}}, 1},
		{"messages", camunda.JobQuery{ProcessDefinitionKey: key, Messages: true}, url.Values{"processDefinitionKey": {key}, "messages": {"true"}}, 1},
		{"timers", camunda.JobQuery{ProcessDefinitionKey: key, Timers: true}, url.Values{"processDefinitionKey": {key}, "timers": {"true"}}, 0},
		{"activity", camunda.JobQuery{ActivityID: "reserve", ProcessDefinitionID: j.ProcessDefinitionID}, url.Values{"activityId": {"reserve"}, "processDefinitionId": {j.ProcessDefinitionID}}, 1},
		{"suspended", camunda.JobQuery{ProcessDefinitionKey: key, Suspension: camunda.SuspensionSuspended}, url.Values{"processDefinitionKey": {key}, "suspended": {"true"}}, 0},
	} {
		n := must(c.CountJobs(ctx, tc.q))(t)
		h := must(hc.Count(ctx, "/job/count", tc.raw))(t)
		list := must(c.ListJobs(ctx, tc.q, camunda.Page{}))(t)
		if n != tc.want || int(n) != h || len(list) != int(n) {
			t.Errorf("%s: count %d, list %d, harness %d, want %d", tc.name, n, len(list), h, tc.want)
		}
	}
	incs := must(c.ListIncidents(ctx, camunda.IncidentQuery{IncidentType: camunda.IncidentFailedJob, ProcessDefinitionKeyIn: []string{key}}, camunda.Page{}))(t)
	if len(incs) != 1 || incs[0].Configuration != j.ID || incs[0].JobDefinitionID != j.JobDefinitionID {
		t.Fatalf("failedJob incidents = %+v (want one, configuration = job id)", incs)
	}
	keys := must(c.ProcessDefinitionKeys(ctx, []string{incs[0].ProcessDefinitionID}))(t)
	if keys[incs[0].ProcessDefinitionID] != key {
		t.Errorf("ProcessDefinitionKeys = %v", keys)
	}
}

const maxResultsLimit = 10

func propertyPrefix(f camundatest.Flavor) string {
	if f == camundatest.FlavorOperaton {
		return "operaton"
	}
	return "camunda"
}

// Basic auth and queryMaxResultsLimit against an engine that enforces both.
func TestEngineAuth(t *testing.T) {
	const user, pass = "exporter", "Engine-Test-Pa55"
	for _, flavor := range camundatest.Flavors() {
		t.Run(string(flavor), func(t *testing.T) {
			// queryMaxResultsLimit is enforced for authenticated users only,
			// so this engine has both.
			e := camundatest.SharedWith(t, camundatest.Options{Flavor: flavor, Username: user, Password: pass,
				ExtraArgs: []string{fmt.Sprintf("--%s.bpm.generic-properties.properties.queryMaxResultsLimit=%d", propertyPrefix(flavor), maxResultsLimit)}})
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()

			ok := engineClient(t, e, nil)
			if _, err := ok.CountExternalTasks(ctx, camunda.ExternalTaskQuery{}); err != nil {
				t.Fatalf("with the right credentials: %v", err)
			}
			if _, err := ok.ListExternalTasks(ctx, camunda.ExternalTaskQuery{}, camunda.Page{MaxResults: 5}); err != nil {
				t.Fatalf("list with the right credentials: %v", err)
			}
			// The limit: lists within it work, a page beyond it is a 400
			// carrying the engine's message, and the unbound list the
			// client never sends is refused.
			if _, err := ok.ListExternalTasks(ctx, camunda.ExternalTaskQuery{}, camunda.Page{MaxResults: maxResultsLimit}); err != nil {
				t.Errorf("page at the limit: %v", err)
			}
			_, err := ok.ListExternalTasks(ctx, camunda.ExternalTaskQuery{}, camunda.Page{MaxResults: maxResultsLimit + 1})
			var ae *camunda.APIError
			if !errors.As(err, &ae) || ae.Status != http.StatusBadRequest || ae.Message == "" || ae.Attempts != 1 {
				t.Errorf("page beyond the limit: err = %v", err)
			} else {
				t.Logf("page beyond the limit: %v", err)
			}
			if resp, err := e.Client().Raw(ctx, http.MethodGet, "/external-task", nil, ""); err != nil ||
				resp.Status != http.StatusBadRequest || !strings.Contains(string(resp.Body), "An unbound number of results is forbidden!") {
				t.Errorf("list without maxResults: %v %+v", err, resp)
			}
			if n, err := ok.CountExternalTasks(ctx, camunda.ExternalTaskQuery{}); err != nil || n < 0 {
				t.Errorf("counts are not limited: %d, %v", n, err)
			}
			// A client told about the limit stays within it on its own.
			limited := engineClient(t, e, func(cfg *camunda.Config) { cfg.MaxResultsLimit = maxResultsLimit })
			if _, err := limited.ListExternalTasks(ctx, camunda.ExternalTaskQuery{}, camunda.Page{}); err != nil {
				t.Errorf("default page with MaxResultsLimit: %v", err)
			}
			ids := make([]string, 3*maxResultsLimit)
			for i := range ids {
				ids[i] = fmt.Sprintf("no-such-definition:%d", i)
			}
			if keys, err := limited.ProcessDefinitionKeys(ctx, ids); err != nil || len(keys) != 0 {
				t.Errorf("definition lookup with MaxResultsLimit: %v, %v", keys, err)
			}

			for _, tc := range []struct {
				name       string
				user, pass string
				wantText   string
			}{
				{"wrong password", user, "wrong-" + pass, "refused the configured credentials"},
				{"no credentials", "", "", "no credentials are configured"},
			} {
				c := engineClient(t, e, func(cfg *camunda.Config) { cfg.Username, cfg.Password = tc.user, tc.pass })
				_, err := c.CountExternalTasks(ctx, camunda.ExternalTaskQuery{})
				if !camunda.IsStatus(err, http.StatusUnauthorized) || !strings.Contains(err.Error(), tc.wantText) {
					t.Errorf("%s: err = %v", tc.name, err)
				}
				if strings.Contains(err.Error(), pass) {
					t.Errorf("%s: error leaks the password: %v", tc.name, err)
				}
			}

		})
	}
}

func truncateBody(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}
