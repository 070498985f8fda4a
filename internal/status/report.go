package status

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/workflow-exporter/workflow-exporter/alerts/rules"
	"github.com/workflow-exporter/workflow-exporter/blocks/failure"
	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/collectors"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine/capability"
	"github.com/workflow-exporter/workflow-exporter/internal/poll"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// Snapshot is one source as the page needs it: what the poll package keeps
// of the source's last collection.
type Snapshot struct {
	Kind, Name  string
	MinInterval time.Duration
	// Collected is false until the first collection has ended.
	Collected   bool
	Started     time.Time
	Up          bool
	LastSuccess time.Time
	Failures    []Failure
	// HistoryLevel is a Camunda engine's history_level label of
	// camunda_engine_info in the snapshot ("": none served).
	HistoryLevel string
	// Lists are what the collectors that succeeded reported.
	Lists []collectors.List
}

// Snapshots refreshes the sources of set as a scrape does (through the same
// min_interval gate, sharing a running collection), within ctx, and
// returns what the page needs of each source's newest snapshot.
func Snapshots(ctx context.Context, set *poll.Set) []Snapshot {
	set.Refresh(ctx)
	srcs := set.Sources()
	out := make([]Snapshot, 0, len(srcs))
	for _, src := range srcs {
		st := Snapshot{Kind: src.Kind(), Name: src.Name(), MinInterval: src.MinInterval()}
		if snap := src.Current(); snap != nil {
			st.Collected, st.Started, st.Up, st.LastSuccess, st.Lists = true, snap.Started, snap.Up, snap.LastSuccess, snap.Lists
			for _, r := range snap.Results {
				if r.Err != nil {
					st.Failures = append(st.Failures, Failure{Collector: r.Collector, Class: failure.Class(r.Err)})
				}
			}
			st.HistoryLevel = historyLevel(snap.Data)
		}
		out = append(out, st)
	}
	return out
}

// Options are the page's settings (the status: section of the config).
type Options struct {
	MaxItems int
	// RunbookBaseURL prefixes the runbook links; empty: the alert rules'
	// default.
	RunbookBaseURL string
}

// Build turns the sources' snapshots into the report. The rules:
//   - a source that is down or not collected yet contributes no list, and
//     neither does a collector that failed (poll keeps no list of it);
//   - a list that names the tasks of an engine (Engine) is left out while
//     that engine is not up, since the engine's view behind it is gone;
//   - every list gets its kind's title, alert and runbook link, and lists
//     are ordered by kind (the order of kinds), then source and table.
func Build(snaps []Snapshot, o Options, now time.Time) Report {
	base := o.RunbookBaseURL
	if base == "" {
		base = rules.DefaultRunbookBaseURL
	}
	r := Report{SchemaVersion: SchemaVersion, GeneratedAt: now.UTC(), MaxItems: o.MaxItems, Sources: []Source{}, Lists: []List{}}
	engineUp := map[string]bool{}
	engines := map[string]bool{}
	for _, s := range snaps {
		if s.Kind == vocab.SourceCamunda {
			engines[s.Name] = true
			engineUp[s.Name] = s.Collected && s.Up
		}
	}
	for _, s := range snaps {
		r.Sources = append(r.Sources, source(s))
		if !s.Collected || !s.Up {
			continue
		}
		for _, cl := range s.Lists {
			l := List{List: cl}
			if l.Engine != "" && engines[l.Engine] && !engineUp[l.Engine] {
				continue
			}
			info, _, ok := lookupKind(l.Kind)
			if ok {
				l.Title, l.Alert, l.Action = info.title, info.alert, info.action
				l.RunbookURL = rules.RunbookURL(base, info.alert)
				if a, ok := rules.Lookup(info.alert); ok {
					l.Severity = a.Severity
				}
			}
			if l.Items == nil {
				l.Items = []collectors.Item{}
			}
			r.Lists = append(r.Lists, l)
		}
	}
	sort.SliceStable(r.Sources, func(i, j int) bool {
		a, b := r.Sources[i], r.Sources[j]
		if a.Kind != b.Kind {
			return a.Kind == vocab.SourceCamunda
		}
		return a.Name < b.Name
	})
	sort.SliceStable(r.Lists, func(i, j int) bool {
		a, b := r.Lists[i], r.Lists[j]
		_, ka, _ := lookupKind(a.Kind)
		_, kb, _ := lookupKind(b.Kind)
		switch {
		case ka != kb:
			return ka < kb
		case a.Source != b.Source:
			return a.Source.Kind+"/"+a.Source.Name < b.Source.Kind+"/"+b.Source.Name
		case a.Table != b.Table:
			return a.Table < b.Table
		}
		return a.Engine < b.Engine
	})
	return r
}

// historyLevel is the history_level label of the snapshot's
// camunda_engine_info, "" when it holds none.
func historyLevel(data []prometheus.Metric) string {
	want := fmt.Sprintf("fqName: %q", catalog.CamundaEngineInfo)
	for _, m := range data {
		if !strings.Contains(m.Desc().String(), want) {
			continue
		}
		var pb dto.Metric
		if m.Write(&pb) != nil {
			continue
		}
		for _, l := range pb.GetLabel() {
			if l.GetName() == "history_level" {
				return l.GetValue()
			}
		}
	}
	return ""
}

func source(s Snapshot) Source {
	out := Source{Kind: s.Kind, Name: s.Name, MinIntervalSeconds: s.MinInterval.Seconds(), Failures: s.Failures}
	if s.HistoryLevel != "" {
		out.HistoryLevel, out.HistorySupport = s.HistoryLevel, capability.SupportAt(s.HistoryLevel)
	}
	switch {
	case !s.Collected:
		out.State = StateNotCollected
	case !s.Up:
		out.State = StateDown
	case len(s.Failures) > 0:
		out.State, out.Up = StateDegraded, true
	default:
		out.State, out.Up = StateUp, true
	}
	if s.Collected {
		t := s.Started.UTC()
		out.CollectedAt = &t
	}
	if !s.LastSuccess.IsZero() {
		t := s.LastSuccess.UTC()
		out.LastSuccessAt = &t
	}
	return out
}
