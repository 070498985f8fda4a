package rest

import (
	"log/slog"
	"maps"
	"slices"
	"sync"

	"github.com/workflow-exporter/workflow-exporter/camunda"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine/capability"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine/reading"
	"github.com/workflow-exporter/workflow-exporter/config"
)

// Reader reads an engine over its REST API, aspect by aspect: tasks.go,
// history.go, activities.go, incidents.go, jobs.go, processes.go,
// cleanup.go, levels.go. What it asks, and why each request costs what it
// costs, is in docs/camunda-states.md ("The cost of a collection"). In
// short, per collection of the "camunda" collector:
//
//   - one GET /external-task/topic-names;
//   - engine-wide counts per state group (suspended, retries exhausted,
//     locked, lapsed; the total too when topics are folded into "other");
//   - the history log entries new since the previous collection, newest
//     first, in pages (one request when little happened);
//   - per topic that holds tasks: one count of its open tasks, and, when
//     it has a fetchable task, one request for its oldest (two on 7.21 to
//     7.23, a list and a history request per activity before 7.21:
//     oldest.go);
//   - the suspended and retries-exhausted tasks listed engine-wide and
//     grouped by topic when that takes fewer requests than one count per
//     topic, otherwise counted per topic;
//   - the locked and lapsed tasks listed engine-wide when they fit in
//     max_listed_tasks (their per-topic counts then come from the lists),
//     otherwise counted per topic and listed topic by topic within the
//     budget;
//   - incidents: a count, and a list when not 0.
//
// Independent requests run concurrently, at most request_concurrency at a
// time. The history is read before any task list, so a failure the lists
// show is never attributed to an earlier collection (see locks.go in
// collectors/engine).
type Reader struct {
	client *camunda.Client
	engine string
	logger *slog.Logger
	// concurrency bounds the requests in flight (request_concurrency).
	concurrency int
	// logs are the entries each log's previous reading found, the size of
	// its next first page (logPages).
	logs *logHints
	// times is what the engine version shows of its external tasks'
	// createTime (oldest.go); noJobCreateTime: the version whose jobs carry
	// none (the oldest executable age is then not reported).
	times           *taskTimes
	noJobCreateTime *versionFlag
	// perms are the engine's answers on the grants each collector needs
	// (capability.Permissions).
	perms *capability.Permissions
	// tenants: tenant_label is on (tenants.go); seen are the tenants
	// the readings met in tasks and history, beside those of the deployed
	// definitions.
	tenants bool
	seen    *tenantSet
}

var _ reading.Reader = (*Reader)(nil)

func New(cfg config.Camunda, client *camunda.Client, logger *slog.Logger) *Reader {
	return &Reader{client: client, engine: cfg.Name, logger: logger,
		perms:       capability.NewPermissions(client, cfg, logger),
		concurrency: cfg.RequestConcurrency, logs: &logHints{n: map[string]int{}},
		tenants: cfg.TenantLabel, seen: &tenantSet{ids: map[string]bool{}},
		times: &taskTimes{logger: logger, engine: cfg.Name},
		noJobCreateTime: &versionFlag{logger: logger, engine: cfg.Name,
			warning: "jobs carry no createTime; camunda_job_oldest_executable_age_seconds is not reported for this engine version"},
	}
}

// Close implements reading.Reader: the REST client holds nothing to release.
func (r *Reader) Close() {}

// versionFlag remembers that the engine version lacks a field the REST API
// returns from some version on, so that what depends on it is not reported
// (a made-up age would be worse than none), with one warning per version.
// Concurrent requests of one reading set it.
type versionFlag struct {
	logger          *slog.Logger
	engine, warning string

	mu      sync.Mutex
	version string
}

// in reports whether the flag is set for the engine version.
func (f *versionFlag) in(version string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.version != "" && f.version == version
}

// set sets the flag for the engine version, warning when it was not set.
func (f *versionFlag) set(version string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.version == version {
		return
	}
	f.version = version
	if err != nil {
		f.logger.Warn(f.warning, "engine", f.engine, "err", err)
	} else {
		f.logger.Warn(f.warning, "engine", f.engine)
	}
}

// ListPageSize is the page size of the lists the REST reader reads in
// full (tasks, incidents, jobs, the cleanable report). A request's cost is
// mostly fixed (HTTP, the engine's query set-up, and for an offset page a
// re-run of the whole query: the engine sorts every match again to skip
// the pages before), so fewer, larger pages are cheaper: max_listed_tasks
// (10000 by default) in one request where it can. 10000 tasks are about
// 7 MB of JSON, within the client's 32 MB bound on an answer.
const ListPageSize = 10000

// ScanPageSize is the page size of the lists read until something is found:
// the history logs newest first (the first page sized by the previous
// reading, logPages), the activity instances, the search for a task
// without a tenant. Their pages beyond the first are read only when the
// first did not reach far enough.
const ScanPageSize = 1000

// listPage is the page size of a list read in full: ListPageSize, or the
// engine's max results limit when lower (configured or learned).
func (r *Reader) listPage() int { return r.client.PageSize(ListPageSize) }

// scanPage is ScanPageSize within the engine's max results limit.
func (r *Reader) scanPage() int { return r.client.PageSize(ScanPageSize) }

// logHints remembers how many entries each history log's last reading
// found.
type logHints struct {
	mu sync.Mutex
	n  map[string]int
}

// logPages are the page sizes of a reading of the log name: the first
// twice the entries the previous reading found (its lookback holds about
// as many again) plus 16, at least 16 and at most a list page; before a
// first reading, a scan page; then scan pages. A first page of 1000 entries
// on an engine where 3 are new costs the engine 1000 entries' work.
func (r *Reader) logPages(name string) (first, next int) {
	r.logs.mu.Lock()
	n, ok := r.logs.n[name]
	r.logs.mu.Unlock()
	next = r.scanPage()
	if !ok {
		return next, next
	}
	return min(max(2*n+16, 16), r.listPage()), next
}

// noteLog records how many entries a reading of the log name found.
func (r *Reader) noteLog(name string, n int) {
	r.logs.mu.Lock()
	defer r.logs.mu.Unlock()
	r.logs.n[name] = n
}

// ItemsPerCountRequest converts listed items into the cost of count
// requests: listing this many tasks costs about as much engine time as one
// count request (measured on Camunda 7.24 with PostgreSQL, see
// docs/benchmarks.md). It decides per collection whether a state group is
// listed engine-wide or counted topic by topic.
const ItemsPerCountRequest = 50

// sortedKeys returns m's keys in order, for requests and output that do
// not depend on map iteration.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
