package engine

import (
	"context"
	"log/slog"
	"net/http"
	"sort"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/workflow-exporter/workflow-exporter/camunda"
	"github.com/workflow-exporter/workflow-exporter/collectors/labellimit"
)

// restReader reads an engine over its REST API. What it asks, and why each
// request costs what it costs, is in docs/camunda-states.md ("Request
// budget"). In short, per collection:
//
//   - one GET /external-task/topic-names;
//   - engine-wide counts per state group (suspended, retries exhausted,
//     locked, lapsed; the total too when topics are folded into "other");
//   - the history log entries new since the previous collection, newest
//     first, in pages (one request when little happened);
//   - per topic that holds tasks: one count of its open tasks, and one
//     request for its oldest fetchable task when it has one;
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
// show is never attributed to an earlier collection (see locks.go).
type restReader struct {
	client *camunda.Client
	engine string
	logger *slog.Logger
	// concurrency bounds the requests in flight (request_concurrency).
	concurrency int
	// pageSize is the page size of every list (1000, or the engine's
	// max results limit when lower).
	pageSize int
	// version is the engine version of the current collection;
	// noCreateTime is set to it when the engine's external tasks carry no
	// createTime (oldest waiting age is then not reported), noJobCreateTime
	// when its jobs carry none (oldest executable age).
	version, noCreateTime, noJobCreateTime string
}

// RESTListPageSize is the page size of the REST reader's lists. A request's
// cost is mostly fixed (HTTP, the engine's query set-up, and a re-run of the
// query for every offset page), so fewer, larger pages are cheaper; 1000
// tasks are about 700 KB of JSON.
const RESTListPageSize = 1000

// ItemsPerCountRequest converts listed items into the cost of count
// requests: listing this many tasks costs about as much engine time as one
// count request (measured on Camunda 7.24 with PostgreSQL, see
// docs/benchmarks.md). It decides per collection whether a state group is
// listed engine-wide or counted topic by topic.
const ItemsPerCountRequest = 50

// farFuture is the lockExpirationBefore bound that turns the filter into
// "has a lock expiration": combined with notLocked (expiration null or
// before the engine database's now) it selects exactly the tasks whose lock
// lapsed, by the engine's own clock, without the exporter sending a time.
var farFuture = time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)

// Queries, shared by counts and lists. topic "" means every topic.
func qTotal(t string) camunda.ExternalTaskQuery { return camunda.ExternalTaskQuery{TopicName: t} }
func qSuspended(t string) camunda.ExternalTaskQuery {
	return camunda.ExternalTaskQuery{TopicName: t, Suspension: camunda.SuspensionSuspended}
}
func qExhausted(t string) camunda.ExternalTaskQuery {
	return camunda.ExternalTaskQuery{TopicName: t, Suspension: camunda.SuspensionActive, Retries: camunda.RetriesNone}
}
func qLocked(t string) camunda.ExternalTaskQuery {
	return camunda.ExternalTaskQuery{TopicName: t, Suspension: camunda.SuspensionActive, Retries: camunda.RetriesLeft, Lock: camunda.LockLocked}
}
func qLapsed(t string) camunda.ExternalTaskQuery {
	return camunda.ExternalTaskQuery{TopicName: t, Suspension: camunda.SuspensionActive, Retries: camunda.RetriesLeft,
		Lock: camunda.LockNotLocked, LockExpirationBefore: farFuture}
}
func qFetchable(t string) camunda.ExternalTaskQuery {
	return camunda.ExternalTaskQuery{TopicName: t, Suspension: camunda.SuspensionActive, Retries: camunda.RetriesLeft, Lock: camunda.LockNotLocked}
}

// restRead is the working set of one REST reading. Requests of one phase
// run concurrently; each writes its own fields, or takes mu.
type restRead struct {
	r          *restReader
	rq         readRequest
	out        *engineRead
	present    []string // reported topics that hold open tasks now, sorted
	isPresent  map[string]bool
	countsDone bool // the per-topic counts are read (after the perTopic phase)
	folded     bool // some topic is folded into "other"

	all    topicCounts // engine-wide counts
	nInc   int64       // open incidents
	mu     sync.Mutex
	budget int
	inc    []camunda.Incident
	incCut bool
}

