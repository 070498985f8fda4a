package sources

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestDeliveryIsASourceOfItsOwn: a delivery becomes a poll source of kind
// delivery, refreshing after the databases; a reload keeps it while its
// section and its two databases' sections are unchanged, and rebuilds it
// when either database changes.
func TestDeliveryIsASourceOfItsOwn(t *testing.T) {
	ctx := context.Background()
	m := New(Options{})
	defer m.Close(ctx)
	doc := func(billingTimeout string) string {
		return `
databases:
  - {name: orders, dsn: 'postgres://u@127.0.0.1:1/orders', tables: {outbox: {}}}
  - {name: billing, dsn: 'postgres://u@127.0.0.1:1/billing', statement_timeout: ` + billingTimeout + `, tables: {inbox: {}}}
  - {name: shipping, dsn: 'postgres://u@127.0.0.1:1/shipping', tables: {inbox: {}}}
deliveries:
  - {name: orders-billing, from: {database: orders}, to: {database: billing}}
`
	}
	ch, err := m.Apply(ctx, parse(t, doc("5s")))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(ch.Added, "delivery/orders-billing") {
		t.Fatalf("first apply: %+v", ch)
	}
	before := byName(m.Set())
	if d := before["delivery/orders-billing"]; d == nil || d.Kind() != "delivery" || d.MinInterval().String() != "30s" {
		t.Fatalf("the delivery's source: %+v", d)
	}
	// Another database changes: the delivery stays.
	ch, err = m.Apply(ctx, parse(t, strings.Replace(doc("5s"), "shipping', tables", "shipping', min_interval: 1m, tables", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(ch.Kept, "delivery/orders-billing") || byName(m.Set())["delivery/orders-billing"] != before["delivery/orders-billing"] {
		t.Errorf("the delivery was rebuilt when an unrelated database changed: %+v", ch)
	}
	// Its consumer's timeout changes: the delivery is rebuilt with it.
	ch, err = m.Apply(ctx, parse(t, doc("3s")))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(ch.Replaced, "delivery/orders-billing") {
		t.Errorf("the delivery was kept although its consumer's settings changed: %+v", ch)
	}
}

// TestDatabaseDownReadsTheDatabasesSnapshot: a delivery learns that one of
// its databases is down from that database's own source.
func TestDatabaseDownReadsTheDatabasesSnapshot(t *testing.T) {
	ctx := context.Background()
	m := New(Options{})
	defer m.Close(ctx)
	if _, err := m.Apply(ctx, parse(t, `
databases:
  - {name: orders, dsn: 'postgres://u@127.0.0.1:1/orders', timeout: 2s, statement_timeout: 1s, tables: {outbox: {}, inbox: {}}}
deliveries:
  - {name: self, from: {database: orders}, to: {database: orders}}
`)); err != nil {
		t.Fatal(err)
	}
	if m.databaseDown("orders") {
		t.Error("down before any collection")
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	m.Set().Refresh(cctx) // nothing listens on port 1
	if !m.databaseDown("orders") || m.databaseDown("nope") {
		t.Errorf("after a failed collection: orders down %v, an unknown database down %v", m.databaseDown("orders"), m.databaseDown("nope"))
	}
	// The delivery reported nothing and no failure of its own: the outage
	// is the database's.
	d := byName(m.Set())["delivery/self"].Current()
	if d == nil || !d.Up || len(d.Data) != 0 {
		t.Errorf("the delivery's snapshot while its database is down: %+v", d)
	}
}
