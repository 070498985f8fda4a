package status

import (
	"fmt"
	"html/template"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/workflow-exporter/workflow-exporter/collectors"
)

// The HTML page's view of a Report: what page.html renders, prepared here
// so the template stays free of logic.

type pageView struct {
	Generated     string
	SchemaVersion int
	MaxItems      int
	Sources       []sourceView
	// Problems are the lists with something in them, Clear the kinds
	// checked and found empty.
	Problems []listView
	Clear    []listView
	// Unseen names the sources down or not collected yet: nothing is
	// listed from them.
	Unseen []string
}

type sourceView struct {
	Kind, Name, State      string
	Collected, LastSuccess string
	MinInterval            string
	Failures               []string
	// History is an engine's history level; HistoryNote, below full, what
	// it means for the metrics that depend on it.
	History, HistoryNote string
}

type listView struct {
	List
	Where   string
	Columns []string
	Rows    [][]cell
	// Groups lead the list: its items by aggregate and event type, topic,
	// scope, source and message type, worker, each with a few examples;
	// Hidden says the groups' examples leave rows out (then the page
	// offers every row, folded).
	Groups []groupView
	Hidden bool
}

// groupView is the listed items that share where they are.
type groupView struct {
	Name     string
	Count    int
	Oldest   string
	Examples [][]cell
}

// examplesPerGroup is how many items of a group the page shows unfolded.
const examplesPerGroup = 3

// groupOf names the group of an item: the fields that say where it is.
func groupOf(i collectors.Item) string {
	var parts []string
	add := func(label string, vals ...string) {
		var set []string
		for _, v := range vals {
			if v != "" {
				set = append(set, v)
			}
		}
		if len(set) > 0 {
			parts = append(parts, label+" "+strings.Join(set, "/"))
		}
	}
	add("aggregate/event type", i.AggregateType, i.EventType)
	add("source/message type", i.SourceSystem, i.MessageType)
	add("tenant", i.Tenant)
	add("topic", i.Topic)
	add("scope", i.Scope)
	add("activity", i.ActivityID)
	add("worker", i.WorkerID)
	if len(parts) == 0 {
		return "all"
	}
	return strings.Join(parts, " · ")
}

type cell struct {
	Label, Value, Title string
}

// field is one column the page can show, with the item's value.
type field struct {
	label string
	get   func(collectors.Item) string
}

// fields are the columns in the order of the page; a list shows those any
// of its items has.
var fields = []field{
	{"Engine", func(i collectors.Item) string { return i.Engine }},
	{"Tenant", func(i collectors.Item) string { return i.Tenant }},
	{"Topic", func(i collectors.Item) string { return i.Topic }},
	{"Process definition", func(i collectors.Item) string { return i.ProcessDefinitionKey }},
	{"Incident type", func(i collectors.Item) string { return i.IncidentType }},
	{"Failure signature", func(i collectors.Item) string { return i.ErrorSignature }},
	{"Failures", func(i collectors.Item) string { return countOrEmpty(i.Count) }},
	{"Examples", func(i collectors.Item) string { return strings.Join(i.ExampleIDs, ", ") }},
	{"Distinct workers", func(i collectors.Item) string { return countOrEmpty(i.DistinctWorkers) }},
	{"Last seen", func(i collectors.Item) string {
		if i.LastSeen == nil {
			return ""
		}
		return i.LastSeen.UTC().Format(time.RFC3339)
	}},
	{"External task id", func(i collectors.Item) string { return i.ExternalTaskID }},
	{"Job id", func(i collectors.Item) string { return i.JobID }},
	{"Process instance", func(i collectors.Item) string { return i.ProcessInstanceID }},
	{"Business key", func(i collectors.Item) string { return i.BusinessKey }},
	{"Activity", func(i collectors.Item) string { return i.ActivityID }},
	{"Worker", func(i collectors.Item) string { return i.WorkerID }},
	{"Task state", func(i collectors.Item) string { return i.TaskState }},
	{"Scope", func(i collectors.Item) string { return i.Scope }},
	{"Idempotency key", func(i collectors.Item) string { return i.IdempotencyKey }},
	{"Job reference", func(i collectors.Item) string { return i.JobReference }},
	{"Source system", func(i collectors.Item) string { return i.SourceSystem }},
	{"Message id", func(i collectors.Item) string { return i.MessageID }},
	{"Message type", func(i collectors.Item) string { return i.MessageType }},
	{"Event id", func(i collectors.Item) string { return i.EventID }},
	{"Aggregate type", func(i collectors.Item) string { return i.AggregateType }},
	{"Event type", func(i collectors.Item) string { return i.EventType }},
	{"Producer", func(i collectors.Item) string { return i.Producer }},
	{"Consumer", func(i collectors.Item) string { return i.Consumer }},
	{"Status", func(i collectors.Item) string { return i.Status }},
}

