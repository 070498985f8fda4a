package rest

import (
	"context"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/workflow-exporter/workflow-exporter/camunda"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine/reading"
)

// The REST reader with tenant_label on (tenants.go): every task, history
// entry and incident it reads is keyed by its tenant and topic, and every
// per-topic request becomes a request per topic key. The external task
// query selects a tenant (tenantIdIn) but not the tasks without one, so
// the key of no tenant is what its topic leaves beyond the tenants: counts
// by subtraction (the topic's count less the count over every known
// tenant), lists filtered by the answer's tenantId. The known tenants are
// those of the deployed process definitions (GET
// /process-definition/statistics, one request) and those the readings met
// since the exporter started; tasks of a tenant the reader does not know
// yet count as having none until it does. The request budget per
// collection grows with the tenants: docs/camunda-states.md.

// tenantSet is a set of tenant ids shared by the readings of one engine.
type tenantSet struct {
	mu  sync.Mutex
	ids map[string]bool
}

func (s *tenantSet) add(id string) {
	s.mu.Lock()
	s.ids[id] = true
	s.mu.Unlock()
}

func (s *tenantSet) list() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sortedKeys(s.ids)
}

// keyOf is the topic key of a task or history entry of tenant on topic:
// the topic itself without tenant_label.
func (x *restRead) keyOf(tenant, topic string) string { return x.r.keyOf(tenant, topic) }

// keyOf is the key of a topic or process definition key of tenant: the
// topic or key itself without tenant_label.
func (r *Reader) keyOf(tenant, k string) string {
	if !r.tenants {
		return k
	}
	if tenant != "" {
		r.seen.add(tenant)
	}
	return reading.TenantKey(tenant, k)
}

// obs is a listed task as the lock tracking sees it, under its topic key.
func (x *restRead) obs(t camunda.ExternalTask) reading.TaskObs {
	o := obsOf(t)
	o.Topic = x.keyOf(t.TenantID, t.TopicName)
	return o
}

func (x *restRead) qLocked(topic string) camunda.ExternalTaskQuery { return qLocked(topic, x.rq.Now) }
func (x *restRead) qLapsed(topic string) camunda.ExternalTaskQuery { return qLapsed(topic, x.rq.Now) }

// tenantTopics reads the known tenants and, for every topic the engine
// holds, the open tasks per tenant: it returns the topic keys that hold
// tasks (in the engine's topic order, the tenants of a topic in id order,
// no tenant first) with their totals.
func (x *restRead) tenantTopics(ctx context.Context, names []string) ([]string, map[string]int64, error) {
	stats, err := x.r.client.ProcessDefinitionStatistics(ctx)
	if err != nil {
		return nil, nil, err
	}
	for _, s := range stats {
		if s.Definition.TenantID != "" {
			x.r.seen.add(s.Definition.TenantID)
		}
	}
	x.tenantIDs = x.r.seen.list()
	perTenant := make([][]int64, len(names)) // [topic][0: the topic, i+1: tenant i]
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(x.r.concurrency)
	for i, n := range names {
		perTenant[i] = make([]int64, len(x.tenantIDs)+1)
		g.Go(func() error { return x.count(gctx, qTotal(n), &perTenant[i][0]) })
		for j, tenant := range x.tenantIDs {
			q := qTotal(n)
			q.TenantIDIn = []string{tenant}
			g.Go(func() error { return x.count(gctx, q, &perTenant[i][j+1]) })
		}
	}
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	var keys []string
	totals := map[string]int64{}
	for i, n := range names {
		none := perTenant[i][0]
		for _, v := range perTenant[i][1:] {
			none -= v
		}
		add := func(tenant string, v int64) {
			if v > 0 {
				k := reading.TenantKey(tenant, n)
				keys = append(keys, k)
				totals[k] = v
			}
		}
		add("", none)
		for j, tenant := range x.tenantIDs {
			add(tenant, perTenant[i][j+1])
		}
	}
	return keys, totals, nil
}

// queryOf is q (a query of a topic) for a topic key: its topic, and its
// tenant selected by tenantIdIn. noTenant: the key is of the tasks without
// a tenant, which the query cannot select; the caller subtracts or
// filters. Without tenant_label the key is the topic.
func (x *restRead) queryOf(key string, q func(topic string) camunda.ExternalTaskQuery) (_ camunda.ExternalTaskQuery, noTenant bool) {
	if !x.r.tenants {
		return q(key), false
	}
	tenant, topic := reading.SplitKey(key)
	qq := q(topic)
	if tenant == "" {
		return qq, true
	}
	qq.TenantIDIn = []string{tenant}
	return qq, false
}

