package engine

import (
	"sort"

	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine/reading"
)

// incidents emits camunda_incidents and camunda_incident_oldest_age_seconds
// from the grouped open incidents (how each reader groups them is next to
// the reader). Label tuples beyond label_value_limit fold into the
// all-"other" series; series seen once keep reporting 0 after their
// incidents are resolved. A type without a known oldest incident (only
// beyond a cut REST list) gets no age: a made-up age would be worse than
// none.
func (run *collectionRun) incidents(rd reading.IncidentRead) {
	counts := run.incidentCounts(rd.Groups)
	for ik := range counts {
		run.st.incidents[ik] = true
	}
	for _, ik := range sortedIncidentKeys(run.st.incidents) {
		run.gauge(catalog.CamundaIncidents, float64(counts[ik]), run.c.e.name, ik.Type, ik.Key, ik.Activity)
	}
	for typ := range rd.Oldest {
		run.st.oldestInc[typ] = true
	}
	open := map[string]bool{}
	for ik, n := range counts {
		open[ik.Type] = open[ik.Type] || n > 0
	}
	for _, typ := range sortedKeys(run.st.oldestInc) {
		ts, ok := rd.Oldest[typ]
		switch {
		case ok:
			run.gauge(catalog.CamundaIncidentOldestAge, max(0, run.engineNow.Sub(ts).Seconds()), run.c.e.name, typ)
		case !open[typ]:
			run.gauge(catalog.CamundaIncidentOldestAge, 0, run.c.e.name, typ)
		}
		// Open, but all beyond a cut REST list: no age (see above).
	}
}

// incidentCounts sums the groups by their label tuple, new tuples offered
// to the label limiter in its order (groups a reader already folded bypass
// it).
func (run *collectionRun) incidentCounts(groups []reading.IncidentGroup) map[reading.IncidentKey]int64 {
	var tuples [][]string
	for _, g := range groups {
		if !g.Folded {
			tuples = append(tuples, []string{g.Key.Type, g.Key.Key, g.Key.Activity})
		}
	}
	run.c.incidentLimit.Offer(tuples...)
	counts := map[reading.IncidentKey]int64{}
	for _, g := range groups {
		ik := g.Key
		if !g.Folded {
			l := run.c.incidentLimit.Admit(ik.Type, ik.Key, ik.Activity)
			ik = reading.IncidentKey{Type: l[0], Key: l[1], Activity: l[2]}
		}
		counts[ik] += g.N
	}
	return counts
}

func sortedIncidentKeys(m map[reading.IncidentKey]bool) []reading.IncidentKey {
	keys := make([]reading.IncidentKey, 0, len(m))
	for ik := range m {
		keys = append(keys, ik)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.Type != b.Type {
			return a.Type < b.Type
		}
		if a.Key != b.Key {
			return a.Key < b.Key
		}
		return a.Activity < b.Activity
	})
	return keys
}