func newPageView(r Report) pageView {
	now := r.GeneratedAt
	v := pageView{Generated: now.Format("2006-01-02 15:04:05 MST"), SchemaVersion: r.SchemaVersion, MaxItems: r.MaxItems}
	collected := map[collectors.SourceRef]time.Time{}
	for _, s := range r.Sources {
		sv := sourceView{Kind: s.Kind, Name: s.Name, State: s.State, Collected: "never", LastSuccess: "never",
			MinInterval: (time.Duration(s.MinIntervalSeconds * float64(time.Second))).String()}
		if s.CollectedAt != nil {
			collected[collectors.SourceRef{Kind: s.Kind, Name: s.Name}] = *s.CollectedAt
			sv.Collected = ago(now.Sub(*s.CollectedAt)) + " ago"
		}
		if s.LastSuccessAt != nil {
			sv.LastSuccess = ago(now.Sub(*s.LastSuccessAt)) + " ago"
		}
		for _, f := range s.Failures {
			sv.Failures = append(sv.Failures, f.Collector+": "+f.Class)
		}
		sv.History = s.HistoryLevel
		if s.HistoryLevel != "" && s.HistoryLevel != "full" {
			var parts []string
			for _, g := range s.HistorySupport {
				parts = append(parts, string(g.Support)+": "+strings.Join(g.Metrics, ", "))
			}
			sv.HistoryNote = strings.Join(parts, "; ")
		}
		if !s.Up {
			v.Unseen = append(v.Unseen, s.Kind+" "+s.Name)
		}
		v.Sources = append(v.Sources, sv)
	}
	for _, l := range r.Lists {
		lv := listView{List: l, Where: where(l)}
		if l.Total == 0 {
			v.Clear = append(v.Clear, lv)
			continue
		}
		// The columns any item fills, except two that would repeat what
		// is on the screen already: the engine when every item names the
		// list's engine (the header says it), and the job reference when
		// every item's is its external task id (the default reference).
		var show []field
		for _, f := range fields {
			filled, news := false, false
			for _, it := range l.Items {
				v := f.get(it)
				filled = filled || v != ""
				switch f.label {
				case "Engine":
					news = news || v != l.Engine
				case "Job reference":
					news = news || v != it.ExternalTaskID
				default:
					news = true
				}
			}
			if filled && news {
				show = append(show, f)
			}
		}
		// Since comes first: how long it has been is what an operator
		// reads first, and it stays in view however wide the rest.
		lv.Columns = append(lv.Columns, "Since")
		for _, f := range show {
			lv.Columns = append(lv.Columns, f.label)
		}
		for _, it := range l.Items {
			row := make([]cell, 0, len(show)+1)
			since := cell{Label: "Since", Value: "?"}
			if it.Since != nil {
				// The item's age at its collection (the source's clock)
				// plus the time since that collection (the exporter's).
				age := time.Duration(it.AgeSeconds * float64(time.Second))
				if t, ok := collected[l.Source]; ok {
					age += now.Sub(t)
				}
				since = cell{Label: "Since", Value: ago(age), Title: it.Since.UTC().Format(time.RFC3339)}
			}
			row = append(row, since)
			for _, f := range show {
				row = append(row, cell{Label: f.label, Value: f.get(it)})
			}
			lv.Rows = append(lv.Rows, row)
			// Items come oldest first: a group's first is its oldest.
			g := groupOf(it)
			k := slices.IndexFunc(lv.Groups, func(gv groupView) bool { return gv.Name == g })
			if k < 0 {
				lv.Groups = append(lv.Groups, groupView{Name: g, Oldest: since.Value})
				k = len(lv.Groups) - 1
			}
			lv.Groups[k].Count++
			if len(lv.Groups[k].Examples) < examplesPerGroup {
				lv.Groups[k].Examples = append(lv.Groups[k].Examples, row)
			} else {
				lv.Hidden = true
			}
		}
		v.Problems = append(v.Problems, lv)
	}
	return v
}

// where names the table or engine a list comes from.
func where(l List) string {
	switch {
	case l.Delivery != "":
		return fmt.Sprintf("delivery %s, from database %s, table %s", l.Delivery, l.Database, l.Table)
	case l.Table != "" && l.Engine != "":
		return fmt.Sprintf("database %s, table %s, joined with engine %s", l.Database, l.Table, l.Engine)
	case l.Table != "":
		return fmt.Sprintf("database %s, table %s", l.Database, l.Table)
	}
	return "engine " + l.Engine
}

// ago renders a duration the way an operator reads it: two units at most.
func ago(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	s := int64(d.Round(time.Second) / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm %ds", s/60, s%60)
	case s < 86400:
		return fmt.Sprintf("%dh %dm", s/3600, s%3600/60)
	}
	return fmt.Sprintf("%dd %dh", s/86400, s%86400/3600)
}

var funcs = template.FuncMap{
	"join":  strings.Join,
	"lower": strings.ToLower,
}

// countOrEmpty shows a count, or nothing for items without one.
func countOrEmpty(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}