// countKey counts the tasks of a topic key that q (a query of its topic)
// selects: one request for a tenant, two for no tenant (the topic less
// its known tenants).
func (x *restRead) countKey(ctx context.Context, key string, q func(topic string) camunda.ExternalTaskQuery, dst *int64) error {
	qq, noTenant := x.queryOf(key, q)
	if !noTenant {
		return x.count(ctx, qq, dst)
	}
	var all, tenanted int64
	if err := x.count(ctx, qq, &all); err != nil {
		return err
	}
	if len(x.tenantIDs) > 0 {
		qq.TenantIDIn = x.tenantIDs
		if err := x.count(ctx, qq, &tenanted); err != nil {
			return err
		}
	}
	*dst = max(0, all-tenanted)
	return nil
}

// listKey lists up to take tasks of a topic key that q selects, by id. For
// no tenant it lists the topic's tasks, enough to hold take of them beside
// the tenants' (counted first), and keeps those without a tenant; but it
// reads past at most max_listed_tasks of the tenants' tasks, so that the
// request stays bounded however many the tenants hold. A list that ends
// short of take that way is cut: the tasks it missed are unwatched.
func (x *restRead) listKey(ctx context.Context, key string, q func(topic string) camunda.ExternalTaskQuery, take int) ([]camunda.ExternalTask, bool, error) {
	list := func(qq camunda.ExternalTaskQuery, limit int) ([]camunda.ExternalTask, bool, error) {
		tasks, cut, err := camunda.Collect(ctx, camunda.Page{Sort: camunda.Sort{By: camunda.ExternalTaskSortID}},
			x.r.listPage(), limit,
			func(ctx context.Context, p camunda.Page) ([]camunda.ExternalTask, error) {
				return x.r.client.ListExternalTasks(ctx, qq, p)
			})
		return dedupeTasks(tasks), cut, err
	}
	qq, noTenant := x.queryOf(key, q)
	if !noTenant {
		return list(qq, take)
	}
	var tenanted int64
	if len(x.tenantIDs) > 0 {
		tq := qq
		tq.TenantIDIn = x.tenantIDs
		if err := x.count(ctx, tq, &tenanted); err != nil {
			return nil, false, err
		}
	}
	skip := min(tenanted, int64(x.rq.Budget))
	tasks, cut, err := list(qq, take+int(skip))
	out := tasks[:0]
	for _, t := range tasks {
		if t.TenantID == "" && len(out) < take {
			out = append(out, t)
		}
	}
	if skip < tenanted {
		// Cut by the bound, not by tasks that came since the count.
		cut = cut && len(out) < take
		if cut {
			x.mu.Lock()
			x.out.Unwatched += int64(take - len(out))
			x.mu.Unlock()
		}
	}
	return out, cut, err
}

// oldestFetchable returns the oldest fetchable task of a topic key (none
// when it has none). For no tenant it reads the topic's fetchable tasks
// oldest first, a page at a time, up to oldestPages pages, for the first
// without a tenant; if none is found there, the age is not known
// (tr.OldestUnknown) rather than made up.
func (x *restRead) oldestFetchable(ctx context.Context, key string, tr *reading.TopicRead) ([]camunda.ExternalTask, error) {
	byCreate := camunda.Sort{By: camunda.ExternalTaskSortCreateTime, Order: camunda.Ascending}
	q, noTenant := x.queryOf(key, qFetchable)
	if !noTenant {
		return x.r.client.ListExternalTasks(ctx, q, camunda.Page{MaxResults: 1, Sort: byCreate})
	}
	for page := range oldestPages {
		size := x.r.scanPage()
		tasks, err := x.r.client.ListExternalTasks(ctx, q, camunda.Page{FirstResult: page * size, MaxResults: size, Sort: byCreate})
		if err != nil {
			return nil, err
		}
		for _, t := range tasks {
			if t.TenantID == "" {
				return []camunda.ExternalTask{t}, nil
			}
		}
		if len(tasks) < size {
			break
		}
	}
	x.mu.Lock()
	tr.OldestUnknown = true
	x.mu.Unlock()
	return nil, nil
}

// oldestPages bounds the pages oldestFetchable reads for the oldest task
// without a tenant.
const oldestPages = 3

// obsOf is a listed task as the reader returns it, keyed by its topic
// alone (obs keys it by its tenant too).
func obsOf(t camunda.ExternalTask) reading.TaskObs {
	o := reading.TaskObs{ID: t.ID, Topic: t.TopicName, Worker: t.WorkerID, Retries: t.Retries, ErrMsg: t.ErrorMessage,
		PI: t.ProcessInstanceID, Activity: t.ActivityID, BusinessKey: t.BusinessKey,
		ActInst: t.ActivityInstanceID, DefID: t.ProcessDefinitionID}
	if t.LockExpirationTime != nil {
		o.Exp = t.LockExpirationTime.Time
	}
	return o
}
