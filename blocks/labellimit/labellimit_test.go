package labellimit

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
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

// TestOfferIsOrderIndependent: two limiters with the same admissions so
// far, offered the same reading in opposite orders, admit the same tuples:
// the ones first in Order, as many as places remain. A FCFS limiter (Admit
// alone) would have admitted the first of each reading instead.
func TestOfferIsOrderIndependent(t *testing.T) {
	reading := [][]string{{"billing.invoice"}, {"fulfillment.submit"}, {"crm.sync"}, {"payment.capture"}, {"shipping.label"}, {"billing.invoice"}}
	reversed := slices.Clone(reading)
	slices.Reverse(reversed)
	admitted := func(order [][]string) []string {
		l := NewLimiter(NewStats(), "m", 4)
		l.Admit("known")
		l.Offer(order...)
		var got []string
		for _, v := range order {
			if r := l.Admit(v...); r[0] != Other {
				got = append(got, r[0])
			}
		}
		slices.Sort(got)
		return slices.Compact(got)
	}
	a, b := admitted(reading), admitted(reversed)
	if !reflect.DeepEqual(a, b) || len(a) != 3 {
		t.Fatalf("admitted %v in reading order, %v in reverse; want the same 3", a, b)
	}
	ordered := slices.Clone(reading[:5])
	Order(ordered)
	var want []string
	for _, v := range ordered[:3] {
		want = append(want, v[0])
	}
	slices.Sort(want)
	if !reflect.DeepEqual(a, want) {
		t.Fatalf("admitted %v, want the first 3 in Order: %v", a, want)
	}
}

// TestReserveAlwaysAdmits: a reserved tuple (a configured topic) keeps its
// label even when the limit is reached, and an admitted tuple keeps it
// after an Offer that would rank it last.
func TestReserveAlwaysAdmits(t *testing.T) {
	l := NewLimiter(NewStats(), "m", 1)
	l.Admit("first")
	l.Reserve("configured")
	if got := l.Admit("configured"); got[0] != "configured" {
		t.Fatalf("reserved tuple folded: %v", got)
	}
	l.Offer([]string{"a"}, []string{"b"})
	if got := l.Admit("first"); got[0] != "first" {
		t.Fatalf("admitted tuple lost its label after an Offer: %v", got)
	}
	if got := l.Admit("a"); got[0] != Other {
		t.Fatalf("a tuple beyond the limit kept its label: %v", got)
	}
}

// forgetting is a limiter that forgets tuples unseen for an hour, with one
// reserved (configured) value.
func forgetting(limit int, reserved string) *Limiter {
	l := NewLimiter(NewStats(), "m", limit)
	l.SetForgetAfter(time.Hour)
	l.Reserve(reserved)
	return l
}

// A tuple no successful collection saw for the forget-after time gives its
// place back: a new value takes it instead of folding. Reserved tuples stay,
// and what a failed collection saw does not count as seen.
func TestLimiterForgetsUnseenTuples(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := forgetting(2, "configured")
	l.Admit("old")
	if freed := l.Sweep(t0); freed != nil {
		t.Fatalf("freed %v at once", freed)
	}
	if got := l.Admit("new")[0]; got != Other {
		t.Fatalf("new admitted as %q past the limit", got)
	}
	l.Flush()
	l.Sweep(t0.Add(30 * time.Minute))
	// A failed collection sees old: not a sighting.
	l.Admit("old")
	l.Discard()
	freed := l.Sweep(t0.Add(61 * time.Minute))
	if !reflect.DeepEqual(freed, [][]string{{"old"}}) {
		t.Fatalf("freed %v, want old (the reserved tuple stays)", freed)
	}
	if got := l.Admit("new")[0]; got != "new" {
		t.Fatalf("new folded as %q after old's place was freed", got)
	}
	if l.Len() != 2 {
		t.Fatalf("Len = %d, want 2", l.Len())
	}
	// Seen in every collection: never freed.
	for m := 62; m < 300; m += 30 {
		l.Admit("new")
		if freed := l.Sweep(t0.Add(time.Duration(m) * time.Minute)); freed != nil {
			t.Fatalf("freed %v though seen in every collection", freed)
		}
	}
}

// Without a forget-after time nothing is tracked or freed.
func TestLimiterWithoutForgetAfterKeepsEverything(t *testing.T) {
	l := NewLimiter(NewStats(), "m", 2)
	l.Admit("a")
	if freed := l.Sweep(time.Now().Add(1000 * time.Hour)); freed != nil {
		t.Fatalf("freed %v", freed)
	}
	if len(l.touched) != 0 {
		t.Fatalf("tracked %d sightings without forget-after", len(l.touched))
	}
}

// Admissions restored into a new limiter keep their labels whatever the
// order the source offers values in now, and keep their last sighting;
// past a lowered limit the restored tuples are taken in Order.
func TestLimiterRestore(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := forgetting(3, "cfg")
	l.Admit("z")
	l.Admit("y")
	l.Sweep(t0)
	saved := l.Admissions()
	if len(saved) != 3 || !saved[0].Reserved || saved[0].Values[0] != "cfg" || !saved[1].Seen.Equal(t0) {
		t.Fatalf("Admissions = %+v", saved)
	}

	next := forgetting(3, "cfg")
	next.Restore(saved)
	next.Offer([]string{"a"}, []string{"b"})
	for _, v := range []string{"z", "y"} {
		if got := next.Admit(v)[0]; got != v {
			t.Fatalf("restored %q admitted as %q", v, got)
		}
	}
	if got := next.Admit("a")[0]; got != Other {
		t.Fatalf("a took a restored tuple's place: %q", got)
	}
	// That collection failed: its sightings do not count. The restored
	// ones do: unseen since t0, z and y are freed an hour after it,
	// although this process has not run an hour.
	next.Discard()
	if freed := next.Sweep(t0.Add(61 * time.Minute)); !reflect.DeepEqual(freed, [][]string{{"y"}, {"z"}}) {
		t.Fatalf("freed %v, want y and z (restored, unseen since t0)", freed)
	}

	small := NewLimiter(NewStats(), "m", 1)
	small.Restore([]Admission{{Values: []string{"z"}}, {Values: []string{"y"}}})
	order := [][]string{{"z"}, {"y"}}
	Order(order)
	if small.Len() != 1 || small.Admit(order[0][0])[0] != order[0][0] {
		t.Fatalf("past a lowered limit the restore did not keep the first in Order (%v)", order)
	}
}
