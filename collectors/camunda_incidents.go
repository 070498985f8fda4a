package collectors

import (
	"context"
	"sort"

	"github.com/workflow-exporter/workflow-exporter/camunda"
	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/internal/fold"
)

// incidentKey is one camunda_incidents series.
type incidentKey struct{ typ, key, activity string }

// incidents emits camunda_incidents and camunda_incident_oldest_age_seconds.
//
// Requests: GET /incident/count (1); when there are open incidents, the list
// sorted by incidentTimestamp ascending, paged, at most max_listed_tasks
// items (ceil((n+1)/page) requests); process definition id -> key lookups
// for ids not yet cached (batched by 50, cached for the process); and, only
// when the list was cut short, one /incident/count?incidentType=T per type
// seen, whose unlisted remainder is reported with process_definition_key and
// activity_id "other"; what the total leaves beyond those (incidents of
// types that only appear beyond the list) is reported with all three labels
// "other", without an oldest age. Because the list is sorted oldest first,
// the oldest incident of every listed type is in the list. Series seen once
// keep reporting 0 after their incidents are resolved.
func (k *collection) incidents() error {
	c := k.c
	n, err := c.client.CountIncidents(k.ctx, camunda.IncidentQuery{})
	if err != nil {
		return err
	}
	var list []camunda.Incident
	var truncated bool
	if n > 0 {
		list, truncated, err = camunda.Collect(k.ctx,
			camunda.Page{Sort: camunda.Sort{By: camunda.IncidentSortTimestamp, Order: camunda.Ascending}},
			c.client.DefaultPageSize(), c.cfg.MaxListedTasks,
			func(ctx context.Context, p camunda.Page) ([]camunda.Incident, error) {
				return c.client.ListIncidents(ctx, camunda.IncidentQuery{}, p)
			})
		if err != nil {
			return err
		}
	}
	ids := make([]string, 0, len(list))
	for _, in := range list {
		ids = append(ids, in.ProcessDefinitionID)
	}
	keys, err := c.client.ProcessDefinitionKeys(k.ctx, ids)
	if err != nil {
		return err
	}
	counts := map[incidentKey]int64{}
	oldest := map[string]camunda.Time{}
	perType := map[string]int64{}
	for _, in := range list {
		key := keys[in.ProcessDefinitionID]
		if key == "" {
			key = in.ProcessDefinitionID // definition deleted meanwhile
		}
		l := c.incidentLimit.Admit(in.IncidentType, key, in.ActivityID)
		counts[incidentKey{l[0], l[1], l[2]}]++
		perType[in.IncidentType]++
		if _, ok := oldest[in.IncidentType]; !ok {
			oldest[in.IncidentType] = in.IncidentTimestamp
		}
	}
	if truncated {
		// Types seen in the list: their unlisted rest, by type. Types only
		// beyond the list cannot be asked for by name: what the per-type
		// counts leave of the total goes to incident_type="other". It gets no
		// oldest age: the list is sorted oldest first, so all that is known is
		// an upper bound (the age of the last listed incident), and a made-up
		// age would be worse than none.
		rest := n - int64(len(list))
		for _, typ := range sortedKeys(perType) {
			all, err := c.client.CountIncidents(k.ctx, camunda.IncidentQuery{IncidentType: typ})
			if err != nil {
				return err
			}
			if r := all - perType[typ]; r > 0 {
				counts[incidentKey{typ, fold.Other, fold.Other}] += r
				rest -= r
			}
		}
		if rest > 0 {
			counts[incidentKey{fold.Other, fold.Other, fold.Other}] += rest
		}
	}
	for ik := range counts {
		k.st.incidents[ik] = true
	}
	for typ := range oldest {
		k.st.oldestInc[typ] = true
	}
	keysSorted := make([]incidentKey, 0, len(k.st.incidents))
	for ik := range k.st.incidents {
		keysSorted = append(keysSorted, ik)
	}
	sort.Slice(keysSorted, func(i, j int) bool {
		a, b := keysSorted[i], keysSorted[j]
		if a.typ != b.typ {
			return a.typ < b.typ
		}
		if a.key != b.key {
			return a.key < b.key
		}
		return a.activity < b.activity
	})
	for _, ik := range keysSorted {
		k.gauge(catalog.CamundaIncidents, float64(counts[ik]), c.engine, ik.typ, ik.key, ik.activity)
	}
	for _, typ := range sortedKeys(k.st.oldestInc) {
		age := 0.0
		if ts, ok := oldest[typ]; ok {
			age = max(0, k.engineNow.Sub(ts.Time).Seconds())
		}
		k.gauge(catalog.CamundaIncidentOldestAge, age, c.engine, typ)
	}
	return nil
}

// jobs emits camunda_jobs_retries_exhausted: GET /job/count?noRetriesLeft=true
// (1 request); when not 0, the list of those jobs, paged, at most
// max_listed_tasks items, grouped by processDefinitionKey (jobs carry it;
// the cached id lookup fills it in where a job lacks it). Jobs beyond the
// list go to process_definition_key="other". Keys seen once keep reporting 0.
func (k *collection) jobs() error {
	c := k.c
	q := camunda.JobQuery{Retries: camunda.RetriesNone}
	n, err := c.client.CountJobs(k.ctx, q)
	if err != nil {
		return err
	}
	counts := map[string]int64{}
	if n > 0 {
		list, _, err := camunda.Collect(k.ctx, camunda.Page{Sort: camunda.Sort{By: camunda.JobSortID, Order: camunda.Ascending}},
			c.client.DefaultPageSize(), c.cfg.MaxListedTasks,
			func(ctx context.Context, p camunda.Page) ([]camunda.Job, error) { return c.client.ListJobs(ctx, q, p) })
		if err != nil {
			return err
		}
		var missing []string
		for _, j := range list {
			if j.ProcessDefinitionKey == "" && j.ProcessDefinitionID != "" {
				missing = append(missing, j.ProcessDefinitionID)
			}
		}
		keys, err := c.client.ProcessDefinitionKeys(k.ctx, missing)
		if err != nil {
			return err
		}
		var listed int64
		for _, j := range list {
			key := j.ProcessDefinitionKey
			if key == "" {
				key = keys[j.ProcessDefinitionID]
			}
			counts[c.jobLimit.Admit(key)[0]]++
			listed++
		}
		if rest := n - listed; rest > 0 {
			counts[fold.Other] += rest
		}
	}
	for key := range counts {
		k.st.jobs[key] = true
	}
	for _, key := range sortedKeys(k.st.jobs) {
		k.gauge(catalog.CamundaJobsRetriesExhausted, float64(counts[key]), c.engine, key)
	}
	return nil
}
