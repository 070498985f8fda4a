package tables

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/blocks/labellimit"
	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
)

// TestEachOfferedIsOrderIndependent: the same grouped rows, returned by
// PostgreSQL in two orders, give two limiters of limit 3 the same values
// under their own label, and fn sees every row in the query's order with
// its own values. Admitting as the rows come (each) gives each order its
// first three instead, which is what two replicas would disagree on.
func TestEachOfferedIsOrderIndependent(t *testing.T) {
	conn := pgtest.Connect(t, pgtest.NewDatabase(t))
	types := []string{"OrderCreated", "OrderPaid", "OrderShipped", "InvoiceSent", "RefundIssued", "QuoteApproved"}
	reversed := slices.Clone(types)
	slices.Reverse(reversed)
	run := func(order []string, offered bool) (kept, rows []string) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback(ctx) }()
		b := &tableBase{limiter: labellimit.NewLimiter(labellimit.NewStats(), "m", 3)}
		var typ string
		var n int64
		sql := "SELECT v, o FROM unnest($1::text[]) WITH ORDINALITY AS u(v, o) ORDER BY o"
		fn := func() error {
			rows = append(rows, typ)
			if n != int64(len(rows)) {
				t.Errorf("row %d of %v: fn saw ordinality %d", len(rows), order, n)
			}
			if v := b.limiter.Admit(typ)[0]; v != labellimit.Other {
				kept = append(kept, v)
			}
			return nil
		}
		if offered {
			err = b.eachOffered(ctx, tx, "test query", sql, []any{order}, []any{&typ, &n}, func() []string { return []string{typ} }, fn)
		} else {
			err = each(ctx, tx, "test query", sql, []any{order}, []any{&typ, &n}, fn)
		}
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(kept)
		return kept, rows
	}
	a, rowsA := run(types, true)
	b, rowsB := run(reversed, true)
	if !slices.Equal(a, b) || len(a) != 3 {
		t.Fatalf("offered: kept %v in one order, %v in the other; want the same 3", a, b)
	}
	if !slices.Equal(rowsA, types) || !slices.Equal(rowsB, reversed) {
		t.Fatalf("fn saw rows %v and %v, want the query's orders", rowsA, rowsB)
	}
	if x, y := func() ([]string, []string) { x, _ := run(types, false); y, _ := run(reversed, false); return x, y }(); slices.Equal(x, y) {
		t.Fatalf("the check cannot fail: admitting as rows come also kept %v in both orders", x)
	}
}
