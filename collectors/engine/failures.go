package engine

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/workflow-exporter/workflow-exporter/blocks/labellimit"
	"github.com/workflow-exporter/workflow-exporter/blocks/signature"
	"github.com/workflow-exporter/workflow-exporter/collectors"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine/reading"
)

// Failures grouped by cause: each failure entry of a history log (the
// external-task log's errorMessage, the job log's exception message) is
// reduced to its signature (blocks/signature) and counted per topic or
// process definition key and signature, from the entries the stream reads
// anyway (no request per task or job).
//
// Series stay stable: the first failure_signature_limit signatures seen
// per topic or key are admitted for the exporter's lifetime, every later
// one counts under error="other". A signature's series appears with its
// first failure (like any label value first seen).
//
// The groups also feed the status page's "failure groups" list: count,
// first and last seen, distinct workers, the latest task or job as an
// example.

// otherSignature is the error label of the signatures beyond the limit.
const otherSignature = labellimit.Other

// maxGroupWorkers bounds the worker ids one group remembers: past it the
// group's worker count is a lower bound.
const maxGroupWorkers = 100

// failureGroup is one signature's failures under one label.
type failureGroup struct {
	count       float64
	first, last time.Time
	workers     map[string]struct{}
	// example is the task or job of the latest failure, and its process
	// instance.
	example, exampleProcess string
}

// failureGroups are the failures of one log grouped by label (topic label
// or process definition key label) and signature. A value: clone before
// changing a copy whose original must stay.
type failureGroups struct {
	limit int
	// by label, then signature (otherSignature for those beyond limit).
	by map[string]map[string]*failureGroup
}

// newFailureGroups returns the groups of an engine's config: off (by nil,
// nothing observed) with failure_signatures false.
func newFailureGroups(on *bool, limit int) failureGroups {
	if on != nil && !*on {
		return failureGroups{}
	}
	return failureGroups{limit: limit, by: map[string]map[string]*failureGroup{}}
}

func (g failureGroups) clone() failureGroups {
	if g.by == nil {
		return g
	}
	out := failureGroups{limit: g.limit, by: make(map[string]map[string]*failureGroup, len(g.by))}
	for label, sigs := range g.by {
		m := make(map[string]*failureGroup, len(sigs))
		for s, fg := range sigs {
			c := *fg
			c.workers = cloneMap(fg.workers)
			m[s] = &c
		}
		out.by[label] = m
	}
	return out
}

// failure is one failure entry of a log.
type failure struct {
	label, message, worker string
	// id is the task's or the job's id; process its process instance.
	id, process string
	ts          time.Time
}

// observe counts one failure under its label and signature.
func (g failureGroups) observe(f failure) {
	sigs := g.by[f.label]
	if sigs == nil {
		sigs = map[string]*failureGroup{}
		g.by[f.label] = sigs
	}
	sig := signature.Of(f.message)
	fg := sigs[sig]
	if fg == nil {
		admitted := len(sigs)
		if _, ok := sigs[otherSignature]; ok {
			admitted--
		}
		if admitted >= g.limit {
			sig = otherSignature
			fg = sigs[sig]
		}
	}
	if fg == nil {
		fg = &failureGroup{first: f.ts, workers: map[string]struct{}{}}
		sigs[sig] = fg
	}
	fg.count++
	if f.ts.Before(fg.first) {
		fg.first = f.ts
	}
	if fg.example == "" || replacesExample(f.ts, f.id, fg.last, fg.example) {
		fg.last, fg.example, fg.exampleProcess = f.ts, f.id, f.process
	}
	if _, ok := fg.workers[f.worker]; f.worker != "" && !ok && len(fg.workers) < maxGroupWorkers {
		fg.workers[f.worker] = struct{}{}
	}
}

// replacesExample: an entry at ts with id replaces a group's example, the
// entry at last with id example. The latest is the example; of two at the
// same instant the greater id, so that the order a reader returns them in
// (the REST API sorts by time alone) does not matter.
func replacesExample(ts time.Time, id string, last time.Time, example string) bool {
	return ts.After(last) || ts.Equal(last) && id > example
}

