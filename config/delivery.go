package config

import (
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/common/model"
)

// Defaults of a delivery (deliveries[]).
const (
	// DefaultDeliveryDeadline is how long after its publish an event may
	// still be on its way: older and not received, it counts as lost.
	DefaultDeliveryDeadline = 5 * time.Minute
	// DefaultDeliveryWindow is how far back the comparison reaches: the
	// events published within it are compared, older ones never.
	DefaultDeliveryWindow = time.Hour
	// DefaultDeliveryPageSize is how many events one keyset page of the
	// outbox reads, and how many ids one inbox lookup asks for.
	DefaultDeliveryPageSize = 1000
	// DefaultDeliveryMaxEvents bounds the events one collection compares:
	// a window holding more is cut at its newest MaxEvents.
	DefaultDeliveryMaxEvents = 100000
)

// DefaultDeliveryLatencyBuckets span a broker that delivers in a tenth of
// a second to one that holds events for an hour, in seconds.
func DefaultDeliveryLatencyBuckets() []float64 {
	return []float64{0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600}
}

// Delivery is one entry of deliveries: the path from a producer database's
// outbox to a consumer database's inbox, watched end to end (the delivery
// ledger, docs/delivery-ledger.md). The exporter reads the ids of the
// events published within Window from the outbox, looks them up in the
// inbox, and counts what arrived, what is on its way, what is lost and what
// arrived more than once.
type Delivery struct {
	// Name is the delivery label.
	Name string `yaml:"name"`
	// From is the producer: a database under databases: with an outbox
	// table.
	From DeliveryFrom `yaml:"from"`
	// To is the consumer: a database under databases: with an inbox table;
	// it may be the producer's database.
	To DeliveryTo `yaml:"to"`
	// Deadline: an event published longer ago than this and not received
	// is lost; a younger one is in flight.
	Deadline model.Duration `yaml:"deadline"`
	// Window: the events published within it are compared. An event
	// published before it is never read, so never called lost.
	Window model.Duration `yaml:"window"`
	// MinInterval and Timeout are those of the delivery's own poll source.
	MinInterval model.Duration `yaml:"min_interval"`
	Timeout     model.Duration `yaml:"timeout"`
	// PageSize is the size of one keyset page of the outbox and of one
	// inbox lookup.
	PageSize int `yaml:"page_size"`
	// MaxEvents bounds the events of one comparison; a window holding more
	// is cut at the newest MaxEvents (logged).
	MaxEvents int `yaml:"max_events"`
	// LatencyBuckets are the upper bounds, in seconds, of
	// workflow_delivery_latency_seconds.
	LatencyBuckets []float64 `yaml:"latency_buckets"`
	// LabelValueLimit bounds the event types the delivery reports.
	LabelValueLimit int `yaml:"label_value_limit"`
	// Status says what the status page may show of the lost events.
	Status SourceStatus `yaml:"status"`
}

// DeliveryFrom is the producer side of a delivery.
type DeliveryFrom struct {
	// Database names an entry of databases: whose tables include an outbox.
	Database string `yaml:"database"`
	// EventTypes, when set, are the outbox event types that belong to the
	// delivery; the others are not compared. Empty: all.
	EventTypes []string `yaml:"event_types"`
	// MessageID is the outbox column whose value the consumer stores as
	// its message id; default: the outbox's event_id column.
	MessageID string `yaml:"message_id"`
	// MessageIDExpression is, instead, an SQL expression over the outbox's
	// columns that gives the consumer's message id, such as
	// 'orders:' || event_id::text. It is evaluated in the producer's
	// read-only transaction.
	MessageIDExpression string `yaml:"message_id_expression"`
}

// DeliveryTo is the consumer side of a delivery.
type DeliveryTo struct {
	// Database names an entry of databases: whose tables include an inbox.
	Database string `yaml:"database"`
	// SourceSystems, when set, are the inbox source systems the delivery's
	// messages arrive from; rows of other source systems are not counted.
	// Empty: all.
	SourceSystems []string `yaml:"source_systems"`
}

// MessageIDSQL is the SQL that gives, from an outbox row, the consumer's
// message id: the expression, or the quoted column.
func (f DeliveryFrom) MessageIDSQL(quote func(string) string) string {
	if f.MessageIDExpression != "" {
		return "(" + f.MessageIDExpression + ")"
	}
	return quote(f.MessageID)
}

