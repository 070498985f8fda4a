// Command gen-readme rewrites the generated sections of README.md: the metric
// table (from the catalog) and the index table (from the collectors'
// requirements), so the README cannot drift from the code.
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/internal/sources"
)

func main() {
	path := "README.md"
	if len(os.Args) > 1 {
		path = os.Args[1]
	}
	b, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	out, err := render(string(b))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func render(doc string) (string, error) {
	var err error
	if doc, err = replaceSection(doc, "metrics", metricTable()); err != nil {
		return "", err
	}
	return replaceSection(doc, "indexes", indexTable())
}

func replaceSection(doc, name, body string) (string, error) {
	begin := "<!-- BEGIN GENERATED " + name + " (go generate ./scripts/gen-readme) -->\n"
	end := "<!-- END GENERATED " + name + " -->"
	i := strings.Index(doc, begin)
	j := strings.Index(doc, end)
	if i < 0 || j < i {
		return "", fmt.Errorf("README lacks the markers of section %q", name)
	}
	return doc[:i+len(begin)] + body + doc[j:], nil
}

func metricTable() string {
	var b strings.Builder
	groups := []struct {
		src   catalog.Source
		title string
	}{
		{catalog.SourceCamunda, "Camunda engine (REST API), per configured engine"},
		{catalog.SourceDatabase, "Worker tables (PostgreSQL), per configured database"},
		{catalog.SourceExporter, "The exporter itself (plus the standard go_* and process_* metrics)"},
	}
	for _, g := range groups {
		fmt.Fprintf(&b, "\n**%s**\n\n| metric | type | labels | meaning |\n|---|---|---|---|\n", g.title)
		for _, m := range catalog.All() {
			if m.Source != g.src {
				continue
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", m.Name, m.Type, strings.Join(m.Labels, ", "), strings.ReplaceAll(m.Help, "|", "\\|"))
		}
	}
	b.WriteString("\n")
	return b.String()
}

func indexTable() string {
	var b strings.Builder
	b.WriteString("\n| table | index | why |\n|---|---|---|\n")
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
			fmt.Fprintf(&b, "| `%s` | `%s (%s)%s` | %s |\n", r.Table, ix.Name, cols, where, why)
		}
	}
	b.WriteString("\n")
	return b.String()
}
