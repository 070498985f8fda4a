package labellimit

import (
	"reflect"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"strings"
)

func TestLimiterFoldsPastLimitAndCounts(t *testing.T) {
	stats := NewStats()
	l := NewLimiter(stats, "workflow_outbox_events_pending", 2)
	steps := []struct {
		in, want []string
	}{
		{[]string{"Order", "Created"}, []string{"Order", "Created"}},
		{[]string{"Order", "Paid"}, []string{"Order", "Paid"}},
		{[]string{"Order", "Shipped"}, []string{"other", "other"}},
		{[]string{"Order", "Created"}, []string{"Order", "Created"}},
		{[]string{"Quote", "Approved"}, []string{"other", "other"}},
		{[]string{"Order", "Shipped"}, []string{"other", "other"}},
	}
	for i, s := range steps {
		if got := l.Admit(s.in...); !reflect.DeepEqual(got, s.want) {
			t.Fatalf("step %d: Admit(%v) = %v, want %v", i, s.in, got, s.want)
		}
	}
	l.Flush()
	// A second collection folding the same tuple counts again: the counter
	// says "series folded per collection", so rate() > 0 while folding lasts.
	l.Admit("Order", "Shipped")
	l.Flush()
	l.Admit("Zeta", "X")
	l.Discard()
	l.Flush()

	reg := metricsCollector{stats}
	want := `
# HELP workflow_exporter_label_values_folded_total Exporter: series folded into the label value "other" because the metric reached its label value limit, summed over collections.
# TYPE workflow_exporter_label_values_folded_total counter
workflow_exporter_label_values_folded_total{metric="workflow_outbox_events_pending"} 3
`
	if err := testutil.CollectAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Fatal(err)
	}
}

func TestRankedFoldsPerCall(t *testing.T) {
	stats := NewStats()
	r := NewRanked(stats, "camunda_external_tasks_locked_by_worker", 2)
	steps := []struct {
		in   map[string]int64
		want map[string]int64
	}{
		{map[string]int64{"p1": 1, "p2": 1}, map[string]int64{"p1": 1, "p2": 1}},
		// p1 and p2 are gone: p3 is not folded.
		{map[string]int64{"p3": 2}, map[string]int64{"p3": 2}},
		// Heaviest first, ties by value: c (3), then a (1) before b (1) and d (1).
		{map[string]int64{"d": 1, "b": 1, "c": 3, "a": 1}, map[string]int64{"c": 3, "a": 1, "other": 2}},
		// A value named "other" adds up with the folded ones.
		{map[string]int64{"x": 5, "y": 4, "z": 1, "other": 1}, map[string]int64{"x": 5, "y": 4, "other": 2}},
	}
	for i, s := range steps {
		if got := r.Fold(s.in); !reflect.DeepEqual(got, s.want) {
			t.Fatalf("step %d: Fold(%v) = %v, want %v", i, s.in, got, s.want)
		}
	}
	r.Flush()
	r.Fold(map[string]int64{"a": 1, "b": 1, "c": 1})
	r.Discard()
	r.Flush()
	want := `
# HELP workflow_exporter_label_values_folded_total Exporter: series folded into the label value "other" because the metric reached its label value limit, summed over collections.
# TYPE workflow_exporter_label_values_folded_total counter
workflow_exporter_label_values_folded_total{metric="camunda_external_tasks_locked_by_worker"} 4
`
	if err := testutil.CollectAndCompare(metricsCollector{stats}, strings.NewReader(want)); err != nil {
		t.Fatal(err)
	}
}
