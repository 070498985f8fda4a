package collectors

// fakeCamunda is an httptest engine for unit tests: an in-memory set of
// external tasks, history counts, incidents and jobs with a settable clock,
// answering the REST calls the collector makes with the engine's filter
// semantics (as verified against real engines in internal/camundatest and
// camunda/engine_test.go). It counts requests per endpoint.

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
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
}

type fakeIncident struct {
	id, typ, defID, activity string
	ts                       time.Time
}

type fakeLogEntry struct {
	taskID, topic string
	ts            time.Time
}

type fakeJob struct {
	id, defID, defKey string
	retries           int
}

type fakeCamunda struct {
	*httptest.Server
	mu        sync.Mutex
	now       time.Time
	version   string
	tasks     []*fakeTask
	failures  map[string]int64
	successes map[string]int64
	failLog   []fakeLogEntry // failure log entries written by failure()
	incidents []fakeIncident
	jobs      []fakeJob
	defs      map[string]string // id -> key
	requests  map[string]int
	fail      map[string]int // path -> HTTP status to answer instead
	noCreate  bool           // answer 400 to sortBy=createTime (engines before 7.21)
	// onRequest, when set, runs at the start of every request with the
	// engine locked (it may change the engine's data directly): what
	// happens in the engine between two of the collector's requests.
	onRequest func(path string, q url.Values)
}

func newFakeCamunda(t *testing.T) *fakeCamunda {
	f := &fakeCamunda{
		now:      time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC),
		version:  "7.24.0",
		failures: map[string]int64{}, successes: map[string]int64{},
		defs: map[string]string{}, requests: map[string]int{}, fail: map[string]int{},
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
	return t
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
	f.failures[t.topic]++
	f.failLog = append(f.failLog, fakeLogEntry{t.id, t.topic, f.now})
}

func (f *fakeCamunda) complete(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, t := range f.tasks {
		if t.id == id {
			f.tasks = append(f.tasks[:i], f.tasks[i+1:]...)
			f.successes[t.topic]++
			return
		}
	}
	panic("no task " + id)
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

func intp(i int) *int { return &i }

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
		var out []string
		for _, t := range f.tasks {
			if !seen[t.topic] {
				seen[t.topic] = true
				out = append(out, t.topic)
			}
		}
		sort.Strings(out)
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
			if t.exp != nil {
				m["lockExpirationTime"] = camunda.FormatTime(*t.exp)
			}
			if !f.noCreate {
				m["createTime"] = camunda.FormatTime(t.created)
			}
			out = append(out, m)
		}
		reply(out)
	case "/history/external-task-log/count":
		var n int64
		src := f.successes
		if q.Get("failureLog") == "true" {
			src = f.failures
		}
		for topic, c := range src {
			if q.Get("topicName") == "" || q.Get("topicName") == topic {
				n += c
			}
		}
		reply(map[string]int64{"count": n})
	case "/history/external-task-log":
		if q.Get("failureLog") != "true" || q.Get("sortBy") != "timestamp" || q.Get("sortOrder") != "desc" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		var es []fakeLogEntry
		for i := len(f.failLog) - 1; i >= 0; i-- {
			if e := f.failLog[i]; q.Get("topicName") == "" || q.Get("topicName") == e.topic {
				es = append(es, e)
			}
		}
		out := []map[string]any{}
		for _, e := range page(es, q) {
			out = append(out, map[string]any{"id": "log-" + e.taskID, "externalTaskId": e.taskID, "topicName": e.topic,
				"failureLog": true, "timestamp": camunda.FormatTime(e.ts)})
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
				"activityId": in.activity, "incidentTimestamp": camunda.FormatTime(in.ts)})
		}
		reply(out)
	case "/job/count", "/job":
		var js []fakeJob
		for _, j := range f.jobs {
			if q.Get("noRetriesLeft") != "true" || j.retries == 0 {
				js = append(js, j)
			}
		}
		if path == "/job/count" {
			count(len(js))
			return
		}
		out := []map[string]any{}
		for _, j := range page(js, q) {
			out = append(out, map[string]any{"id": j.id, "processDefinitionId": j.defID, "processDefinitionKey": j.defKey, "retries": j.retries})
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
	out := []*fakeTask{}
	for _, t := range f.tasks {
		locked := t.exp != nil && t.exp.After(f.now)
		switch {
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
