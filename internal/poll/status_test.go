package poll

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/workflow-exporter/workflow-exporter/internal/status"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// listingCollector reports one status list per collection when the page is
// on, and says whether it found a sink.
type listingCollector struct {
	fakeCollector
	sawSink []bool
}

func (l *listingCollector) Collect(ctx context.Context) ([]prometheus.Metric, error) {
	sink := status.FromContext(ctx)
	l.sawSink = append(l.sawSink, sink != nil)
	if sink != nil {
		sink.Add(status.List{Kind: vocab.KindOutboxPending, Table: l.name, Total: int(l.value)})
	}
	return l.fakeCollector.Collect(ctx)
}

// TestStatusPageGoesThroughTheMinIntervalGate: page loads refresh sources
// exactly as scrapes do, so however often the page is loaded, a source
// collects at most once per min_interval.
func TestStatusPageGoesThroughTheMinIntervalGate(t *testing.T) {
	clk := &clock{t: time.Unix(1000, 0)}
	lc := &listingCollector{fakeCollector: fakeCollector{name: "outbox", value: 3}}
	src := NewSource(SourceOptions{Kind: "database", Name: "orders", MinInterval: 30 * time.Second, Collectors: []Collector{lc},
		StatusItems: 50, Now: clk.now})
	set := NewSet(nil, src)
	for i, step := range []struct {
		advance   time.Duration
		wantCalls int32
	}{{0, 1}, {time.Second, 1}, {28 * time.Second, 1}, {time.Second, 2}, {0, 2}} {
		clk.advance(step.advance)
		snaps := set.StatusSnapshots(context.Background())
		if got := lc.calls.Load(); got != step.wantCalls {
			t.Fatalf("page load %d: %d collections, want %d", i, got, step.wantCalls)
		}
		if len(snaps) != 1 || !snaps[0].Collected || !snaps[0].Up || len(snaps[0].Lists) != 1 || snaps[0].Lists[0].Total != 3 ||
			snaps[0].Lists[0].Source != (status.SourceRef{Kind: "database", Name: "orders"}) || snaps[0].MinInterval != 30*time.Second {
			t.Fatalf("page load %d: %+v", i, snaps)
		}
	}
	// A scrape within the interval collects nothing either: one gate.
	clk.advance(time.Second)
	src.Refresh(context.Background())
	if got := lc.calls.Load(); got != 2 {
		t.Fatalf("a scrape after the page loads collected again: %d collections", got)
	}
}

// TestStatusListsOnlyOfCollectorsThatSucceeded: a failing collector keeps no
// list; a source that is down keeps none at all; without StatusItems no
// collector sees a sink.
func TestStatusListsOnlyOfCollectorsThatSucceeded(t *testing.T) {
	ok := &listingCollector{fakeCollector: fakeCollector{name: "outbox", value: 1}}
	bad := &listingCollector{fakeCollector: fakeCollector{name: "inbox", err: context.DeadlineExceeded}}
	src := NewSource(SourceOptions{Kind: "database", Name: "orders", MinInterval: time.Millisecond, Collectors: []Collector{ok, bad},
		Probe: func(context.Context) error { return nil }, StatusItems: 5})
	snap := src.Refresh(context.Background())
	if len(snap.Status) != 1 || snap.Status[0].Table != "outbox" {
		t.Fatalf("lists %+v, want the outbox collector's only", snap.Status)
	}
	snaps := NewSet(nil, src).StatusSnapshots(context.Background())
	if f := snaps[0].Failures; len(f) != 1 || f[0].Collector != "inbox" || f[0].Class != "timeout" {
		t.Fatalf("failures %+v", f)
	}

	down := NewSource(SourceOptions{Kind: "database", Name: "orders", Collectors: []Collector{ok},
		Probe: func(context.Context) error { return errors.New("refused") }, StatusItems: 5})
	if snap := down.Refresh(context.Background()); snap.Up || len(snap.Status) != 0 {
		t.Fatalf("a source that is down kept lists: %+v", snap.Status)
	}

	off := &listingCollector{fakeCollector: fakeCollector{name: "outbox"}}
	NewSource(SourceOptions{Kind: "database", Name: "orders", Collectors: []Collector{off}}).Refresh(context.Background())
	if len(off.sawSink) != 1 || off.sawSink[0] {
		t.Fatalf("with the page off a collector found a sink: %v", off.sawSink)
	}
}
