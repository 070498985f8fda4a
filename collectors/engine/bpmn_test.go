package engine

import (
	"fmt"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/collectors/engine/reading"
)

func TestBpmnErrors(t *testing.T) {
	del := func(id, rootPI string, at time.Duration) reading.HistoryEntry {
		return reading.HistoryEntry{ID: id, Kind: reading.LogDeletion, ActInst: "ai-" + id, RootPI: rootPI, TS: tBase.Add(at)}
	}
	catch := func(id, rootPI string, at time.Duration) reading.CatchEvent {
		return reading.CatchEvent{ID: id, RootPI: rootPI, Start: tBase.Add(at)}
	}
	cases := []struct {
		name    string
		entries []reading.HistoryEntry // oldest first here; the function gets them newest first
		ev      reading.BPMNEvidence
		used    map[string]time.Time
		want    string
	}{
		{"uncaught: the scope completed", []reading.HistoryEntry{del("d1", "p1", 0)},
			reading.BPMNEvidence{ScopeCompleted: map[string]bool{"ai-d1": true}}, nil, "[d1]"},
		{"caught: a catch event in the same root process instance right after", []reading.HistoryEntry{del("d1", "p1", 0)},
			reading.BPMNEvidence{Catches: []reading.CatchEvent{catch("c1", "p1", 3*time.Millisecond)}}, nil, "[d1]"},
		{"a cancellation: no evidence", []reading.HistoryEntry{del("d1", "p1", 0)}, reading.BPMNEvidence{}, nil, "[]"},
		{"a catch event of another root process instance", []reading.HistoryEntry{del("d1", "p1", 0)},
			reading.BPMNEvidence{Catches: []reading.CatchEvent{catch("c1", "p2", 0)}}, nil, "[]"},
		{"a catch event more than a second away", []reading.HistoryEntry{del("d1", "p1", 0)},
			reading.BPMNEvidence{Catches: []reading.CatchEvent{catch("c1", "p1", 1500*time.Millisecond)}}, nil, "[]"},
		{"one catch event, two deletions: the closest", []reading.HistoryEntry{del("d1", "p1", 0), del("d2", "p1", 400*time.Millisecond)},
			reading.BPMNEvidence{Catches: []reading.CatchEvent{catch("c1", "p1", 402*time.Millisecond)}}, nil, "[d2]"},
		{"a catch event paired before", []reading.HistoryEntry{del("d1", "p1", 0)},
			reading.BPMNEvidence{Catches: []reading.CatchEvent{catch("c1", "p1", 0)}}, map[string]time.Time{"c1": tBase}, "[]"},
		{"a failure or a success is no BPMN error", []reading.HistoryEntry{{ID: "f1", Kind: reading.LogFailure, ActInst: "ai-f1", RootPI: "p1", TS: tBase}},
			reading.BPMNEvidence{ScopeCompleted: map[string]bool{"ai-f1": true}, Catches: []reading.CatchEvent{catch("c1", "p1", 0)}}, nil, "[]"},
	}
	for _, c := range cases {
		used := c.used
		if used == nil {
			used = map[string]time.Time{}
		}
		newestFirst := make([]reading.HistoryEntry, len(c.entries))
		for i, e := range c.entries {
			newestFirst[len(c.entries)-1-i] = e
		}
		got := bpmnErrors(newestFirst, c.ev, used)
		var ids []string
		for _, e := range c.entries {
			if got[e.ID] {
				ids = append(ids, e.ID)
			}
		}
		if s := fmt.Sprint(ids); s != c.want && !(c.want == "[]" && len(ids) == 0) {
			t.Errorf("%s: BPMN errors %s, want %s", c.name, s, c.want)
		}
	}
}

func TestPruneCatches(t *testing.T) {
	used := map[string]time.Time{"old": tBase.Add(-time.Minute), "recent": tBase.Add(-time.Second)}
	pruneCatches(used, tBase)
	if _, ok := used["old"]; ok || len(used) != 1 {
		t.Fatalf("after pruning: %v", used)
	}
}
