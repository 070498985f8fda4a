package poll

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/workflow-exporter/workflow-exporter/collectors"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// listingCollector reports one status list per collection when the page is
// on, and says whether it found a sink.
type listingCollector struct {
	fakeCollector
	sawSink []bool
}

func (l *listingCollector) Collect(ctx context.Context, sink *collectors.Sink) ([]prometheus.Metric, error) {
	l.sawSink = append(l.sawSink, sink != nil)
	if sink != nil {
		sink.Add(collectors.List{Kind: vocab.KindOutboxPending, Table: l.name, Total: int(l.value)})
	}
	return l.fakeCollector.Collect(ctx, sink)
}

// TestStatusListsOnlyOfCollectorsThatSucceeded: a failing collector keeps no
// list; a source that is down keeps none at all; without StatusItems no
// collector sees a sink.
func TestStatusListsOnlyOfCollectorsThatSucceeded(t *testing.T) {
	ok := &listingCollector{fakeCollector: fakeCollector{name: "outbox", value: 1}}
	bad := &listingCollector{fakeCollector: fakeCollector{name: "inbox", err: context.DeadlineExceeded}}
	src := NewSource(SourceOptions{Kind: "database", Name: "orders", MinInterval: time.Millisecond, Collectors: []collectors.Collector{ok, bad},
		Probe: func(context.Context) error { return nil }, StatusItems: 5})
	snap := src.Refresh(context.Background())
	if len(snap.Lists) != 1 || snap.Lists[0].Table != "outbox" {
		t.Fatalf("lists %+v, want the outbox collector's only", snap.Lists)
	}
	if r := snap.Results; len(r) != 3 || r[2].Collector != "inbox" || r[2].Err == nil {
		t.Fatalf("results %+v, want the inbox collector's failure", r)
	}

	down := NewSource(SourceOptions{Kind: "database", Name: "orders", Collectors: []collectors.Collector{ok},
		Probe: func(context.Context) error { return errors.New("refused") }, StatusItems: 5})
	if snap := down.Refresh(context.Background()); snap.Up || len(snap.Lists) != 0 {
		t.Fatalf("a source that is down kept lists: %+v", snap.Lists)
	}

	off := &listingCollector{fakeCollector: fakeCollector{name: "outbox"}}
	NewSource(SourceOptions{Kind: "database", Name: "orders", Collectors: []collectors.Collector{off}}).Refresh(context.Background())
	if len(off.sawSink) != 1 || off.sawSink[0] {
		t.Fatalf("with the page off a collector found a sink: %v", off.sawSink)
	}
}
