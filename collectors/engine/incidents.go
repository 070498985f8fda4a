package engine

import (
	"sort"
	"time"

	"github.com/workflow-exporter/workflow-exporter/catalog"
)

// incidentKey is one camunda_incidents series.
type incidentKey struct{ typ, key, activity string }

// incidentRead is the open incidents, grouped.
type incidentRead struct {
	// groups are in the order their labels are to be admitted (oldest
	// incident first), so both readers fold the same tuples.
	groups []incidentGroup
	// oldest is the oldest open incident per incident type, for the types
	// whose oldest incident is known.
	oldest map[string]time.Time
	// messages are the open incidents with their messages, oldest first,
	// at most max_listed_tasks, for the status page's incident groups
	// (failures.go); read only when the request asks (messages).
	messages []incidentMessage
	// messagesCut: more incidents are open than messages holds.
	messagesCut bool
}

// incidentMessage is one open incident as the incident groups need it.
type incidentMessage struct {
	typ, key, message, pi string
	ts                    time.Time
}

// incidentGroup is one camunda_incidents series before label limits.
type incidentGroup struct {
	key incidentKey
	n   int64
	// folded: the reader already put these incidents under "other" (the
	// REST list was cut short); they bypass the label limiter.
	folded bool
}

// incidents emits camunda_incidents and camunda_incident_oldest_age_seconds
// from the grouped open incidents (how each reader groups them is next to
// the reader). Label tuples beyond label_value_limit fold into the
// all-"other" series; series seen once keep reporting 0 after their
// incidents are resolved. A type without a known oldest incident (only
// beyond a cut REST list) gets no age: a made-up age would be worse than
// none.
func (run *collectionRun) incidents(rd incidentRead) {
	counts := run.incidentCounts(rd.groups)
	for ik := range counts {
		run.st.incidents[ik] = true
	}
	for _, ik := range sortedIncidentKeys(run.st.incidents) {
		run.gauge(catalog.CamundaIncidents, float64(counts[ik]), run.c.e.name, ik.typ, ik.key, ik.activity)
	}
	for typ := range rd.oldest {
		run.st.oldestInc[typ] = true
	}
	open := map[string]bool{}
	for ik, n := range counts {
		open[ik.typ] = open[ik.typ] || n > 0
	}
	for _, typ := range sortedKeys(run.st.oldestInc) {
		ts, ok := rd.oldest[typ]
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
func (run *collectionRun) incidentCounts(groups []incidentGroup) map[incidentKey]int64 {
	var tuples [][]string
	for _, g := range groups {
		if !g.folded {
			tuples = append(tuples, []string{g.key.typ, g.key.key, g.key.activity})
		}
	}
	run.c.incidentLimit.Offer(tuples...)
	counts := map[incidentKey]int64{}
	for _, g := range groups {
		ik := g.key
		if !g.folded {
			l := run.c.incidentLimit.Admit(ik.typ, ik.key, ik.activity)
			ik = incidentKey{l[0], l[1], l[2]}
		}
		counts[ik] += g.n
	}
	return counts
}

func sortedIncidentKeys(m map[incidentKey]bool) []incidentKey {
	keys := make([]incidentKey, 0, len(m))
	for ik := range m {
		keys = append(keys, ik)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.typ != b.typ {
			return a.typ < b.typ
		}
		if a.key != b.key {
			return a.key < b.key
		}
		return a.activity < b.activity
	})
	return keys
}
