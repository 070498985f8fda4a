package sources

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/workflow-exporter/workflow-exporter/blocks/labellimit"
	"github.com/workflow-exporter/workflow-exporter/blocks/pgsource"
	"github.com/workflow-exporter/workflow-exporter/collectors"
	"github.com/workflow-exporter/workflow-exporter/collectors/tables"
	"github.com/workflow-exporter/workflow-exporter/config"
	"github.com/workflow-exporter/workflow-exporter/internal/poll"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// A delivery (deliveries[], docs/delivery-ledger.md) is a poll source of
// its own, not a collector of either database's source:
//   - it reads two databases, which may be on different servers: as a
//     collector of the consumer's source, an outage of the producer would
//     read as a failure of the consumer, and the producer's slow window
//     would spend the consumer's collection timeout, which its table
//     collectors need;
//   - its cost is the window's events, set by its own window and
//     min_interval, not by the tables' collections;
//   - its own workflow_exporter_source_up{source="delivery"} and
//     WorkflowExporterSourceDown say when the comparison itself fails (a
//     missing column, a timeout), while an outage of one of its databases
//     is that database's: the delivery then reports no series and no
//     error (tables.DeliveryOptions.DatabaseDown), so the outage is one
//     alert, not two.
//
// It refreshes after the databases (deliveryPhase), so it sees their state
// of the same scrape, and holds its own connections: one pool of at most
// one connection per database (one, shared, when a database is both ends),
// with that database's DSN and timeouts.

// deliveryPhase orders a delivery's refresh after every database's (0, or
// 1 with a Camunda join): poll.SourceOptions.Phase.
const deliveryPhase = 2

// DeliveryEnds are a delivery's two databases as configured, with their
// config keys (databases[0]).
type DeliveryEnds struct {
	From, To       config.Database
	FromKey, ToKey string
}

// DeliveryOptions are the shared parts a delivery needs.
type DeliveryOptions struct {
	Folds *labellimit.Stats
	// StatusItems, when above 0, turns on the status page's list of lost
	// events (poll.SourceOptions.StatusItems).
	StatusItems int
	// DatabaseDown reports whether a database's own source is down.
	DatabaseDown func(database string) bool
	Logger       *slog.Logger
}

// DeliverySource is one configured delivery: its poll source, its
// collector, and what must be closed when it goes.
type DeliverySource struct {
	Source    *poll.Source
	Collector *tables.Delivery
	close     []func()
}

// Close releases the delivery's connections.
func (d *DeliverySource) Close() {
	for _, c := range d.close {
		c()
	}
}

// NewDelivery wires a delivery into a poll source. key is its config key
// (deliveries[0]). It connects to nothing.
func NewDelivery(cfg config.Delivery, key string, ends DeliveryEnds, o DeliveryOptions) (*DeliverySource, error) {
	logger := orDiscard(o.Logger)
	open := func(db config.Database) (*pgsource.DB, error) {
		h, err := pgsource.Open(pgsource.Options{
			Name: db.Name, DSN: db.ResolvedDSN,
			StatementTimeout: time.Duration(db.StatementTimeout), LockTimeout: time.Duration(db.LockTimeout),
			MaxConnections: 1, Logger: logger,
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		return h, nil
	}
	out := &DeliverySource{}
	from, err := open(ends.From)
	if err != nil {
		return nil, err
	}
	out.close = append(out.close, from.Close)
	to := from
	if ends.To.Name != ends.From.Name {
		if to, err = open(ends.To); err != nil {
			out.Close()
			return nil, err
		}
		out.close = append(out.close, to.Close)
	}
	out.Collector = tables.NewDelivery(tables.DeliveryOptions{
		Delivery: cfg, Key: key, From: from, To: to,
		Outbox: *ends.From.Tables.Outbox, Inbox: *ends.To.Tables.Inbox,
		OutboxKey: ends.FromKey + ".tables.outbox", InboxKey: ends.ToKey + ".tables.inbox",
		Folds: o.Folds, Logger: logger, DatabaseDown: o.DatabaseDown,
	})
	out.Source = poll.NewSource(poll.SourceOptions{
		Kind: vocab.SourceDelivery, Name: cfg.Name,
		MinInterval: time.Duration(cfg.MinInterval), Timeout: time.Duration(cfg.Timeout),
		Collectors: []collectors.Collector{out.Collector}, Logger: logger,
		Phase: deliveryPhase, StatusItems: o.StatusItems,
	})
	return out, nil
}

// deliveryEnds finds a delivery's databases in cfg (config.Parse has
// checked that both exist and hold the tables).
func deliveryEnds(cfg *config.Config, d config.Delivery) DeliveryEnds {
	var ends DeliveryEnds
	for i, db := range cfg.Databases {
		if db.Name == d.From.Database {
			ends.From, ends.FromKey = db, fmt.Sprintf("databases[%d]", i)
		}
		if db.Name == d.To.Database {
			ends.To, ends.ToKey = db, fmt.Sprintf("databases[%d]", i)
		}
	}
	return ends
}
