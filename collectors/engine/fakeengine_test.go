//go:build !pgonly

package engine_test

// fakeCamunda is an httptest engine for unit tests: an in-memory set of
// external tasks, history counts, incidents and jobs with a settable clock,
// answering the REST calls the collector makes with the engine's filter
// semantics (as verified against real engines in test/harness/camundatest and
// camunda/engine_test.go). It counts requests per endpoint.

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/camunda"
)

type fakeTask struct {
	id, topic, worker string
	exp               *time.Time
	retries           *int
	errMsg            string
	suspended         bool
	created           time.Time
	defID, activity   string
	tenant            string // "": none
}

type fakeIncident struct {
	id, typ, defID, activity string
	ts                       time.Time
	config                   string // failedExternalTask: the task id
}

// fakeLogEntry is one external task history log entry; kind is
// "creation", "failure", "success" or "deletion".
type fakeLogEntry struct {
	id, taskID, topic, kind, worker string
	ts                              time.Time
	activity, actInst, rootPI       string
	errMsg                          string // a failure's
}

// fakeCleanable is one definition version's line of the cleanable process
// instance report.
type fakeCleanable struct {
	defID, key          string
	ttl                 *int
	finished, cleanable int64
}

// fakeActInst is a historic activity instance.
type fakeActInst struct {
	id, activity, typ, rootPI string
	start, end                time.Time
	completeScope             bool
}

type fakeJob struct {
	id, defID, defKey string
	retries           int
	due               *time.Time // nil: due since created
	created           time.Time
	suspended         bool // the job itself
	piSuspended       bool // its process instance
}

// fakeJobLogEntry is one job history log entry; kind as in fakeLogEntry.
type fakeJobLogEntry struct {
	id, jobID, key, kind string
	ts                   time.Time
}

type fakeCamunda struct {
	*httptest.Server
	mu        sync.Mutex
	now       time.Time
	version   string
	tasks     []*fakeTask
	log       []fakeLogEntry // the history log, in insertion order
	logSeq    int
	incidents []fakeIncident
	actInsts  []fakeActInst
	jobs      []fakeJob
	jobLog    []fakeJobLogEntry
	defs      map[string]string // id -> key
	// defTenants are the definitions' tenants (absent: none).
	defTenants map[string]string
	instances  map[string]int // definition id -> running process instances
	// cleanable is the cleanable process instance report; cleanupJobs the
	// history cleanup's jobs (none: the engine answers 404).
	cleanable   []fakeCleanable
	cleanupJobs []map[string]any
	requests    map[string]int
	fail        map[string]int // path -> HTTP status to answer instead
	noCreate    bool           // answer 400 to sortBy=createTime (engines before 7.21)
	// reverseTopics lists topic names in reverse order (an engine whose
	// database sorts them otherwise).
	reverseTopics bool
	// onRequest, when set, runs at the start of every request with the
	// engine locked (it may change the engine's data directly): what
	// happens in the engine between two of the collector's requests.
	onRequest func(path string, q url.Values)
}

func newFakeCamunda(t *testing.T) *fakeCamunda {
	f := &fakeCamunda{
		now:     time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC),
		version: "7.24.0",
		defs:    map[string]string{}, defTenants: map[string]string{}, instances: map[string]int{}, requests: map[string]int{}, fail: map[string]int{},
	}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeCamunda) URL() string { return f.Server.URL + "/engine-rest" }

func (f *fakeCamunda) advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
}

func (f *fakeCamunda) add(t *fakeTask) *fakeTask {
	f.mu.Lock()
	defer f.mu.Unlock()
	if t.created.IsZero() {
		t.created = f.now
	}
	if t.defID == "" {
		t.defID = "proc:1:abc"
		f.defs[t.defID] = "proc"
	}
	if t.activity == "" {
		t.activity = "task_1"
	}
	f.tasks = append(f.tasks, t)
	f.logLocked(t.id, t.topic, "creation", "", f.now)
	return t
}

