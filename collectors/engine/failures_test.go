package engine

import (
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/workflow-exporter/workflow-exporter/collectors/engine/reading"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

func TestFailureGroupsAdmitTheFirstSignaturesPerLabel(t *testing.T) {
	g := newFailureGroups(nil, 2)
	t0 := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	fail := func(label, msg, worker, id string, sec int) {
		g.observe(failure{label: label, message: msg, worker: worker, id: id, ts: t0.Add(time.Duration(sec) * time.Second)})
	}
	fail("pay", "order 4711 timed out after 30012 ms", "w1", "t1", 0)
	fail("pay", "order 4712 timed out after 30007 ms", "w2", "t2", 1)
	fail("pay", "connection refused", "w1", "t3", 2)
	fail("pay", "disk full", "w1", "t4", 3)          // a third cause: other
	fail("pay", "permission denied", "w3", "t5", 4)  // a fourth: other too
	fail("pay", "connection refused", "w2", "t6", 5) // admitted before: its own
	fail("ship", "disk full", "w1", "t7", 6)         // another label has its own limit

	want := map[string]float64{
		"pay/order <n> timed out after <n> ms": 2,
		"pay/connection refused":               2,
		"pay/other":                            2,
		"ship/disk full":                       1,
	}
	desc := prometheus.NewDesc("x", "x", []string{"engine", "topic", "error"}, nil)
	got := map[string]float64{}
	for _, m := range g.metrics(desc, func(k string) []string { return []string{"e1", k} }) {
		var d dto.Metric
		if err := m.Write(&d); err != nil {
			t.Fatal(err)
		}
		l := map[string]string{}
		for _, lp := range d.GetLabel() {
			l[lp.GetName()] = lp.GetValue()
		}
		if l["engine"] != "e1" {
			t.Errorf("engine label %q", l["engine"])
		}
		got[l["topic"]+"/"+l["error"]] = d.GetCounter().GetValue()
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("series %v, want %v", got, want)
	}

	l := g.list(vocab.KindTaskFailureGroups, "e1", true, false, t0.Add(time.Minute))
	if l.Total != 4 || len(l.Items) != 4 {
		t.Fatalf("list %+v, want 4 groups", l)
	}
	for _, it := range l.Items {
		if it.Topic == "pay" && it.ErrorSignature == "order <n> timed out after <n> ms" {
			if it.Count != 2 || it.DistinctWorkers != 2 || it.ExternalTaskID != "t2" || !it.Since.Equal(t0) || !it.LastSeen.Equal(t0.Add(time.Second)) || it.AgeSeconds != 60 {
				t.Errorf("timeout group %+v", it)
			}
		}
	}
}

func TestFailureGroupsCloneAndOff(t *testing.T) {
	g := newFailureGroups(nil, 10)
	g.observe(failure{label: "pay", message: "boom", worker: "w1", id: "t1", ts: time.Unix(1, 0)})
	c := g.clone()
	c.observe(failure{label: "pay", message: "boom", worker: "w2", id: "t2", ts: time.Unix(2, 0)})
	c.observe(failure{label: "ship", message: "boom", worker: "w2", id: "t3", ts: time.Unix(2, 0)})
	if fg := g.by["pay"]["boom"]; fg.count != 1 || len(fg.workers) != 1 || fg.example != "t1" || len(g.by) != 1 {
		t.Fatalf("the original changed with its clone: %+v", g.by)
	}
	off := false
	if g := newFailureGroups(&off, 10); g.by != nil || g.clone().by != nil || len(g.metrics(nil, func(k string) []string { return []string{"e1", k} })) != 0 {
		t.Fatal("failure_signatures: false still groups")
	}
}

func TestFailureGroupsExampleIndependentOfOrder(t *testing.T) {
	ts := time.Unix(5, 0)
	a, b := newFailureGroups(nil, 10), newFailureGroups(nil, 10)
	a.observe(failure{label: "p", message: "x", id: "t1", ts: ts})
	a.observe(failure{label: "p", message: "x", id: "t2", ts: ts})
	b.observe(failure{label: "p", message: "x", id: "t2", ts: ts})
	b.observe(failure{label: "p", message: "x", id: "t1", ts: ts})
	if a.by["p"]["x"].example != b.by["p"]["x"].example {
		t.Fatalf("the example of two failures at one instant depends on their order: %s, %s", a.by["p"]["x"].example, b.by["p"]["x"].example)
	}
}

func TestIncidentGroups(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	incs := []reading.IncidentMessage{
		{Type: "failedJob", Key: "order", Message: "order 4711 timed out after 30012 ms", PI: "p1", TS: at(0)},
		{Type: "failedJob", Key: "order", Message: "order 4712 timed out after 30007 ms", PI: "p2", TS: at(5)},
		{Type: "failedJob", Key: "order", Message: "connection refused", PI: "p3", TS: at(6)},
		{Type: "failedJob", Key: "order", Message: "disk full", PI: "p4", TS: at(7)}, // beyond the limit of 2
		{Type: "failedExternalTask", Key: "order", Message: "disk full", PI: "p5", TS: at(8)},
	}
	l := incidentGroups(vocab.KindIncidentGroups, "e1", incs, 2, true, false, at(60))
	got := map[string]string{}
	for _, it := range l.Items {
		got[it.IncidentType+"/"+it.ErrorSignature] = fmt.Sprintf("%d %s %s %s %.0f", it.Count, it.Since.Format("05"), it.LastSeen.Format("05"), it.ProcessInstanceID, it.AgeSeconds)
	}
	want := map[string]string{
		"failedJob/order <n> timed out after <n> ms": "2 00 05 p2 60",
		"failedJob/connection refused":               "1 06 06 p3 54",
		"failedJob/other":                            "1 07 07 p4 53",
		"failedExternalTask/disk full":               "1 08 08 p5 52",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) || l.Total != 4 || !l.Partial {
		t.Fatalf("groups %v (total %d, partial %v), want %v", got, l.Total, l.Partial, want)
	}
}
