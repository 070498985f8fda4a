package main

import (
	"fmt"
	"strings"

	"github.com/workflow-exporter/workflow-exporter/blocks/presets"
)

// presetTables is, per library preset (blocks/presets), what it reads and
// which series it reports from what, and why the others are absent: the
// tables of docs/outbox-shapes.md, from the presets' own data, so the docs
// say what the collectors do.
func presetTables() string {
	var b strings.Builder
	for _, p := range presets.OutboxPresets() {
		name := p.Preset
		if p.Variant != "" {
			name += " " + p.Variant
		}
		fmt.Fprintf(&b, "\n### Outbox preset `%s`\n\n%s. Written against %s.\n\n", name, p.Library, p.Source)
		b.WriteString(tableLine(p.Table, "outbox"))
		fmt.Fprintf(&b, "Labels: `aggregate_type` %s, `event_type` %s. Error groups on the status page: %s.\n\n",
			exprOrEmpty(p.AggregateType), exprOrEmpty(p.EventType), exprOrNone(p.Error))
		pending := "rows where " + code(p.Open)
		if p.Open == "" {
			pending = "every row: " + p.OpenRows
		}
		if p.Failed != "" {
			pending += ", less the failed ones"
		}
		created := timeText(p.Created)
		rows := [][]string{
			seriesRow(presets.OutboxPending, p.Absent, pending),
			seriesRow(presets.OutboxOldestAge, p.Absent, "the oldest "+created+" of the pending rows"),
			seriesRow(presets.OutboxFailed, p.Absent, "rows where "+code(p.Failed)),
			seriesRow(presets.OutboxOldestFailed, p.Absent, "the oldest "+created+" of the failed rows"),
			seriesRow(presets.OutboxRetrying, p.Absent, "pending rows where "+code(p.Attempts)+" ≥ `retrying_after_attempts`"),
			seriesRow(presets.OutboxCreated, p.Absent, created+" in the last `late_commit_window`"),
			seriesRow(presets.OutboxPublished, p.Absent, timeText(p.Published)+" in the last `late_commit_window`"),
			seriesRow(presets.OutboxDelay, p.Absent, timeText(p.Published)+" less "+created),
		}
		b.WriteString(markdownTable([]string{"series", "reported", "from, or why not"}, rows))
		notes(&b, p.Notes)
	}
	for _, p := range presets.InboxPresets() {
		fmt.Fprintf(&b, "\n### Inbox preset `%s`\n\n%s. Written against %s.\n\n", p.Preset, p.Library, p.Source)
		b.WriteString(tableLine(p.Table, "inbox"))
		errs := exprOrNone(p.Error)
		if d := p.DeadLetters; d != nil {
			errs = code(d.Error) + " of the dead letters"
		}
		fmt.Fprintf(&b, "Labels: `source_system` %s, `message_type` %s; `status` %s. Error groups on the status page: %s.\n\n",
			exprOrEmpty(p.SourceSystem), exprOrEmpty(p.MessageType), code(p.Status), errs)
		open := "rows where " + code(p.Open)
		if p.Open == "" {
			open = "every row"
		}
		failed, oldestFailed := "", ""
		if d := p.DeadLetters; d != nil {
			failed = "rows of `" + d.Table + "` (same schema) where " + code(d.Where)
			oldestFailed = "the oldest " + timeText(d.Since) + " of the dead letters"
		}
		rows := [][]string{
			seriesRow(presets.InboxMessages, p.Absent, open+", by status"),
			seriesRow(presets.InboxOldestAge, p.Absent, "the oldest "+timeText(p.Received)+" of those rows"),
			seriesRow(presets.InboxProcessed, p.Absent, timeText(p.Processed)+" in the last `late_commit_window`"),
			seriesRow(presets.InboxRetrying, p.Absent, "unfinished rows where "+code(p.Attempts)+" ≥ `retrying_after_attempts`"),
			seriesRow(presets.InboxFailed, p.Absent, failed),
			seriesRow(presets.InboxOldestFailed, p.Absent, oldestFailed),
		}
		b.WriteString(markdownTable([]string{"series", "reported", "from, or why not"}, rows))
		notes(&b, p.Notes)
	}
	return b.String() + "\n"
}

func tableLine(table, kind string) string {
	if table == "" {
		return fmt.Sprintf("Table: none by default, `tables.%s.table` names it.\n\n", kind)
	}
	return fmt.Sprintf("Table: `%s` by default (`tables.%s.table` overrides it).\n\n", table, kind)
}

// seriesRow says whether a series is reported and from what, or why not.
func seriesRow(series string, absent map[string]string, from string) []string {
	if why, ok := absent[series]; ok {
		return []string{code(series), "no", why}
	}
	return []string{code(series), "yes", strings.ReplaceAll(from, "|", "\\|")}
}

func timeText(t presets.Time) string {
	if t.Kind == presets.EpochMillis {
		return code(t.Column) + " (epoch milliseconds)"
	}
	return code(t.Column)
}

func exprOrEmpty(expr string) string {
	if expr == "" {
		return "empty"
	}
	return code(expr)
}

func exprOrNone(expr string) string {
	if expr == "" {
		return "none (the table keeps no error text)"
	}
	return code(expr)
}

func notes(b *strings.Builder, ns []string) {
	if len(ns) == 0 {
		return
	}
	b.WriteString("\n")
	for _, n := range ns {
		b.WriteString("- " + n + "\n")
	}
}
