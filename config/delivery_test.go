package config

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

const twoDatabases = `
databases:
  - {name: orders, dsn: 'postgres://x/orders', tables: {outbox: {columns: {event_id: id}}}}
  - {name: billing, dsn: 'postgres://y/billing', tables: {inbox: {}}}
`

func TestDeliveryDefaults(t *testing.T) {
	c := parseExpect(t, twoDatabases+"deliveries: [{name: orders-billing, from: {database: orders}, to: {database: billing}}]", nil)
	d := c.Deliveries[0]
	if time.Duration(d.Deadline) != DefaultDeliveryDeadline || time.Duration(d.Window) != DefaultDeliveryWindow ||
		time.Duration(d.MinInterval) != DefaultMinInterval || time.Duration(d.Timeout) != DefaultCollectTimeout ||
		d.PageSize != DefaultDeliveryPageSize || d.MaxEvents != DefaultDeliveryMaxEvents || d.LabelValueLimit != DefaultLabelValueLimit ||
		!slices.Equal(d.LatencyBuckets, DefaultDeliveryLatencyBuckets()) {
		t.Errorf("defaults not applied: %+v", d)
	}
	// The message id defaults to the producer's event_id column, as mapped.
	if d.From.MessageID != "id" {
		t.Errorf("from.message_id = %q, want the outbox's event_id column %q", d.From.MessageID, "id")
	}
	// One database may be both ends.
	parseExpect(t, "databases: [{name: a, dsn: x}]\ndeliveries: [{name: self, from: {database: a}, to: {database: a}, deadline: 1m, window: 10m}]", nil)
}