// logLocked appends a history log entry (f.mu held); worker is the task's
// worker when the entry is written, as the engine records it.
func (f *fakeCamunda) logLocked(taskID, topic, kind, worker string, ts time.Time) {
	f.logSeq++
	f.log = append(f.log, fakeLogEntry{id: fmt.Sprintf("log%06d", f.logSeq), taskID: taskID, topic: topic, kind: kind, worker: worker, ts: ts,
		activity: "task_1", actInst: "ai-" + taskID, rootPI: "pi-" + taskID})
}

// bpmnError removes a task as a worker's bpmnError does: a deletion entry,
// and in the activity instance history either an error catch event started
// in the task's root process instance (caught) or the task's activity
// instance completing its scope (uncaught).
func (f *fakeCamunda) bpmnError(id string, caught bool) {
	f.deleteTask(id)
	f.mu.Lock()
	defer f.mu.Unlock()
	if caught {
		f.actInsts = append(f.actInsts, fakeActInst{id: "catch-" + id, activity: "caught", typ: "boundaryError", rootPI: "pi-" + id,
			start: f.now.Add(time.Millisecond), end: f.now.Add(time.Millisecond)})
	} else {
		f.actInsts = append(f.actInsts, fakeActInst{id: "ai-" + id, activity: "task_1", typ: "serviceTask", rootPI: "pi-" + id,
			start: f.now.Add(-time.Minute), end: f.now, completeScope: true})
	}
}

// history appends n history log entries of a kind for a topic, written at
// the engine's now minus age (a late commit when age > 0).
func (f *fakeCamunda) history(topic, kind string, n int, age time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := 0; i < n; i++ {
		f.logLocked(fmt.Sprintf("h%d", f.logSeq), topic, kind, "w", f.now.Add(-age))
	}
}

// cleanup removes the history log entries older than age (history cleanup).
func (f *fakeCamunda) cleanup(age time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	keep := f.log[:0]
	for _, e := range f.log {
		if !e.ts.Before(f.now.Add(-age)) {
			keep = append(keep, e)
		}
	}
	f.log = keep
}

func (f *fakeCamunda) task(id string) *fakeTask {
	for _, t := range f.tasks {
		if t.id == id {
			return t
		}
	}
	panic("no task " + id)
}

// Worker actions, with the engine's semantics.
func (f *fakeCamunda) lock(id, worker string, d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := f.task(id)
	e := f.now.Add(d)
	t.worker, t.exp = worker, &e
}

func (f *fakeCamunda) failure(id string, retries int, timeout time.Duration, msg string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := f.task(id)
	e := f.now.Add(timeout)
	t.exp, t.retries, t.errMsg = &e, &retries, msg
	f.logLocked(t.id, t.topic, "failure", t.worker, f.now)
	f.log[len(f.log)-1].errMsg = msg
	if retries == 0 {
		// Out of retries: the engine opens an incident whose
		// configuration is the task id.
		f.incidents = append(f.incidents, fakeIncident{id: "inc-" + t.id, typ: "failedExternalTask", defID: t.defID,
			activity: t.activity, ts: f.now, config: t.id})
	}
}

func (f *fakeCamunda) complete(id string) { f.endTask(id, "success") }

// endTask removes a task, writing the history entry of kind (success,
// deletion) with the task's worker.
func (f *fakeCamunda) endTask(id, kind string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, t := range f.tasks {
		if t.id == id {
			f.tasks = append(f.tasks[:i], f.tasks[i+1:]...)
			f.logLocked(t.id, t.topic, kind, t.worker, f.now)
			return
		}
	}
	panic("no task " + id)
}

// addJob adds a job created now (with its creation log entry).
func (f *fakeCamunda) addJob(j fakeJob) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if j.created.IsZero() {
		j.created = f.now
	}
	f.jobs = append(f.jobs, j)
	f.jobLogLocked(j.id, j.defKey, "creation")
}

// executeJob runs a job as the job executor would: on success it is gone,
// on failure its retries drop by one; either writes a job log entry.
func (f *fakeCamunda) executeJob(id string, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.jobs {
		j := &f.jobs[i]
		if j.id != id {
			continue
		}
		if ok {
			f.jobLogLocked(j.id, j.defKey, "success")
			f.jobs = append(f.jobs[:i], f.jobs[i+1:]...)
		} else {
			j.retries--
			f.jobLogLocked(j.id, j.defKey, "failure")
		}
		return
	}
	panic("no job " + id)
}