// metrics are one counter per label and signature: the label values of
// labels(label) (the engine, the label) and the signature.
func (g failureGroups) metrics(desc *prometheus.Desc, labels func(label string) []string) []prometheus.Metric {
	var out []prometheus.Metric
	for _, label := range sortedKeys(g.by) {
		for _, sig := range sortedKeys(g.by[label]) {
			out = append(out, prometheus.MustNewConstMetric(desc, prometheus.CounterValue, g.by[label][sig].count, append(labels(label), sig)...))
		}
	}
	return out
}

// list is the groups as the status page lists them (kind
// vocab.KindTaskFailureGroups with topics, KindJobFailureGroups with
// process definition keys), each with the latest failure as its example;
// now is the engine's clock (the groups' ages). The sink puts them in
// order of first failure and drops the items when the engine's
// identifiers are hidden (the count of groups stays).
func (g failureGroups) list(kind, engine string, topics, hide bool, now time.Time) collectors.List {
	l := collectors.List{Kind: kind, Engine: engine, IdentifiersHidden: hide}
	for _, label := range sortedKeys(g.by) {
		sigs := g.by[label]
		for _, sig := range sortedKeys(sigs) {
			fg := sigs[sig]
			first, last := fg.first.UTC(), fg.last.UTC()
			it := collectors.Item{Engine: engine, ErrorSignature: sig, Count: int(fg.count), Since: &first, LastSeen: &last,
				AgeSeconds: max(0, now.Sub(first).Seconds()), DistinctWorkers: len(fg.workers), ProcessInstanceID: fg.exampleProcess}
			tenant, key := reading.SplitKey(label)
			it.Tenant = tenant
			if topics {
				it.Topic, it.ExternalTaskID = key, fg.example
			} else {
				it.ProcessDefinitionKey, it.JobID = key, fg.example
			}
			l.Items = append(l.Items, it)
		}
	}
	l.Total = len(l.Items)
	return l
}

// incidentGroups are the open incidents grouped by type, process
// definition key and the signature of their message, for the status
// page's list (vocab.KindIncidentGroups): unlike the logs' failures they
// are what is open now, rebuilt by every collection. Per type and key the
// first limit signatures (oldest incidents first) keep their own group,
// the rest share "other"; the example is the newest incident's process
// instance. partial: more incidents are open than were read.
func incidentGroups(kind, engine string, incs []reading.IncidentMessage, limit int, partial, hide bool, now time.Time) collectors.List {
	type groupKey struct{ typ, key, sig string }
	type tk struct{ typ, key string }
	groups := map[groupKey]*collectors.Item{}
	sigs := map[tk]int{}
	var order []groupKey
	for _, in := range incs {
		gk := groupKey{in.Type, in.Key, signature.Of(in.Message)}
		if _, ok := groups[gk]; !ok {
			if sigs[tk{in.Type, in.Key}] >= limit {
				gk.sig = otherSignature
			}
		}
		it := groups[gk]
		if it == nil {
			sigs[tk{in.Type, in.Key}]++
			first := in.TS.UTC()
			it = &collectors.Item{Engine: engine, IncidentType: in.Type, Tenant: tenantOfKey(in.Key), ProcessDefinitionKey: plainKey(in.Key), ErrorSignature: gk.sig,
				Since: &first, AgeSeconds: max(0, now.Sub(first).Seconds())}
			groups[gk] = it
			order = append(order, gk)
		}
		it.Count++
		if it.LastSeen == nil || replacesExample(in.TS, in.PI, *it.LastSeen, it.ProcessInstanceID) {
			last := in.TS.UTC()
			it.LastSeen, it.ProcessInstanceID = &last, in.PI
		}
	}
	l := collectors.List{Kind: kind, Engine: engine, Partial: partial, IdentifiersHidden: hide}
	for _, gk := range order {
		l.Items = append(l.Items, *groups[gk])
	}
	l.Total = len(l.Items)
	return l
}
