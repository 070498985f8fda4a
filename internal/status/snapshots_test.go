package status

import (
	"bytes"
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/collectors"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine/capability"
	"github.com/workflow-exporter/workflow-exporter/internal/poll"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// listing reports one outbox list of total items per collection, or fails
// with err.
type listing struct {
	name  string
	total int
	err   error
	calls atomic.Int32
}

func (l *listing) Name() string { return l.name }

func (l *listing) Collect(_ context.Context, sink *collectors.Sink) ([]prometheus.Metric, error) {
	l.calls.Add(1)
	if l.err != nil {
		return nil, l.err
	}
	if sink != nil {
		sink.Add(collectors.List{Kind: vocab.KindOutboxPending, Table: l.name, Total: l.total})
	}
	return nil, nil
}

// TestPageLoadsGoThroughTheMinIntervalGate: page loads refresh sources
// exactly as scrapes do, so however often the page is loaded, a source
// collects at most once per min_interval.
func TestPageLoadsGoThroughTheMinIntervalGate(t *testing.T) {
	now := time.Unix(1000, 0)
	lc := &listing{name: "outbox", total: 3}
	src := poll.NewSource(poll.SourceOptions{Kind: vocab.SourceDatabase, Name: "orders", MinInterval: 30 * time.Second,
		Collectors: []collectors.Collector{lc}, StatusItems: 50, Now: func() time.Time { return now }})
	set := poll.NewSet(nil, src)
	for i, step := range []struct {
		advance   time.Duration
		wantCalls int32
	}{{0, 1}, {time.Second, 1}, {25 * time.Second, 1}, {time.Second, 2}, {0, 2}} {
		now = now.Add(step.advance)
		snaps := Snapshots(context.Background(), set)
		if got := lc.calls.Load(); got != step.wantCalls {
			t.Fatalf("page load %d: %d collections, want %d", i, got, step.wantCalls)
		}
		if len(snaps) != 1 || !snaps[0].Collected || !snaps[0].Up || len(snaps[0].Lists) != 1 || snaps[0].Lists[0].Total != 3 ||
			snaps[0].Lists[0].Source != (collectors.SourceRef{Kind: vocab.SourceDatabase, Name: "orders"}) || snaps[0].MinInterval != 30*time.Second {
			t.Fatalf("page load %d: %+v", i, snaps)
		}
	}
	// A scrape within the interval collects nothing either: one gate.
	now = now.Add(time.Second)
	src.Refresh(context.Background())
	if got := lc.calls.Load(); got != 2 {
		t.Fatalf("a scrape after the page loads collected again: %d collections", got)
	}
}

// TestSnapshotsNameFailuresByClass: a failed collector is listed with the
// class of its failure (blocks/failure), never with the error's text.
func TestSnapshotsNameFailuresByClass(t *testing.T) {
	ok := &listing{name: "outbox", total: 1}
	bad := &listing{name: "inbox", err: context.DeadlineExceeded}
	src := poll.NewSource(poll.SourceOptions{Kind: vocab.SourceDatabase, Name: "orders", MinInterval: time.Minute,
		Collectors: []collectors.Collector{ok, bad}, Probe: func(context.Context) error { return nil }, StatusItems: 5})
	snaps := SetProvider{Set: poll.NewSet(nil, src)}.StatusSnapshots(context.Background())
	if f := snaps[0].Failures; len(f) != 1 || f[0].Collector != "inbox" || f[0].Class != "timeout" {
		t.Fatalf("failures %+v", f)
	}
	if l := snaps[0].Lists; len(l) != 1 || l[0].Table != "outbox" {
		t.Fatalf("lists %+v, want the outbox collector's only", l)
	}
}

// engineInfo is a camunda collector that serves camunda_engine_info at a
// history level.
type engineInfo struct{ level string }

func (e engineInfo) Name() string { return "camunda" }

func (e engineInfo) Collect(context.Context, *collectors.Sink) ([]prometheus.Metric, error) {
	return []prometheus.Metric{prometheus.MustNewConstMetric(catalog.Desc(catalog.CamundaEngineInfo), prometheus.GaugeValue, 1,
		"main", "7.24.0", "camunda", e.level)}, nil
}

// TestHistoryLevelOnThePage: the page names an engine's history level as
// its last collection served it (camunda_engine_info), with what it means
// for each metric; below full in a note on the page, at full not.
func TestHistoryLevelOnThePage(t *testing.T) {
	for _, level := range []string{"none", "audit", "full"} {
		src := poll.NewSource(poll.SourceOptions{Kind: vocab.SourceCamunda, Name: "main", MinInterval: time.Minute,
			Collectors: []collectors.Collector{engineInfo{level}}, Probe: func(context.Context) error { return nil }, StatusItems: 5})
		snaps := SetProvider{Set: poll.NewSet(nil, src)}.StatusSnapshots(context.Background())
		if snaps[0].HistoryLevel != level {
			t.Fatalf("history level %q, want %q", snaps[0].HistoryLevel, level)
		}
		r := Build(snaps, Options{MaxItems: 5}, time.Now())
		s := r.Sources[0]
		support := map[capability.Support]string{}
		for _, g := range s.HistorySupport {
			support[g.Support] = strings.Join(g.Metrics, ",")
		}
		completions := map[string]capability.Support{"none": capability.Absent, "audit": capability.Exact, "full": capability.Exact}[level]
		idle := map[string]capability.Support{"none": capability.Absent, "audit": capability.Absent, "full": capability.Exact}[level]
		if s.HistoryLevel != level || !strings.Contains(support[completions], catalog.CamundaExternalTaskCompletions) ||
			!strings.Contains(support[idle], catalog.CamundaExternalTaskWorkerIdle) {
			t.Errorf("at %s: source %+v", level, s)
		}
		var b bytes.Buffer
		if err := NewHandlers(nil, HandlerOptions{}).Render(&b, r); err != nil {
			t.Fatal(err)
		}
		page := b.String()
		if !strings.Contains(page, `<td class="history-level">`+level+`</td>`) {
			t.Errorf("at %s the page's sources table does not name the level:\n%s", level, page)
		}
		note := `runs at history level ` + level + `, below full: `
		if got := strings.Contains(page, note); got != (level != "full") {
			t.Errorf("at %s the page's note %q shown: %v", level, note, got)
		}
		if level == "audit" && !strings.Contains(page, "lower bound: "+catalog.CamundaExternalTaskFailures) {
			t.Errorf("at audit the page does not call the failures a lower bound:\n%s", page)
		}
	}
}
