package capability

import (
	"testing"

	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/config"
)

// TestLevelOfProperty: the engine's historyLevel property is the id of its
// HistoryLevel; a custom level (any other id) and garbage are unknown.
func TestLevelOfProperty(t *testing.T) {
	for value, want := range map[string]Level{
		"0": LevelNone, "1": LevelActivity, "2": LevelAudit, "3": LevelFull,
		"4": LevelUnknown, "-1": LevelUnknown, "17": LevelUnknown, "": LevelUnknown, "full": LevelUnknown,
	} {
		if got := LevelOfProperty(value); got != want {
			t.Errorf("historyLevel %q: %s, want %s", value, got, want)
		}
	}
}

// TestLevelNamed: every configurable level has its name; auto and unknown
// are no level.
func TestLevelNamed(t *testing.T) {
	for _, name := range config.HistoryLevels() {
		if l, ok := LevelNamed(name); !ok || l.String() != name {
			t.Errorf("history_level %s: %s, %v", name, l, ok)
		}
	}
	for _, name := range []string{config.HistoryLevelAuto, "unknown", ""} {
		if _, ok := LevelNamed(name); ok {
			t.Errorf("history_level %q names a level", name)
		}
	}
}

// TestHistoryLevelSupport: every metric named is in the catalog, once, and
// unknown reads as none; what needs no history is the same at every level.
func TestHistoryLevelSupport(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range HistoryLevelSupport() {
		if _, ok := catalog.Lookup(s.Metric); !ok || seen[s.Metric] {
			t.Errorf("%s: not in the catalog, or twice", s.Metric)
		}
		seen[s.Metric] = true
		if s.At("unknown") != s.None || s.At("full") != s.Full || s.At("audit") != s.Audit || s.At("activity") != s.Activity {
			t.Errorf("%s: At disagrees with the table", s.Metric)
		}
		if s.Why == "" {
			t.Errorf("%s: no reason given", s.Metric)
		}
	}
	for _, m := range []string{catalog.CamundaExternalTaskCompletions, catalog.CamundaExternalTaskWorkerIdle, catalog.CamundaJobSuccesses, catalog.CamundaExternalTasksEnded} {
		if !seen[m] {
			t.Errorf("%s missing from HistoryLevelSupport", m)
		}
	}
}
