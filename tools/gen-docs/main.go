// Command gen-docs rewrites the generated sections of the documentation: the
// metric table (from the catalog) and the history level table (from
// collectors/engine/capability) in docs/metrics.md, the index table (from the
// collectors' requirements) in docs/database.md and the tables of the
// library presets (from blocks/presets) in docs/outbox-shapes.md, so the
// docs cannot drift from the code. Each file names the sections it holds with markers:
//
//	<!-- BEGIN GENERATED metrics (make generate) -->
//	<!-- END GENERATED metrics -->
//
// and every section must be in exactly one of the files given.
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine/capability"
	"github.com/workflow-exporter/workflow-exporter/internal/sources"
)

// sections are the generated sections by name.
var sections = map[string]func() string{
	"metrics":        metricTable,
	"indexes":        indexTable,
	"history-levels": historyLevelTable,
	"presets":        presetTables,
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: gen-docs FILE.md...")
		os.Exit(2)
	}
	docs := map[string]string{}
	for _, path := range os.Args[1:] {
		b, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		docs[path] = string(b)
	}
	out, err := render(docs)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for path, doc := range out {
		if doc == docs[path] {
			continue
		}
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}

// render returns the documents with every generated section rewritten. It
// fails unless each section is in exactly one document.
func render(docs map[string]string) (map[string]string, error) {
	out := map[string]string{}
	found := map[string][]string{}
	for path, doc := range docs {
		for name, body := range sections {
			if !strings.Contains(doc, beginMarker(name)) {
				continue
			}
			var err error
			if doc, err = replaceSection(doc, name, body()); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			found[name] = append(found[name], path)
		}
		out[path] = doc
	}
	for name := range sections {
		if n := len(found[name]); n != 1 {
			return nil, fmt.Errorf("section %q is in %d of the files %v, want exactly one", name, n, keys(docs))
		}
	}
	return out, nil
}

func beginMarker(name string) string {
	return "<!-- BEGIN GENERATED " + name + " (make generate) -->\n"
}

func replaceSection(doc, name, body string) (string, error) {
	begin := beginMarker(name)
	end := "<!-- END GENERATED " + name + " -->"
	i := strings.Index(doc, begin)
	j := strings.Index(doc, end)
	if i < 0 || j < i || strings.Count(doc, begin) != 1 {
		return "", fmt.Errorf("the markers of section %q are missing, doubled or out of order", name)
	}
	return doc[:i+len(begin)] + body + doc[j:], nil
}

func keys(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// markdownTable is a Markdown table: the header row, its rule, and one line
// per row, the cells as given.
func markdownTable(header []string, rows [][]string) string {
	var b strings.Builder
	b.WriteString("| " + strings.Join(header, " | ") + " |\n|" + strings.Repeat("---|", len(header)) + "\n")
	for _, r := range rows {
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
	return b.String()
}

// code is a cell's text as inline code.
func code(s string) string { return "`" + s + "`" }

// metricSections are the metric table's sections, by source, in order.
var metricSections = []catalog.Source{catalog.SourceCamunda, catalog.SourceDatabase, catalog.SourceDelivery, catalog.SourceExporter}

// sectionTitles are their titles.
var sectionTitles = map[catalog.Source]string{
	catalog.SourceCamunda:  "Camunda engine (REST API or engine database), per configured engine",
	catalog.SourceDatabase: "Worker tables (PostgreSQL), per configured database",
	catalog.SourceDelivery: "Deliveries, outbox to inbox across databases, per configured delivery ([delivery-ledger.md](delivery-ledger.md))",
	catalog.SourceExporter: "The exporter itself (plus the standard go_* and process_* metrics)",
}

// labelsCell lists a metric's labels; the tenant of camunda[].tenant_label,
// there only when it is on, in brackets.
func labelsCell(m catalog.Metric) string {
	if !m.Tenanted() {
		return strings.Join(m.Labels, ", ")
	}
	labels := strings.Join(m.WithTenant().Labels, ", ")
	return strings.Replace(labels, catalog.TenantLabel, "["+catalog.TenantLabel+"]", 1)
}

func metricTable() string {
	var b strings.Builder
	for _, src := range metricSections {
		var rows [][]string
		for _, m := range catalog.All() {
			if m.Source == src {
				rows = append(rows, []string{code(m.Name), string(m.Type), labelsCell(m), strings.ReplaceAll(m.Help, "|", "\\|")})
			}
		}
		b.WriteString("\n**" + sectionTitles[src] + "**\n\n" + markdownTable([]string{"metric", "type", "labels", "meaning"}, rows))
	}
	return b.String() + "\n"
}

func indexTable() string {
	var rows [][]string
	for _, r := range sources.DefaultRequirements() {
		for _, ix := range r.Indexes {
			cols := strings.Join(ix.Columns, ", ")
			where := ""
			if ix.Where != "" {
				where = " WHERE " + strings.ReplaceAll(ix.Where, `"`, "")
			}
			why := ix.Why
			switch {
			case ix.ReferencePrimaryKey:
				why += " (the reference schema's primary key serves it; not in 003)"
			case ix.Requires != "":
				why += " (created by 002 with the column it needs)"
			}
			rows = append(rows, []string{code(r.Table), code(ix.Name + " (" + cols + ")" + where), why})
		}
	}
	return "\n" + markdownTable([]string{"table", "index", "why"}, rows) + "\n"
}

// historyLevelTable is, per metric whose source depends on the engine's
// history level, what each level lets the exporter report
// (capability.HistoryLevelSupport, also what check and the status page say).
func historyLevelTable() string {
	var rows [][]string
	for _, s := range capability.HistoryLevelSupport() {
		rows = append(rows, []string{code(s.Metric), string(s.None), string(s.Activity), string(s.Audit), string(s.Full), s.Why})
	}
	return "\n" + markdownTable([]string{"metric", "none", "activity", "audit", "full", "below full"}, rows) + "\n"
}