func (r *restReader) read(ctx context.Context, rq readRequest) (*engineRead, error) {
	x := &restRead{r: r, rq: rq, budget: rq.budget,
		out: &engineRead{now: rq.now, topics: map[string]*topicRead{}}}
	x.out.noCreateTime = r.noCreateTime != "" && r.noCreateTime == r.version
	if err := x.topics(ctx); err != nil {
		return nil, err
	}
	for _, phase := range []func(context.Context, *errgroup.Group){x.engineWide, x.perTopic, x.oldestWaiting} {
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(r.concurrency)
		phase(gctx, g)
		if err := g.Wait(); err != nil {
			return nil, err
		}
		if x.folded && x.out.other == nil && x.countsDone {
			x.out.other = x.otherCounts()
		}
	}
	if err := x.incidentGroups(ctx); err != nil {
		return nil, err
	}
	if err := x.incidentTopics(ctx); err != nil {
		return nil, err
	}
	if err := x.bpmnEvidence(ctx); err != nil {
		return nil, err
	}
	return x.out, nil
}

// topics reads the topic names and decides which topics are reported.
func (x *restRead) topics(ctx context.Context) error {
	names, err := x.r.client.TopicNames(ctx, false, false, false)
	if err != nil {
		return err
	}
	x.folded = x.rq.otherKnown
	known := make(map[string]bool, len(x.rq.known))
	for _, t := range x.rq.known {
		known[t] = true
		x.out.topics[t] = &topicRead{}
	}
	for _, n := range names {
		switch {
		case known[n]:
			x.present = append(x.present, n)
		case x.rq.admit(n):
			known[n] = true
			x.out.topics[n] = &topicRead{}
			x.present = append(x.present, n)
		default:
			x.folded = true
		}
	}
	sort.Strings(x.present)
	x.isPresent = make(map[string]bool, len(x.present))
	for _, t := range x.present {
		x.isPresent[t] = true
	}
	return nil
}

func (x *restRead) count(ctx context.Context, q camunda.ExternalTaskQuery, dst *int64) error {
	n, err := x.r.client.CountExternalTasks(ctx, q)
	if err != nil {
		return err
	}
	*dst = n
	return nil
}

// engineWide: the engine-wide counts, the history, and the incident count.
func (x *restRead) engineWide(ctx context.Context, g *errgroup.Group) {
	g.Go(func() error { return x.history(ctx) })
	counts := []struct {
		q   camunda.ExternalTaskQuery
		dst *int64
	}{
		{qSuspended(""), &x.all.suspended},
		{qExhausted(""), &x.all.exhausted},
		{qLocked(""), &x.all.locked},
		{qLapsed(""), &x.all.lapsed},
	}
	if x.folded {
		counts = append(counts, struct {
			q   camunda.ExternalTaskQuery
			dst *int64
		}{qTotal(""), &x.all.total})
	}
	for _, c := range counts {
		g.Go(func() error { return x.count(ctx, c.q, c.dst) })
	}
	g.Go(func() (err error) {
		x.nInc, err = x.r.client.CountIncidents(ctx, camunda.IncidentQuery{})
		return err
	})
}

