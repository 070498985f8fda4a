package engine

import (
	"fmt"
	"testing"
	"time"
)

func TestBpmnErrors(t *testing.T) {
	del := func(id, rootPI string, at time.Duration) historyEntry {
		return historyEntry{id: id, kind: logDeletion, actInst: "ai-" + id, rootPI: rootPI, ts: tBase.Add(at)}
	}
	catch := func(id, rootPI string, at time.Duration) catchEvent {
		return catchEvent{id: id, rootPI: rootPI, start: tBase.Add(at)}
	}
	cases := []struct {
		name    string
		entries []historyEntry // oldest first here; the function gets them newest first
		ev      bpmnEvidence
		used    map[string]time.Time
		want    string
	}{
		{"uncaught: the scope completed", []historyEntry{del("d1", "p1", 0)},
			bpmnEvidence{scopeCompleted: map[string]bool{"ai-d1": true}}, nil, "[d1]"},
		{"caught: a catch event in the same root process instance right after", []historyEntry{del("d1", "p1", 0)},
			bpmnEvidence{catches: []catchEvent{catch("c1", "p1", 3*time.Millisecond)}}, nil, "[d1]"},
		{"a cancellation: no evidence", []historyEntry{del("d1", "p1", 0)}, bpmnEvidence{}, nil, "[]"},
		{"a catch event of another root process instance", []historyEntry{del("d1", "p1", 0)},
			bpmnEvidence{catches: []catchEvent{catch("c1", "p2", 0)}}, nil, "[]"},
		{"a catch event more than a second away", []historyEntry{del("d1", "p1", 0)},
			bpmnEvidence{catches: []catchEvent{catch("c1", "p1", 1500*time.Millisecond)}}, nil, "[]"},
		{"one catch event, two deletions: the closest", []historyEntry{del("d1", "p1", 0), del("d2", "p1", 400*time.Millisecond)},
			bpmnEvidence{catches: []catchEvent{catch("c1", "p1", 402*time.Millisecond)}}, nil, "[d2]"},
		{"a catch event paired before", []historyEntry{del("d1", "p1", 0)},
			bpmnEvidence{catches: []catchEvent{catch("c1", "p1", 0)}}, map[string]time.Time{"c1": tBase}, "[]"},
		{"a failure or a success is no BPMN error", []historyEntry{{id: "f1", kind: logFailure, actInst: "ai-f1", rootPI: "p1", ts: tBase}},
			bpmnEvidence{scopeCompleted: map[string]bool{"ai-f1": true}, catches: []catchEvent{catch("c1", "p1", 0)}}, nil, "[]"},
	}
	for _, c := range cases {
		used := c.used
		if used == nil {
			used = map[string]time.Time{}
		}
		newestFirst := make([]historyEntry, len(c.entries))
		for i, e := range c.entries {
			newestFirst[len(c.entries)-1-i] = e
		}
		got := bpmnErrors(newestFirst, c.ev, used)
		var ids []string
		for _, e := range c.entries {
			if got[e.id] {
				ids = append(ids, e.id)
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