func TestDeliveryErrorsNameTheKey(t *testing.T) {
	cases := []struct {
		name, doc string
		want      []string
	}{
		{"producer unknown", "deliveries: [{name: d, from: {database: nope}, to: {database: billing}}]",
			[]string{`deliveries[0].from.database (line 5): no database "nope" under databases: (configured: orders, billing)`}},
		{"consumer unknown", "deliveries: [{name: d, from: {database: orders}, to: {database: shipping}}]",
			[]string{`deliveries[0].to.database (line 5): no database "shipping" under databases:`}},
		{"database missing", "deliveries: [{name: d, to: {database: billing}}]",
			[]string{"deliveries[0].from.database (line 5): must name a database under databases:"}},
		{"no outbox", "deliveries: [{name: d, from: {database: billing}, to: {database: billing}}]",
			[]string{`deliveries[0].from.database (line 5): database "billing" lists no outbox table under tables: (add outbox: {} to its tables)`}},
		{"no inbox", "deliveries: [{name: d, from: {database: orders}, to: {database: orders}}]",
			[]string{`deliveries[0].to.database (line 5): database "orders" lists no inbox table under tables:`}},
		{"duplicate name", "deliveries: [{name: d, from: {database: orders}, to: {database: billing}}, {name: d, from: {database: orders}, to: {database: billing}}]",
			[]string{`deliveries[1].name (line 5): "d" is already used by deliveries[0]`}},
		{"bad name", "deliveries: [{name: 'a b', from: {database: orders}, to: {database: billing}}]",
			[]string{"deliveries[0].name (line 5): must be set to a short name (letters, digits, _ . : -); it becomes the delivery label"}},
		{"deadline not inside the window", "deliveries: [{name: d, from: {database: orders}, to: {database: billing}, deadline: 1h, window: 1h}]",
			[]string{"deliveries[0].deadline (line 5): (1h) must be shorter than window (1h)"}},
		{"both column and expression", "deliveries: [{name: d, from: {database: orders, message_id: id, message_id_expression: 'x'}, to: {database: billing}}]",
			[]string{"deliveries[0].from (line 5): set message_id (a column) or message_id_expression (an SQL expression), not both"}},
		{"column that is an expression", "deliveries: [{name: d, from: {database: orders, message_id: 'id::text'}, to: {database: billing}}]",
			[]string{`deliveries[0].from.message_id (line 5): "id::text" is not a column name`}},
		{"two statements", "deliveries: [{name: d, from: {database: orders, message_id_expression: 'id; DELETE FROM x'}, to: {database: billing}}]",
			[]string{`deliveries[0].from.message_id_expression (line 5): must be one SQL expression over the outbox's columns, without ";"`}},
		{"comment", "deliveries: [{name: d, from: {database: orders, message_id_expression: 'id -- x'}, to: {database: billing}}]",
			[]string{`without "--"`}},
		{"empty event type", "deliveries: [{name: d, from: {database: orders, event_types: [a, '']}, to: {database: billing}}]",
			[]string{"deliveries[0].from.event_types[1] (line 5): must not be empty"}},
		{"empty source system", "deliveries: [{name: d, from: {database: orders}, to: {database: billing, source_systems: ['']}}]",
			[]string{"deliveries[0].to.source_systems[0] (line 5): must not be empty"}},
		{"page size", "deliveries: [{name: d, from: {database: orders}, to: {database: billing}, page_size: 0}]", nil},
		{"page size too big", "deliveries: [{name: d, from: {database: orders}, to: {database: billing}, page_size: 1000000}]",
			[]string{"deliveries[0].page_size (line 5): must be between 1 and 100000, got 1000000"}},
		{"buckets", "deliveries: [{name: d, from: {database: orders}, to: {database: billing}, latency_buckets: [2, 1]}]",
			[]string{"deliveries[0].latency_buckets (line 5): must be positive and strictly increasing, got [2 1]"}},
		{"bare duration", "deliveries: [{name: d, from: {database: orders}, to: {database: billing}, deadline: 30}]",
			[]string{"deliveries[0].deadline (line 5)"}},
		{"unknown key", "deliveries: [{name: d, from: {database: orders, event_type: [a]}, to: {database: billing}}]",
			[]string{"deliveries[0].from.event_type (line 5): unknown key; did you mean deliveries[0].from.event_types?"}},
		{"expression", "deliveries: [{name: d, from: {database: orders, message_id_expression: \"'orders:' || id::text\"}, to: {database: billing, source_systems: [orders]}}]", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { parseExpect(t, twoDatabases+tc.doc, tc.want) })
	}
}

func TestDeliveryMessageIDSQL(t *testing.T) {
	q := func(s string) string { return `"` + s + `"` }
	if got := (DeliveryFrom{MessageID: "event_id"}).MessageIDSQL(q); got != `"event_id"` {
		t.Errorf("column: %s", got)
	}
	if got := (DeliveryFrom{MessageID: "event_id", MessageIDExpression: "'o:' || event_id"}).MessageIDSQL(q); got != `('o:' || event_id)` {
		t.Errorf("expression: %s", got)
	}
}

// TestDeliveryLedgerExampleLoads: the configuration example of
// docs/delivery-ledger.md is a valid file.
func TestDeliveryLedgerExampleLoads(t *testing.T) {
	b, err := os.ReadFile("../docs/delivery-ledger.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "```yaml\ndatabases:")
	example, _, closed := strings.Cut(rest, "```")
	if !ok || !closed {
		t.Fatal("docs/delivery-ledger.md: no ```yaml block starting with databases:")
	}
	t.Setenv("ORDERS_DATABASE_URL", "postgres://exporter@db/orders")
	t.Setenv("BILLING_DATABASE_URL", "postgres://exporter@db2/billing")
	c, err := Parse([]byte("databases:" + example))
	if err != nil {
		t.Fatalf("the example of docs/delivery-ledger.md does not load: %v", err)
	}
	if d := c.Deliveries[0]; d.Name != "orders-billing" || d.From.MessageID != "event_id" || len(d.To.SourceSystems) != 1 {
		t.Errorf("example parsed as %+v", d)
	}
}