func (f *fakeCamunda) jobLogLocked(jobID, key, kind string) {
	f.logSeq++
	f.jobLog = append(f.jobLog, fakeJobLogEntry{id: fmt.Sprintf("jl%06d", f.logSeq), jobID: jobID, key: key, kind: kind, ts: f.now})
}

func (f *fakeCamunda) requestCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.requests {
		n += c
	}
	return n
}

func (f *fakeCamunda) resetRequests() {
	f.mu.Lock()
	defer f.mu.Unlock()
	clear(f.requests)
}

func (f *fakeCamunda) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	path := strings.TrimPrefix(r.URL.Path, "/engine-rest")
	f.requests[path]++
	if f.onRequest != nil {
		f.onRequest(path, r.URL.Query())
	}
	w.Header().Set("Date", f.now.UTC().Format(http.TimeFormat))
	if st := f.fail[path]; st != 0 {
		w.WriteHeader(st)
		_, _ = w.Write([]byte(`{"type":"TestException","message":"injected"}`))
		return
	}
	q := r.URL.Query()
	reply := func(v any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
	count := func(n int) { reply(map[string]int{"count": n}) }
	switch path {
	case "/version":
		reply(map[string]string{"version": f.version})
	case "/telemetry/data":
		reply(map[string]any{"product": map[string]string{"name": "Camunda BPM Runtime"}})
	case "/external-task/topic-names":
		seen := map[string]bool{}
		out := []string{} // the engine answers [], never null
		for _, t := range f.tasks {
			if !seen[t.topic] {
				seen[t.topic] = true
				out = append(out, t.topic)
			}
		}
		sort.Strings(out)
		if f.reverseTopics {
			slices.Reverse(out)
		}
		reply(out)
	case "/external-task/count":
		count(len(f.filterTasks(w, q)))
	case "/external-task":
		ts := f.filterTasks(w, q)
		if ts == nil && q.Get("sortBy") == "createTime" && f.noCreate {
			return
		}
		switch q.Get("sortBy") {
		case "id":
			sort.Slice(ts, func(i, j int) bool { return ts[i].id < ts[j].id })
		case "createTime":
			sort.SliceStable(ts, func(i, j int) bool { return ts[i].created.Before(ts[j].created) })
		}
		out := []map[string]any{}
		for _, t := range page(ts, q) {
			m := map[string]any{"id": t.id, "topicName": t.topic, "retries": t.retries, "suspended": t.suspended,
				"processDefinitionId": t.defID, "activityId": t.activity}
			if t.worker != "" {
				m["workerId"] = t.worker
			}
			if t.errMsg != "" {
				m["errorMessage"] = t.errMsg
			}
			if t.tenant != "" {
				m["tenantId"] = t.tenant
			}
			if t.exp != nil {
				m["lockExpirationTime"] = camunda.FormatTime(*t.exp)
			}
			if !f.noCreate {
				m["createTime"] = camunda.FormatTime(t.created)
			}
			out = append(out, m)
		}
		reply(out)
	case "/history/external-task-log/count", "/history/external-task-log":
		var es []fakeLogEntry
		for _, e := range f.log {
			if (q.Get("topicName") == "" || q.Get("topicName") == e.topic) &&
				(q.Get("failureLog") != "true" || e.kind == "failure") &&
				(q.Get("successLog") != "true" || e.kind == "success") {
				es = append(es, e)
			}
		}
		if path == "/history/external-task-log/count" {
			count(len(es))
			return
		}
		if q.Get("sortBy") != "timestamp" || q.Get("sortOrder") != "desc" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		newestFirst(es)
		out := []map[string]any{}
		for _, e := range page(es, q) {
			out = append(out, map[string]any{"id": e.id, "externalTaskId": e.taskID, "topicName": e.topic, "workerId": e.worker,
				e.kind + "Log": true, "timestamp": camunda.FormatTime(e.ts),
				"activityId": e.activity, "activityInstanceId": e.actInst, "rootProcessInstanceId": e.rootPI, "errorMessage": e.errMsg})
		}
		reply(out)
	case "/history/activity-instance":
		after := func(k string) time.Time {
			if v := q.Get(k); v != "" {
				ts, err := camunda.ParseTime(v)
				if err != nil {
					panic(err)
				}
				return ts
			}
			return time.Time{}
		}
		started, finished := after("startedAfter"), after("finishedAfter")
		var as []fakeActInst
		for _, a := range f.actInsts {
			switch {
			case q.Get("activityId") != "" && q.Get("activityId") != a.activity,
				q.Get("activityType") != "" && q.Get("activityType") != a.typ,
				q.Get("completeScope") == "true" && !a.completeScope,
				!started.IsZero() && a.start.Before(started),
				!finished.IsZero() && a.end.Before(finished):
				continue
			}
			as = append(as, a)
		}
		sort.SliceStable(as, func(i, j int) bool { return as[i].start.Before(as[j].start) })
		out := []map[string]any{}
		for _, a := range page(as, q) {
			out = append(out, map[string]any{"id": a.id, "activityId": a.activity, "activityType": a.typ, "rootProcessInstanceId": a.rootPI,
				"startTime": camunda.FormatTime(a.start), "endTime": camunda.FormatTime(a.end), "completeScope": a.completeScope})
		}
		reply(out)
	case "/history/job-log":
		if q.Get("sortBy") != "timestamp" || q.Get("sortOrder") != "desc" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		es := append([]fakeJobLogEntry(nil), f.jobLog...)
		newestFirst(es)
		out := []map[string]any{}
		for _, e := range page(es, q) {
			out = append(out, map[string]any{"id": e.id, "jobId": e.jobID, "processDefinitionKey": e.key,
				e.kind + "Log": true, "timestamp": camunda.FormatTime(e.ts)})
		}
		reply(out)
	case "/incident/count", "/incident":
		var ins []fakeIncident
		for _, in := range f.incidents {
			if typ := q.Get("incidentType"); typ == "" || typ == in.typ {
				ins = append(ins, in)
			}
		}
		if path == "/incident/count" {
			count(len(ins))
			return
		}
		sort.SliceStable(ins, func(i, j int) bool { return ins[i].ts.Before(ins[j].ts) })
		out := []map[string]any{}
		for _, in := range page(ins, q) {
			out = append(out, map[string]any{"id": in.id, "incidentType": in.typ, "processDefinitionId": in.defID,
				"activityId": in.activity, "incidentTimestamp": camunda.FormatTime(in.ts), "configuration": in.config})
		}
		reply(out)
	case "/job/count", "/job":
		var js []fakeJob
		for _, j := range f.jobs {
			executable := j.retries > 0 && (j.due == nil || !j.due.After(f.now)) && !j.piSuspended
			switch {
			case q.Get("noRetriesLeft") == "true" && j.retries != 0,
				q.Get("executable") == "true" && !executable,
				q.Get("active") == "true" && j.suspended:
				continue
			}
			js = append(js, j)
		}
		if q.Get("sortBy") != "" && q.Get("sortBy") != "jobId" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		sort.SliceStable(js, func(i, k int) bool { return js[i].id < js[k].id })
		if path == "/job/count" {
			count(len(js))
			return
		}
		out := []map[string]any{}
		for _, j := range page(js, q) {
			m := map[string]any{"id": j.id, "processDefinitionId": j.defID, "processDefinitionKey": j.defKey, "retries": j.retries,
				"createTime": camunda.FormatTime(j.created), "suspended": j.suspended}
			if j.due != nil {
				m["dueDate"] = camunda.FormatTime(*j.due)
			}
			out = append(out, m)
		}
		reply(out)
	case "/history/process-definition/cleanable-process-instance-report":
		out := []map[string]any{}
		for _, c := range page(f.cleanable, q) {
			out = append(out, map[string]any{"processDefinitionId": c.defID, "processDefinitionKey": c.key, "historyTimeToLive": c.ttl,
				"finishedProcessInstanceCount": c.finished, "cleanableProcessInstanceCount": c.cleanable})
		}
		reply(out)
	case "/history/cleanup/configuration":
		reply(map[string]any{"batchWindowStartTime": nil, "batchWindowEndTime": nil, "enabled": true})
	case "/history/cleanup/jobs":
		if len(f.cleanupJobs) == 0 {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		reply(f.cleanupJobs)
	case "/process-definition/statistics":
		// Every definition, with its running instances (0 without).
		out := []map[string]any{}
		for _, id := range slices.Sorted(maps.Keys(f.defs)) {
			out = append(out, map[string]any{"id": id, "instances": f.instances[id], "failedJobs": 0,
				"definition": map[string]any{"id": id, "key": f.defs[id], "tenantId": f.defTenants[id]}})
		}
		reply(out)
	case "/process-definition":
		out := []map[string]any{}
		for _, id := range strings.Split(q.Get("processDefinitionIdIn"), ",") {
			if key, ok := f.defs[id]; ok {
				out = append(out, map[string]any{"id": id, "key": key})
			}
		}
		reply(out)
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

func (e fakeLogEntry) sortKey() (time.Time, string)    { return e.ts, e.id }
func (e fakeJobLogEntry) sortKey() (time.Time, string) { return e.ts, e.id }

// newestFirst sorts log entries as the engine answers sortBy=timestamp and
// sortOrder=desc: by timestamp, then (DISTINCT over all columns) by id.
func newestFirst[E interface{ sortKey() (time.Time, string) }](es []E) {
	slices.SortStableFunc(es, func(a, b E) int {
		ta, ida := a.sortKey()
		tb, idb := b.sortKey()
		return cmp.Or(tb.Compare(ta), strings.Compare(ida, idb))
	})
}

func page[T any](xs []T, q map[string][]string) []T {
	first, _ := strconv.Atoi(get(q, "firstResult"))
	max, err := strconv.Atoi(get(q, "maxResults"))
	if err != nil {
		panic("list request without maxResults")
	}
	if first >= len(xs) {
		return nil
	}
	xs = xs[first:]
	if max < len(xs) {
		xs = xs[:max]
	}
	return xs
}

func get(q map[string][]string, k string) string {
	if v := q[k]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// filterTasks applies the engine's filters (booleans only when "true").
// It writes a 400 and returns nil for sortBy=createTime on an old engine.
func (f *fakeCamunda) filterTasks(w http.ResponseWriter, q map[string][]string) []*fakeTask {
	if get(q, "sortBy") == "createTime" && f.noCreate {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"type":"InvalidRequestException","message":"Cannot set query parameter 'sortBy' to value 'createTime'"}`))
		return nil
	}
	is := func(k string) bool { return get(q, k) == "true" }
	var before time.Time
	if s := get(q, "lockExpirationBefore"); s != "" {
		var err error
		if before, err = camunda.ParseTime(s); err != nil {
			panic(err)
		}
	}
	var tenants []string
	if s := get(q, "tenantIdIn"); s != "" {
		tenants = strings.Split(s, ",")
	}
	out := []*fakeTask{}
	for _, t := range f.tasks {
		locked := t.exp != nil && t.exp.After(f.now)
		switch {
		case tenants != nil && !slices.Contains(tenants, t.tenant):
			continue
		case get(q, "topicName") != "" && get(q, "topicName") != t.topic,
			get(q, "workerId") != "" && get(q, "workerId") != t.worker,
			is("locked") && !locked,
			is("notLocked") && locked,
			is("withRetriesLeft") && t.retries != nil && *t.retries == 0,
			is("noRetriesLeft") && (t.retries == nil || *t.retries != 0),
			is("active") && t.suspended,
			is("suspended") && !t.suspended,
			!before.IsZero() && (t.exp == nil || !t.exp.Before(before)):
			continue
		}
		out = append(out, t)
	}
	return out
}

// deleteTask removes a task as a BPMN error or a cancellation does,
// writing a deletion entry with the task's worker.
func (f *fakeCamunda) deleteTask(id string) { f.endTask(id, "deletion") }
