package tables

import (
	"maps"
	"slices"
	"testing"

	"github.com/workflow-exporter/workflow-exporter/blocks/pgschema"
	"github.com/workflow-exporter/workflow-exporter/blocks/presets"
	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/config"
)

// Every preset says why each series it does not serve is absent, and
// nothing else: the docs' table per preset (generated from Absent) and the
// series the collector serves (from the shape) cannot disagree.
func TestPresetAbsentSeriesMatchTheShape(t *testing.T) {
	// The presets package keys Absent by the catalog's names (it sits below
	// the catalog and cannot import it).
	for _, name := range []string{presets.OutboxPending, presets.OutboxOldestAge, presets.OutboxFailed, presets.OutboxOldestFailed,
		presets.OutboxRetrying, presets.OutboxCreated, presets.OutboxPublished, presets.OutboxDelay, presets.InboxMessages,
		presets.InboxOldestAge, presets.InboxProcessed, presets.InboxRetrying, presets.InboxFailed, presets.InboxOldestFailed} {
		if _, ok := catalog.Lookup(name); !ok {
			t.Errorf("presets names %s, which is not in the catalog", name)
		}
	}
	absent := func(series map[string]bool) []string {
		var out []string
		for n, ok := range series {
			if !ok {
				out = append(out, n)
			}
		}
		slices.Sort(out)
		return out
	}
	for _, p := range presets.OutboxPresets() {
		cols := map[string]pgschema.ColumnType{}
		for _, c := range p.Columns {
			cols[c] = pgschema.Text
		}
		table := p.Table
		if table == "" {
			table = "t"
		}
		s, err := presetOutboxShape(config.OutboxTable{Preset: p.Preset, Table: table}, "k", cols)
		if err != nil || s.variant != p.Variant {
			t.Fatalf("%s %s: variant %q, %v", p.Preset, p.Variant, s.variant, err)
		}
		if got, want := absent(s.series()), slices.Sorted(maps.Keys(p.Absent)); !slices.Equal(got, want) {
			t.Errorf("outbox preset %s %s: absent series %v, its Absent says %v", p.Preset, p.Variant, got, want)
		}
	}
	for _, p := range presets.InboxPresets() {
		s, err := presetInboxShape(config.InboxTable{Preset: p.Preset, Table: p.Table}, "k")
		if err != nil {
			t.Fatal(err)
		}
		if got, want := absent(s.series()), slices.Sorted(maps.Keys(p.Absent)); !slices.Equal(got, want) {
			t.Errorf("inbox preset %s: absent series %v, its Absent says %v", p.Preset, got, want)
		}
	}
}

// Values are compared as the column's type reads them: a value it cannot
// hold has no literal.
func TestStatusLiterals(t *testing.T) {
	col := func(t pgschema.ColumnType) statusColumn {
		c, err := newStatusColumn("tbl", "k", "status", t)
		if err != nil {
			panic(err)
		}
		return c
	}
	enum := col(pgschema.ColumnType{Type: "state", Base: "state", BaseType: "state", Category: "E", Labels: []string{"NEW", "DONE"}})
	int2 := col(pgschema.ColumnType{Type: "smallint", Base: "int2", BaseType: "smallint", Category: "N"})
	boolean := col(pgschema.ColumnType{Type: "boolean", Base: "bool", BaseType: "boolean", Category: "B"})
	text := col(pgschema.Text)
	domain := col(pgschema.ColumnType{Type: "st", Base: "state", BaseType: "app.state", Category: "E", Domain: true, Labels: []string{"NEW"}})
	for _, tc := range []struct {
		c         statusColumn
		v         string
		lit, text string
		ok        bool
	}{
		{enum, "DONE", "'DONE'", "DONE", true},
		{enum, "done", "", "", false},
		{enum, "RECONCILED", "", "", false},
		{int2, "7", "7", "7", true},
		{int2, " -07 ", "-7", "-7", true},
		{int2, "40000", "", "", false},
		{int2, "1.5", "", "", false},
		{int2, "FAILED", "", "", false},
		{boolean, "t", "true", "true", true},
		{boolean, " Yes", "true", "true", true},
		{boolean, "of", "false", "false", true},
		{boolean, "o", "", "", false},
		{boolean, "0", "false", "false", true},
		{boolean, "FAILED", "", "", false},
		{text, "it's", "'it''s'", "it's", true},
		{domain, "NEW", "'NEW'", "NEW", true},
	} {
		lit, text, ok := tc.c.literal(tc.v)
		if lit != tc.lit || text != tc.text || ok != tc.ok {
			t.Errorf("%s %q: literal %q, text %q, %v; want %q, %q, %v", tc.c.typ.Type, tc.v, lit, text, ok, tc.lit, tc.text, tc.ok)
		}
	}
	if got := domain.in([]string{"NEW"}); got != `("status")::app.state IN ('NEW')` {
		t.Errorf("domain predicate %s", got)
	}
	if got := enum.notIn([]string{"RECONCILED"}); got != "true" {
		t.Errorf("no value held: %s", got)
	}
	if _, err := newStatusColumn("tbl", "k", "status", pgschema.ColumnType{Type: "jsonb", Base: "jsonb", Category: "U"}); err == nil {
		t.Error("a jsonb status column was accepted")
	}
}
