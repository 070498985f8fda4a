package fold

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