// perTopic: the per-topic counts and the task lists, the incident list.
func (x *restRead) perTopic(ctx context.Context, g *errgroup.Group) {
	x.countsDone = true
	for _, t := range x.present {
		g.Go(func() error { return x.count(ctx, qTotal(t), &x.out.topics[t].counts.total) })
	}
	// Suspended and retries-exhausted tasks only need counting: listing
	// them engine-wide wins when it takes fewer requests' worth of work.
	for _, grp := range []struct {
		n   int64
		q   func(string) camunda.ExternalTaskQuery
		dst func(*topicCounts) *int64
	}{
		{x.all.suspended, qSuspended, func(c *topicCounts) *int64 { return &c.suspended }},
		{x.all.exhausted, qExhausted, func(c *topicCounts) *int64 { return &c.exhausted }},
	} {
		switch {
		case grp.n == 0:
		case x.cheaperToList(grp.n):
			g.Go(func() error {
				tasks, err := x.listAll(ctx, grp.q(""), grp.n)
				for _, t := range tasks {
					if x.isPresent[t.TopicName] {
						*grp.dst(&x.out.topics[t.TopicName].counts)++
					}
				}
				return err
			})
		default:
			for _, t := range x.present {
				g.Go(func() error { return x.count(ctx, grp.q(t), grp.dst(&x.out.topics[t].counts)) })
			}
		}
	}
	if x.all.locked+x.all.lapsed <= int64(x.budget) {
		x.budget -= int(x.all.locked + x.all.lapsed)
		g.Go(func() error { return x.inflightEngineWide(ctx, qLocked(""), x.all.locked, true) })
		g.Go(func() error { return x.inflightEngineWide(ctx, qLapsed(""), x.all.lapsed, false) })
	} else {
		g.Go(func() error { return x.inflightPerTopic(ctx) })
	}
	if x.nInc > 0 {
		g.Go(func() (err error) {
			x.inc, x.incCut, err = camunda.Collect(ctx,
				camunda.Page{Sort: camunda.Sort{By: camunda.IncidentSortTimestamp, Order: camunda.Ascending}},
				x.r.pageSize, x.rq.budget,
				func(ctx context.Context, p camunda.Page) ([]camunda.Incident, error) {
					return x.r.client.ListIncidents(ctx, camunda.IncidentQuery{}, p)
				})
			return err
		})
	}
}

// cheaperToList reports whether listing n tasks engine-wide costs less than
// one count request per topic that holds tasks.
func (x *restRead) cheaperToList(n int64) bool {
	pages := n/int64(x.r.pageSize) + 1
	return pages+n/ItemsPerCountRequest < int64(len(x.present))
}

// listAll lists every task matching q (n expected), by id. Tasks that come
// and go between the pages can make the list longer than n: it is cut at
// 2n+pageSize, which only matters for a state group that doubled within a
// collection.
func (x *restRead) listAll(ctx context.Context, q camunda.ExternalTaskQuery, n int64) ([]camunda.ExternalTask, error) {
	tasks, _, err := camunda.Collect(ctx, camunda.Page{Sort: camunda.Sort{By: camunda.ExternalTaskSortID}},
		x.r.pageSize, int(2*n)+x.r.pageSize,
		func(ctx context.Context, p camunda.Page) ([]camunda.ExternalTask, error) {
			return x.r.client.ListExternalTasks(ctx, q, p)
		})
	return dedupeTasks(tasks), err
}

// dedupeTasks drops repeats: offset paging over live data repeats a task
// when one before it disappears between two pages.
func dedupeTasks(tasks []camunda.ExternalTask) []camunda.ExternalTask {
	seen := make(map[string]bool, len(tasks))
	out := tasks[:0]
	for _, t := range tasks {
		if !seen[t.ID] {
			seen[t.ID] = true
			out = append(out, t)
		}
	}
	return out
}

