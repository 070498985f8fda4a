package rest

import (
	"context"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/workflow-exporter/workflow-exporter/camunda"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine/reading"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// Queries, shared by counts and lists. topic "" means every topic.
func qTotal(t string) camunda.ExternalTaskQuery { return camunda.ExternalTaskQuery{TopicName: t} }

func qSuspended(t string) camunda.ExternalTaskQuery {
	return camunda.ExternalTaskQuery{TopicName: t, Suspension: camunda.SuspensionSuspended}
}

func qExhausted(t string) camunda.ExternalTaskQuery {
	return camunda.ExternalTaskQuery{TopicName: t, Suspension: camunda.SuspensionActive, Retries: camunda.RetriesNone}
}

// qLocked and qLapsed split the tasks with a lock expiration E by the
// engine's own filters (locked: E > now, notLocked: E < now, by the clock
// of the node that answers), each bounded by the collection's reference
// time at (the probe's Date header, truncated to the second): locked also
// needs E > at, lapsed E < at + LapsedMargin. On one node the bounds change
// nothing (its now lies between at and at + LapsedMargin while the
// collection runs). Behind a load balancer, nodes whose clocks differ
// answer the requests of one collection: without the bounds a node that
// runs behind would call a lock held that another called lapsed, from one
// collection to the next, and each flip would read as a lapse or a
// redelivery. With them, once the reference time passed E no node calls
// the lock held again (classifyLocked's rule 2 absorbs the second of
// truncation).
func qLocked(t string, at time.Time) camunda.ExternalTaskQuery {
	return camunda.ExternalTaskQuery{TopicName: t, Suspension: camunda.SuspensionActive, Retries: camunda.RetriesLeft, Lock: camunda.LockLocked,
		LockExpirationAfter: at}
}

func qLapsed(t string, at time.Time) camunda.ExternalTaskQuery {
	return camunda.ExternalTaskQuery{TopicName: t, Suspension: camunda.SuspensionActive, Retries: camunda.RetriesLeft,
		Lock: camunda.LockNotLocked, LockExpirationBefore: at.Add(reading.LapsedMargin)}
}

func qFetchable(t string) camunda.ExternalTaskQuery {
	return camunda.ExternalTaskQuery{TopicName: t, Suspension: camunda.SuspensionActive, Retries: camunda.RetriesLeft, Lock: camunda.LockNotLocked}
}

// restRead is the working set of one REST reading. Requests of one phase
// run concurrently; each writes its own fields, or takes mu.
type restRead struct {
	r         *Reader
	rq        reading.TasksRequest
	out       *reading.TasksRead
	present   []string // reported topics that hold open tasks now, sorted
	isPresent map[string]bool
	// tenantIDs are the known tenants, sorted (tenant_label on:
	// tenants.go).
	tenantIDs []string
	// started is when the reading started, by the exporter's clock.
	started time.Time

	nInc   int64 // open incidents
	mu     sync.Mutex
	budget int
	inc    []camunda.Incident
	incCut bool
}

// ReadTasks reads the "camunda" collector's aspects: the topic names and
// the topics chosen from them, then three phases of concurrent requests
// (engine-wide counts with the history; per-topic counts with the lists;
// the oldest waiting tasks, oldest.go), then the incidents' topics and the
// BPMN error evidence.
func (r *Reader) ReadTasks(ctx context.Context, rq reading.TasksRequest) (*reading.TasksRead, error) {
	if err := r.perms.Authorized(ctx, vocab.CollectorCamunda); err != nil {
		return nil, err
	}
	x := &restRead{r: r, rq: rq, budget: rq.Budget, out: &reading.TasksRead{Now: rq.Now}, started: time.Now()}
	if err := x.topics(ctx); err != nil {
		return nil, err
	}
	for _, phase := range []func(context.Context, *errgroup.Group){x.engineWide, x.perTopic} {
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(r.concurrency)
		phase(gctx, g)
		if err := g.Wait(); err != nil {
			return nil, err
		}
	}
	if err := x.oldestWaiting(ctx); err != nil {
		return nil, err
	}
	if err := x.stillOpen(ctx); err != nil {
		return nil, err
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

// topics reads the topic names and chooses the topics reported.
func (x *restRead) topics(ctx context.Context) error {
	names, err := x.r.client.TopicNames(ctx, false, false, false)
	if err != nil {
		return err
	}
	var totals map[string]int64
	if x.r.tenants {
		if names, totals, err = x.tenantTopics(ctx, names); err != nil {
			return err
		}
	}
	ch := x.rq.Topics.Choose(names)
	x.out.Topics, x.present, x.out.Folded = ch.Read, ch.Present, ch.Folded
	x.isPresent = make(map[string]bool, len(x.present))
	for _, t := range x.present {
		x.isPresent[t] = true
		if totals != nil {
			x.out.Topics[t].Counts.Total = totals[t]
		}
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
	switch {
	case x.rq.Level.ReadsTaskLog():
		g.Go(func() error { return x.history(ctx) })
	case x.rq.Level.ReadsActivities():
		g.Go(func() error { return x.activities(ctx) })
	}
	counts := []struct {
		q   camunda.ExternalTaskQuery
		dst *int64
	}{
		{qSuspended(""), &x.out.All.Suspended},
		{qExhausted(""), &x.out.All.Exhausted},
		{qLocked("", x.rq.Now), &x.out.All.Locked},
		{qLapsed("", x.rq.Now), &x.out.All.Lapsed},
	}
	if x.out.Folded {
		counts = append(counts, struct {
			q   camunda.ExternalTaskQuery
			dst *int64
		}{qTotal(""), &x.out.All.Total})
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
	if !x.r.tenants { // with tenants, topics counted the totals
		for _, t := range x.present {
			g.Go(func() error { return x.count(ctx, qTotal(t), &x.out.Topics[t].Counts.Total) })
		}
	}
	// Suspended and retries-exhausted tasks only need counting: listing
	// them engine-wide wins when it takes fewer requests' worth of work.
	for _, grp := range []struct {
		n   int64
		q   func(string) camunda.ExternalTaskQuery
		dst func(*reading.TopicCounts) *int64
	}{
		{x.out.All.Suspended, qSuspended, func(c *reading.TopicCounts) *int64 { return &c.Suspended }},
		{x.out.All.Exhausted, qExhausted, func(c *reading.TopicCounts) *int64 { return &c.Exhausted }},
	} {
		switch {
		case grp.n == 0:
		case x.cheaperToList(grp.n):
			g.Go(func() error {
				tasks, err := x.listAll(ctx, grp.q(""), grp.n)
				for _, t := range tasks {
					if k := x.keyOf(t.TenantID, t.TopicName); x.isPresent[k] {
						*grp.dst(&x.out.Topics[k].Counts)++
					}
				}
				return err
			})
		default:
			for _, t := range x.present {
				g.Go(func() error { return x.countKey(ctx, t, grp.q, grp.dst(&x.out.Topics[t].Counts)) })
			}
		}
	}
	if x.out.All.Locked+x.out.All.Lapsed <= int64(x.budget) {
		x.budget -= int(x.out.All.Locked + x.out.All.Lapsed)
		g.Go(func() error { return x.inflightEngineWide(ctx, qLocked("", x.rq.Now), x.out.All.Locked, true) })
		g.Go(func() error { return x.inflightEngineWide(ctx, qLapsed("", x.rq.Now), x.out.All.Lapsed, false) })
	} else {
		g.Go(func() error { return x.inflightPerTopic(ctx) })
	}
	if x.nInc > 0 {
		g.Go(func() (err error) {
			x.inc, x.incCut, err = camunda.Collect(ctx,
				camunda.Page{Sort: camunda.Sort{By: camunda.IncidentSortTimestamp, Order: camunda.Ascending}},
				x.r.listPage(), x.rq.Budget,
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
	pages := n/int64(x.r.listPage()) + 1
	return pages+n/ItemsPerCountRequest < int64(len(x.present))
}

// listAll lists every task matching q (n expected), by id. Tasks that come
// and go between the pages can make the list longer than n: it is cut at
// 2n+pageSize, which only matters for a state group that doubled within a
// collection.
func (x *restRead) listAll(ctx context.Context, q camunda.ExternalTaskQuery, n int64) ([]camunda.ExternalTask, error) {
	tasks, _, err := camunda.Collect(ctx, camunda.Page{Sort: camunda.Sort{By: camunda.ExternalTaskSortID}},
		x.r.listPage(), int(2*n)+x.r.listPage(),
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
		k := x.keyOf(t.TenantID, t.TopicName)
		if !x.isPresent[k] {
			// A folded topic (counted in "other"), or a topic whose
			// first task appeared after the topic names were read.
			continue
		}
		tr := x.out.Topics[k]
		if locked {
			tr.Counts.Locked++
			tr.Locked = append(tr.Locked, x.obs(t))
		} else {
			tr.Counts.Lapsed++
			tr.Lapsed = append(tr.Lapsed, x.obs(t))
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
		c := &x.out.Topics[t].Counts
		g.Go(func() error { return x.countKey(gctx, t, x.qLocked, &c.Locked) })
		g.Go(func() error { return x.countKey(gctx, t, x.qLapsed, &c.Lapsed) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	g, gctx = errgroup.WithContext(ctx)
	g.SetLimit(x.r.concurrency)
	for _, t := range x.present {
		tr := x.out.Topics[t]
		for _, l := range []struct {
			q   func(string) camunda.ExternalTaskQuery
			n   int64
			dst *[]reading.TaskObs
		}{{x.qLocked, tr.Counts.Locked, &tr.Locked}, {x.qLapsed, tr.Counts.Lapsed, &tr.Lapsed}} {
			take := min(l.n, int64(x.budget))
			x.budget -= int(take)
			if take < l.n {
				x.out.Truncated = true
				x.out.Unwatched += l.n - take
			}
			if take == 0 {
				continue
			}
			g.Go(func() error {
				tasks, cut, err := x.listKey(gctx, t, l.q, int(take))
				for _, tk := range tasks {
					*l.dst = append(*l.dst, x.obs(tk))
				}
				if cut {
					// More tasks than the count a moment before: some
					// are not watched this time.
					x.mu.Lock()
					x.out.Truncated = true
					x.mu.Unlock()
				}
				return err
			})
		}
	}
	return g.Wait()
}

// stillOpen asks which of the recent lapses (TasksRequest.RecentLapses)
// that no list holds the engine still has, in requests of up to
// stillOpenBatch ids: usually none, or a few tasks that ended soon after
// their lock lapsed.
func (x *restRead) stillOpen(ctx context.Context) error {
	listed := map[string]bool{}
	for _, tr := range x.out.Topics {
		for _, list := range [][]reading.TaskObs{tr.Locked, tr.Lapsed} {
			for _, o := range list {
				listed[o.ID] = true
			}
		}
	}
	// A lock expiring after the reference time can have been called
	// lapsed only by a node whose clock had passed it when it answered: at
	// most the time this reading took, and the second the reference time
	// was truncated by, after it. Asking for later ones would ask for
	// every completed task.
	horizon := x.rq.Now.Add(time.Since(x.started) + time.Second)
	if x.rq.RecentLapses == nil {
		return nil
	}
	var missing []string
	for _, l := range x.rq.RecentLapses() {
		if !listed[l.ID] && !l.Exp.After(horizon) {
			missing = append(missing, l.ID)
		}
	}
	for len(missing) > 0 {
		batch := missing[:min(len(missing), stillOpenBatch)]
		missing = missing[len(batch):]
		tasks, err := x.r.client.ListExternalTasks(ctx, camunda.ExternalTaskQuery{ExternalTaskIDIn: batch}, camunda.Page{MaxResults: len(batch)})
		if err != nil {
			return err
		}
		for _, t := range tasks {
			if x.out.StillOpen == nil {
				x.out.StillOpen = map[string]bool{}
			}
			x.out.StillOpen[t.ID] = true
		}
	}
	return nil
}

// stillOpenBatch bounds the ids of one stillOpen request (a URL's length).
const stillOpenBatch = 50