func (d *Delivery) applyDefaults() {
	orDefault(&d.Deadline, model.Duration(DefaultDeliveryDeadline))
	orDefault(&d.Window, model.Duration(DefaultDeliveryWindow))
	orDefault(&d.MinInterval, model.Duration(DefaultMinInterval))
	orDefault(&d.Timeout, model.Duration(DefaultCollectTimeout))
	orDefault(&d.PageSize, DefaultDeliveryPageSize)
	orDefault(&d.MaxEvents, DefaultDeliveryMaxEvents)
	orDefault(&d.LabelValueLimit, DefaultLabelValueLimit)
	if d.LatencyBuckets == nil {
		d.LatencyBuckets = DefaultDeliveryLatencyBuckets()
	}
}

func (d *Delivery) validate(key string, add func(string, string, ...any)) {
	if !nameRE.MatchString(d.Name) {
		add(key+".name", "must be set to a short name (letters, digits, _ . : -); it becomes the delivery label")
	}
	positive(add, key+".deadline", time.Duration(d.Deadline))
	positive(add, key+".window", time.Duration(d.Window))
	positive(add, key+".min_interval", time.Duration(d.MinInterval))
	positive(add, key+".timeout", time.Duration(d.Timeout))
	if d.Window > 0 && d.Deadline >= d.Window {
		add(key+".deadline", "(%s) must be shorter than window (%s): an event is called lost only while it is inside the window, so a deadline of the window or longer would never call one lost", d.Deadline, d.Window)
	}
	between(add, key+".page_size", d.PageSize, 1, 100000)
	atLeastOne(add, key+".max_events", d.MaxEvents)
	atLeastOne(add, key+".label_value_limit", d.LabelValueLimit)
	buckets(add, key+".latency_buckets", d.LatencyBuckets, true)
	f := d.From
	switch {
	case f.MessageID != "" && f.MessageIDExpression != "":
		add(key+".from", "set message_id (a column) or message_id_expression (an SQL expression), not both")
	case f.MessageID != "" && !validIdent(f.MessageID, false):
		add(key+".from.message_id", "%q is not a column name (letters, digits, _); use message_id_expression for an expression", f.MessageID)
	case f.MessageIDExpression != "":
		if strings.TrimSpace(f.MessageIDExpression) == "" {
			add(key+".from.message_id_expression", "must not be blank")
		}
		for _, bad := range []string{";", "--", "/*"} {
			if strings.Contains(f.MessageIDExpression, bad) {
				add(key+".from.message_id_expression", "must be one SQL expression over the outbox's columns, without %q", bad)
				break
			}
		}
	}
	noneEmpty(add, key+".from.event_types", f.EventTypes)
	noneEmpty(add, key+".to.source_systems", d.To.SourceSystems)
}

// resolveDeliveries checks the deliveries: unique names, and databases that
// exist and hold the tables each side needs. It fills in the outbox column
// a delivery's message id defaults to.
func (c *Config) resolveDeliveries(add func(string, string, ...any)) {
	dbs := map[string]*Database{}
	for i := range c.Databases {
		dbs[c.Databases[i].Name] = &c.Databases[i]
	}
	names := map[string]string{}
	for i := range c.Deliveries {
		d := &c.Deliveries[i]
		key := fmt.Sprintf("deliveries[%d]", i)
		d.applyDefaults()
		d.validate(key, add)
		if prev, dup := names[d.Name]; dup && d.Name != "" {
			add(key+".name", "%q is already used by %s", d.Name, prev)
		}
		names[d.Name] = key
		side := func(k, name, table string, has func(*Tables) bool) {
			switch db := dbs[name]; {
			case name == "":
				add(k, "must name a database under databases:")
			case db == nil:
				add(k, "no database %q under databases:%s", name, known(c.Databases))
			case db.Tables == nil || !has(db.Tables):
				add(k, "database %q lists no %s table under tables: (add %s: {} to its tables)", name, table, table)
			}
		}
		side(key+".from.database", d.From.Database, "outbox", func(t *Tables) bool { return t.Outbox != nil })
		side(key+".to.database", d.To.Database, "inbox", func(t *Tables) bool { return t.Inbox != nil })
		if db := dbs[d.From.Database]; db != nil && db.Tables != nil && db.Tables.Outbox != nil &&
			d.From.MessageID == "" && d.From.MessageIDExpression == "" {
			d.From.MessageID = db.Tables.Outbox.Columns.EventID
		}
	}
}

// known lists the configured database names for an error message.
func known(dbs []Database) string {
	if len(dbs) == 0 {
		return " none is configured"
	}
	names := make([]string, len(dbs))
	for i, d := range dbs {
		names[i] = d.Name
	}
	return " (configured: " + strings.Join(names, ", ") + ")"
}