// inflightEngineWide lists the locked (or lapsed) tasks of all topics and
// takes the per-topic counts from the list, which then agree with it
// exactly. Tasks of folded topics are dropped (they are not tracked).
func (x *restRead) inflightEngineWide(ctx context.Context, q camunda.ExternalTaskQuery, n int64, locked bool) error {
	if n == 0 {
		return nil
	}
	tasks, err := x.listAll(ctx, q, n)
	if err != nil {
		return err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, t := range tasks {
		if !x.isPresent[t.TopicName] {
			// A folded topic (counted in "other"), or a topic whose
			// first task appeared after the topic names were read.
			continue
		}
		tr := x.out.topics[t.TopicName]
		if locked {
			tr.counts.locked++
			tr.locked = append(tr.locked, obsOf(t))
		} else {
			tr.counts.lapsed++
			tr.lapsed = append(tr.lapsed, obsOf(t))
		}
	}
	return nil
}

// inflightPerTopic is the fallback when the in-flight tasks exceed
// max_listed_tasks: exact counts per topic, then lists topic by topic in
// name order (locked, then lapsed), each sorted by id, until the budget is
// spent; the same tasks stay in view from one collection to the next.
func (x *restRead) inflightPerTopic(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(x.r.concurrency)
	for _, t := range x.present {
		c := &x.out.topics[t].counts
		g.Go(func() error { return x.count(gctx, qLocked(t), &c.locked) })
		g.Go(func() error { return x.count(gctx, qLapsed(t), &c.lapsed) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	g, gctx = errgroup.WithContext(ctx)
	g.SetLimit(x.r.concurrency)
	for _, t := range x.present {
		tr := x.out.topics[t]
		for _, l := range []struct {
			q   camunda.ExternalTaskQuery
			n   int64
			dst *[]taskObs
		}{{qLocked(t), tr.counts.locked, &tr.locked}, {qLapsed(t), tr.counts.lapsed, &tr.lapsed}} {
			take := min(l.n, int64(x.budget))
			x.budget -= int(take)
			if take < l.n {
				x.out.truncated = true
				x.out.unwatched += l.n - take
			}
			if take == 0 {
				continue
			}
			g.Go(func() error {
				tasks, cut, err := camunda.Collect(gctx, camunda.Page{Sort: camunda.Sort{By: camunda.ExternalTaskSortID}},
					x.r.pageSize, int(take),
					func(ctx context.Context, p camunda.Page) ([]camunda.ExternalTask, error) {
						return x.r.client.ListExternalTasks(ctx, l.q, p)
					})
				for _, tk := range dedupeTasks(tasks) {
					*l.dst = append(*l.dst, obsOf(tk))
				}
				if cut {
					// More tasks than the count a moment before: some
					// are not watched this time.
					x.mu.Lock()
					x.out.truncated = true
					x.mu.Unlock()
				}
				return err
			})
		}
	}
	return g.Wait()
}

// oldestWaiting reads the oldest fetchable task of each topic that has one
// (sorting by createTime needs 7.21+, the field in the answer 7.24+).
// Engines without createTime get no series: a made-up age would be worse
// than none (see docs/camunda-states.md).
func (x *restRead) oldestWaiting(ctx context.Context, g *errgroup.Group) {
	if x.out.noCreateTime {
		return
	}
	for _, t := range x.present {
		tr := x.out.topics[t]
		if tr.counts.fetchable() <= 0 {
			continue
		}
		g.Go(func() error {
			tasks, err := x.r.client.ListExternalTasks(ctx, qFetchable(t),
				camunda.Page{MaxResults: 1, Sort: camunda.Sort{By: camunda.ExternalTaskSortCreateTime, Order: camunda.Ascending}})
			if camunda.IsStatus(err, http.StatusBadRequest) {
				x.r.markNoCreateTime(err)
				return nil
			}
			if err != nil {
				return err
			}
			if len(tasks) == 0 {
				return nil
			}
			if tasks[0].CreateTime == nil {
				x.r.markNoCreateTime(nil)
				return nil
			}
			tr.oldest = tasks[0].CreateTime.Time
			return nil
		})
	}
}

// otherCounts are the counts of the folded topics: the engine-wide counts
// minus the reported topics' sums (separate requests, so clamped at 0).
func (x *restRead) otherCounts() *topicCounts {
	var rep topicCounts
	for _, tr := range x.out.topics {
		rep.add(tr.counts)
	}
	sub := func(a, b int64) int64 { return max(0, a-b) }
	o := &topicCounts{
		total:     sub(x.all.total, rep.total),
		suspended: sub(x.all.suspended, rep.suspended),
		exhausted: sub(x.all.exhausted, rep.exhausted),
		locked:    sub(x.all.locked, rep.locked),
		lapsed:    sub(x.all.lapsed, rep.lapsed),
	}
	return o
}

func (r *restReader) markNoCreateTime(err error) {
	if r.noCreateTime == r.version {
		return
	}
	r.noCreateTime = r.version
	msg := "external tasks carry no createTime (Camunda 7.24+ has it); camunda_external_task_oldest_waiting_age_seconds is not reported for this engine version"
	if err != nil {
		r.logger.Warn(msg, "engine", r.engine, "err", err)
	} else {
		r.logger.Warn(msg, "engine", r.engine)
	}
}

// history pages through the history log, newest first, until it reaches
// entries older than the request's start, the end of the log, or
// max_history_entries.
func (x *restRead) history(ctx context.Context) error {
	entries, cut, err := readLog(ctx, x.r.pageSize, x.rq.history,
		func(ctx context.Context, p camunda.Page) ([]camunda.ExternalTaskLogEntry, error) {
			p.Sort = camunda.Sort{By: camunda.ExternalTaskLogSortTimestamp, Order: camunda.Descending}
			return x.r.client.ListExternalTaskLog(ctx, camunda.HistoryLogQuery{}, p)
		},
		func(e camunda.ExternalTaskLogEntry) (string, time.Time) { return e.ID, e.Timestamp.Time })
	x.out.history.cut = cut
	for _, e := range entries {
		x.out.history.entries = append(x.out.history.entries, entryOf(e))
	}
	return err
}

// readLog pages through a history log sorted by timestamp, newest first
// (fetch sets the sort), until it reaches entries older than the request's
// start, the end of the log, or max_history_entries (cut). Offset paging
// over a log that grows at its head repeats entries; they are read once.
func readLog[T any](ctx context.Context, pageSize int, hr historyRequest, fetch func(context.Context, camunda.Page) ([]T, error),
	key func(T) (string, time.Time)) (entries []T, cut bool, err error) {
	seen := map[string]bool{}
	// One more than max_history_entries tells a cut reading from one that
	// ends exactly there.
	size := min(pageSize, hr.max+1)
	for offset := 0; ; offset += size {
		page, err := fetch(ctx, camunda.Page{FirstResult: offset, MaxResults: size})
		if err != nil {
			return entries, cut, err
		}
		for _, e := range page {
			id, ts := key(e)
			if ts.Before(hr.from) {
				return entries, false, nil
			}
			if seen[id] {
				continue
			}
			if len(entries) == hr.max {
				return entries, true, nil
			}
			seen[id] = true
			entries = append(entries, e)
		}
		if len(page) < size {
			return entries, false, nil
		}
	}
}

func entryOf(e camunda.ExternalTaskLogEntry) historyEntry {
	h := historyEntry{id: e.ID, taskID: e.ExternalTaskID, topic: e.TopicName, worker: e.WorkerID, ts: e.Timestamp.Time,
		activity: e.ActivityID, actInst: e.ActivityInstanceID, rootPI: e.RootProcessInstanceID,
		kind: logKindOfFlags(e.FailureLog, e.SuccessLog, e.DeletionLog)}
	return h
}

// logKindOfFlags is the kind of a history log entry of the REST API, which
// flags each entry (failureLog, successLog, deletionLog; none: a creation),
// in both the external-task and the job log.
func logKindOfFlags(failure, success, deletion bool) logKind {
	switch {
	case failure:
		return logFailure
	case success:
		return logSuccess
	case deletion:
		return logDeletion
	}
	return logCreation
}

// incidentGroups groups the listed incidents. If the list was cut short
// (max_listed_tasks), one GET /incident/count?incidentType=T per listed
// type puts the unlisted rest under process_definition_key and activity_id
// "other", and what the total leaves beyond those (types that only occur
// beyond the list, which cannot be asked for by name) goes to all three
// labels "other", without an oldest age. Because the list is sorted oldest
// first, the oldest incident of every listed type is in the list.
func (x *restRead) incidentGroups(ctx context.Context) error {
	ids := make([]string, 0, len(x.inc))
	for _, in := range x.inc {
		ids = append(ids, in.ProcessDefinitionID)
	}
	keys, err := x.r.client.ProcessDefinitionKeys(ctx, ids)
	if err != nil {
		return err
	}
	out := incidentRead{oldest: map[string]time.Time{}}
	index := map[incidentKey]int{}
	perType := map[string]int64{}
	for _, in := range x.inc {
		key := keys[in.ProcessDefinitionID]
		if key == "" {
			key = in.ProcessDefinitionID // definition deleted meanwhile
		}
		ik := incidentKey{in.IncidentType, key, in.ActivityID}
		if i, ok := index[ik]; ok {
			out.groups[i].n++
		} else {
			index[ik] = len(out.groups)
			out.groups = append(out.groups, incidentGroup{key: ik, n: 1})
		}
		perType[in.IncidentType]++
		if _, ok := out.oldest[in.IncidentType]; !ok {
			out.oldest[in.IncidentType] = in.IncidentTimestamp.Time
		}
	}
	if x.incCut {
		rest := x.nInc - int64(len(x.inc))
		for _, typ := range sortedKeys(perType) {
			all, err := x.r.client.CountIncidents(ctx, camunda.IncidentQuery{IncidentType: typ})
			if err != nil {
				return err
			}
			if r := all - perType[typ]; r > 0 {
				out.groups = append(out.groups, incidentGroup{key: incidentKey{typ, labellimit.Other, labellimit.Other}, n: r, folded: true})
				rest -= r
			}
		}
		if rest > 0 {
			out.groups = append(out.groups, incidentGroup{key: incidentKey{labellimit.Other, labellimit.Other, labellimit.Other}, n: rest, folded: true})
		}
	}
	x.out.incidents = out
	return nil
}

// incidentTypeFailedExternalTask is the incident of an external task out
// of retries; its configuration is the task's id.
const incidentTypeFailedExternalTask = "failedExternalTask"

// incidentTopics finds the oldest failedExternalTask incident of each
// reported topic. Incidents carry no topic, only the task id (their
// configuration): when the listed incidents hold any, the tasks with no
// retries left (suspended or not: their incidents stay) are listed
// engine-wide, by id, at most max_listed_tasks, and joined by id. The
// incident list is sorted oldest first, so a topic's first resolved
// incident is its oldest, as long as no earlier incident's task went
// unlisted.
func (x *restRead) incidentTopics(ctx context.Context) error {
	ids := map[string]bool{}
	for _, in := range x.inc {
		if in.IncidentType == incidentTypeFailedExternalTask {
			ids[in.Configuration] = true
		}
	}
	x.out.incidentsIncomplete = x.incCut
	if len(ids) == 0 {
		return nil
	}
	tasks, cut, err := camunda.Collect(ctx, camunda.Page{Sort: camunda.Sort{By: camunda.ExternalTaskSortID}},
		x.r.pageSize, x.rq.budget,
		func(ctx context.Context, p camunda.Page) ([]camunda.ExternalTask, error) {
			return x.r.client.ListExternalTasks(ctx, camunda.ExternalTaskQuery{Retries: camunda.RetriesNone}, p)
		})
	if err != nil {
		return err
	}
	topicOf := make(map[string]string, len(tasks))
	for _, t := range tasks {
		topicOf[t.ID] = t.TopicName
	}
	unresolved := false
	for _, in := range x.inc {
		if in.IncidentType != incidentTypeFailedExternalTask {
			continue
		}
		topic, ok := topicOf[in.Configuration]
		if !ok {
			// The task is beyond the list (or ended meanwhile): the
			// incidents after it are no oldest of their topic for sure.
			unresolved = unresolved || cut
			continue
		}
		if tr := x.out.topics[topic]; tr != nil && tr.oldestIncident.IsZero() && !unresolved {
			tr.oldestIncident = in.IncidentTimestamp.Time
		}
	}
	x.out.incidentsIncomplete = x.incCut || unresolved
	return nil
}

// bpmnEvidence looks up, for the deletion entries new in this reading, what
// tells a BPMN error apart (bpmn.go), only when there are any: the error
// catch events started around them (GET /history/activity-instance, one
// paged request per catch event type), and per activity of the deleted
// tasks its activity instances that completed their scope since (one paged
// request per activity; the endpoint has no filter by instance ids that
// every engine version applies). Each list is bounded by
// max_history_entries.
func (x *restRead) bpmnEvidence(ctx context.Context) error {
	dels := newDeletions(x.out.history.entries, x.rq.history)
	if len(dels) == 0 {
		return nil
	}
	first, last := deletionSpan(dels)
	from := first.Add(-catchWindow)
	deleted := map[string]bool{}
	activities := map[string]bool{}
	for _, e := range dels {
		deleted[e.actInst] = true
		if e.activity != "" {
			activities[e.activity] = true
		}
	}
	list := func(ctx context.Context, q camunda.HistoricActivityInstanceQuery, by string) ([]camunda.HistoricActivityInstance, error) {
		items, _, err := camunda.Collect(ctx, camunda.Page{Sort: camunda.Sort{By: by, Order: camunda.Ascending}},
			x.r.pageSize, x.rq.history.max,
			func(ctx context.Context, p camunda.Page) ([]camunda.HistoricActivityInstance, error) {
				return x.r.client.ListHistoricActivityInstances(ctx, q, p)
			})
		return items, err
	}
	ev := bpmnEvidence{scopeCompleted: map[string]bool{}}
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(x.r.concurrency)
	for _, typ := range []string{activityBoundaryError, activityErrorStartEvent} {
		g.Go(func() error {
			items, err := list(gctx, camunda.HistoricActivityInstanceQuery{ActivityType: typ, StartedAfter: from}, camunda.ActivityInstanceSortStartTime)
			mu.Lock()
			defer mu.Unlock()
			for _, a := range items {
				if a.ActivityType == typ && !a.StartTime.After(last.Add(catchWindow)) {
					ev.catches = append(ev.catches, catchEvent{id: a.ID, rootPI: a.RootProcessInstanceID, start: a.StartTime.Time})
				}
			}
			return err
		})
	}
	for _, act := range sortedKeys(activities) {
		g.Go(func() error {
			items, err := list(gctx, camunda.HistoricActivityInstanceQuery{ActivityID: act, CompleteScope: true, FinishedAfter: from}, camunda.ActivityInstanceSortEndTime)
			mu.Lock()
			defer mu.Unlock()
			for _, a := range items {
				if a.CompleteScope && deleted[a.ID] {
					ev.scopeCompleted[a.ID] = true
				}
			}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	sort.Slice(ev.catches, func(i, j int) bool { return ev.catches[i].id < ev.catches[j].id })
	x.out.bpmn = ev
	return nil
}

// readJobs reads the jobs aspect. Concurrently: the count of jobs with no
// retries left, the count of executable jobs (the engine's executable
// filter: retries left, due date null or past, process instance not
// suspended; plus active: the job itself not suspended), and the job log
// entries new since the previous reading. Then the jobs of each non-zero
// count (at most max_listed_tasks each, by id), grouped by process
// definition key, the rest under "other". The oldest executable job is the
// earliest due date (or creation, for a job without one) among the listed
// ones: exact while every executable job is listed, a lower bound of the
// age beyond (the list endpoint cannot sort by creation).
func (r *restReader) readJobs(ctx context.Context, rq jobsRequest) (*jobsRead, error) {
	out := &jobsRead{now: rq.now}
	qExhausted := camunda.JobQuery{Retries: camunda.RetriesNone}
	qExecutable := camunda.JobQuery{Executable: true, Suspension: camunda.SuspensionActive}
	var nExhausted, nExecutable int64
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(r.concurrency)
	g.Go(func() (err error) { nExhausted, err = r.client.CountJobs(gctx, qExhausted); return err })
	g.Go(func() (err error) { nExecutable, err = r.client.CountJobs(gctx, qExecutable); return err })
	g.Go(func() error {
		entries, cut, err := readLog(gctx, r.pageSize, rq.log,
			func(ctx context.Context, p camunda.Page) ([]camunda.JobLogEntry, error) {
				p.Sort = camunda.Sort{By: camunda.JobLogSortTimestamp, Order: camunda.Descending}
				return r.client.ListJobLog(ctx, p)
			},
			func(e camunda.JobLogEntry) (string, time.Time) { return e.ID, e.Timestamp.Time })
		out.logCut = cut
		for _, e := range entries {
			out.log = append(out.log, jobLogEntryOf(e))
		}
		return err
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var exhausted, executable []camunda.Job
	g, gctx = errgroup.WithContext(ctx)
	g.SetLimit(r.concurrency)
	for _, l := range []struct {
		n   int64
		q   camunda.JobQuery
		dst *[]camunda.Job
	}{{nExhausted, qExhausted, &exhausted}, {nExecutable, qExecutable, &executable}} {
		if l.n == 0 {
			continue
		}
		g.Go(func() (err error) {
			*l.dst, _, err = camunda.Collect(gctx, camunda.Page{Sort: camunda.Sort{By: camunda.JobSortID, Order: camunda.Ascending}},
				r.pageSize, rq.budget,
				func(ctx context.Context, p camunda.Page) ([]camunda.Job, error) {
					return r.client.ListJobs(ctx, l.q, p)
				})
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var err error
	if out.exhausted, err = r.groupJobs(ctx, exhausted, nExhausted); err != nil {
		return nil, err
	}
	if out.executable, err = r.groupJobs(ctx, executable, nExecutable); err != nil {
		return nil, err
	}
	for _, j := range executable {
		due := j.DueDate
		if due == nil {
			due = j.CreateTime
		}
		if due == nil {
			r.markNoJobCreateTime()
			continue
		}
		if out.oldestDue.IsZero() || due.Before(out.oldestDue) {
			out.oldestDue = due.Time
		}
	}
	out.noCreateTime = r.noJobCreateTime != "" && r.noJobCreateTime == r.version
	return out, nil
}

// markNoJobCreateTime notes, once per engine version, that executable jobs
// without a due date carry no createTime: their age is unknown, so none is
// reported (a made-up age would be worse than none).
func (r *restReader) markNoJobCreateTime() {
	if r.noJobCreateTime == r.version {
		return
	}
	r.noJobCreateTime = r.version
	r.logger.Warn("jobs carry no createTime; camunda_job_oldest_executable_age_seconds is not reported for this engine version", "engine", r.engine)
}

func jobLogEntryOf(e camunda.JobLogEntry) jobLogEntry {
	return jobLogEntry{id: e.ID, key: e.ProcessDefinitionKey, ts: e.Timestamp.Time,
		kind: logKindOfFlags(e.FailureLog, e.SuccessLog, e.DeletionLog)}
}

// groupJobs groups listed jobs by process definition key in the order of
// their first job; of n jobs, those beyond the list go to "other".
func (r *restReader) groupJobs(ctx context.Context, jobs []camunda.Job, n int64) ([]jobGroup, error) {
	var missing []string
	for _, j := range jobs {
		if j.ProcessDefinitionKey == "" && j.ProcessDefinitionID != "" {
			missing = append(missing, j.ProcessDefinitionID)
		}
	}
	keys, err := r.client.ProcessDefinitionKeys(ctx, missing)
	if err != nil {
		return nil, err
	}
	var out []jobGroup
	index := map[string]int{}
	for _, j := range jobs {
		key := j.ProcessDefinitionKey
		if key == "" {
			key = keys[j.ProcessDefinitionID]
		}
		if i, ok := index[key]; ok {
			out[i].n++
		} else {
			index[key] = len(out)
			out = append(out, jobGroup{key: key, n: 1})
		}
	}
	if rest := n - int64(len(jobs)); rest > 0 {
		out = append(out, jobGroup{key: labellimit.Other, n: rest, folded: true})
	}
	return out, nil
}

// readProcesses reads the running process instances per process definition
// key: one GET /process-definition/statistics, which lists every version of
// every definition with its instance count.
func (r *restReader) readProcesses(ctx context.Context) (map[string]int64, error) {
	stats, err := r.client.ProcessDefinitionStatistics(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, s := range stats {
		out[s.Definition.Key] += s.Instances
	}
	return out, nil
}
