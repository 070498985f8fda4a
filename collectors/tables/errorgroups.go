package tables

import (
	"context"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/workflow-exporter/workflow-exporter/blocks/signature"
	"github.com/workflow-exporter/workflow-exporter/collectors"
	"github.com/workflow-exporter/workflow-exporter/config"
)

// The status page's error groups of a table (kinds outbox_error_groups and
// inbox_error_groups): the last errors the table holds on its open rows
// (the events retrying or failed, the messages not finished, a library's
// dead letters), grouped by the signature of their text with the masking
// of the engine's failure groups (blocks/signature: ids, numbers, quoted
// values and timestamps masked), each with how many rows carry it, its
// oldest and newest row's time and the ids of its newest rows. One
// bounded query per table (the newest errorRowsLimit rows with an error,
// over the open rows' index), run only when the page is on and the table's
// identifiers are shown. Only the signature leaves the collector, never
// the error text itself.

// maxExampleIDs is how many ids a group names.
const maxExampleIDs = 3

// errorGroups accumulates the rows of one collection's error queries.
type errorGroups struct {
	by    map[string]*collectors.Item
	order []string
	rows  int
	// partial: a query returned errorRowsLimit rows, so older errors may
	// be left out.
	partial bool
}

// read runs one error query (arguments: $1 the row limit; columns: id,
// error text, time, age), newest rows first.
func (g *errorGroups) read(ctx context.Context, tx pgx.Tx, what, sql string) error {
	if g.by == nil {
		g.by = map[string]*collectors.Item{}
	}
	var id, text string
	var ts *time.Time
	var age float64
	n := 0
	err := each(ctx, tx, what, sql, []any{errorRowsLimit}, []any{&id, &text, &ts, &age}, func() error {
		n++
		sig := signature.Of(text)
		it := g.by[sig]
		if it == nil {
			it = &collectors.Item{ErrorSignature: sig}
			g.by[sig] = it
			g.order = append(g.order, sig)
		}
		it.Count++
		if len(it.ExampleIDs) < maxExampleIDs {
			it.ExampleIDs = append(it.ExampleIDs, id)
		}
		if ts != nil {
			t := ts.UTC()
			if it.LastSeen == nil || t.After(*it.LastSeen) {
				it.LastSeen = &t
			}
			if it.Since == nil || t.Before(*it.Since) {
				it.Since, it.AgeSeconds = &t, age
			}
		}
		return nil
	})
	g.rows += n
	g.partial = g.partial || n >= errorRowsLimit
	return err
}

// list is the groups as a list of the table: one item per signature, the
// total the number of signatures (partial when the rows read were cut).
func (g *errorGroups) list(b *tableBase, table string, show config.SourceStatus, kind string) collectors.List {
	l := collectors.List{Kind: kind, Database: b.database, Table: table, Partial: g.partial,
		IdentifiersHidden: !show.ShowIdentifiers()}
	for _, sig := range g.order {
		it := *g.by[sig]
		it.ExampleIDs = slices.Clone(it.ExampleIDs)
		l.Items = append(l.Items, it)
	}
	l.Total = len(l.Items)
	return l
}
