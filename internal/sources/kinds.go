package sources

import (
	"log/slog"
	"time"

	"github.com/workflow-exporter/workflow-exporter/blocks/correlate"
	"github.com/workflow-exporter/workflow-exporter/blocks/labellimit"
	"github.com/workflow-exporter/workflow-exporter/blocks/pgsource"
	"github.com/workflow-exporter/workflow-exporter/collectors/tables"
	"github.com/workflow-exporter/workflow-exporter/config"
)

// tableKind is one kind of worker table: where its config lives, its
// collector (collectors/tables), and the collector of its Camunda join if
// its rows name external tasks. What a kind needs from its table (columns, indexes)
// comes from its collectors' Requirements.
type tableKind struct {
	// section is the key under databases[].tables.
	section string
	// collector returns the table's collector, nil when the database does
	// not list the table.
	collector func(t *config.Tables, o kindOptions) TableCollector
	// join returns the join's collector, nil when the kind has none, the
	// database does not list the table, or its join is disabled.
	join func(t *config.Tables, o kindOptions) TableCollector
	// relay returns the collector of the table's change-data-capture
	// relay (outbox.relay), nil when the kind has none or the table names
	// no relay. It fails apart from the table's own collector.
	relay func(t *config.Tables, o kindOptions) TableCollector
	// horizon returns the collector of the table's retention horizon
	// (collectors/tables/horizon.go), nil when the kind deduplicates
	// nothing, the database does not list the table, or the table is a
	// library's read through a preset.
	horizon func(t *config.Tables, o kindOptions) TableCollector
}

// tableKinds is the one list of worker table kinds, in the order their
// collectors run: NewDatabase builds a database's collectors from it,
// DefaultRequirements (and so deploy/sql/003_exporter_indexes.sql and the
// index table of docs/database.md) lists their indexes from it. A new kind needs its
// config section (config/tables.go), its collector
// (collectors/tables), and one entry here.
func tableKinds() []tableKind {
	return []tableKind{
		kindOf("idempotency", func(t *config.Tables) *config.IdempotencyTable { return t.Idempotency },
			tables.NewIdempotency, joined(tables.NewIdempotencyJoin), tables.NewIdempotencyHorizon),
		kindOf("processed_jobs", func(t *config.Tables) *config.ProcessedJobTable { return t.ProcessedJobs },
			tables.NewProcessedJobs, joined(tables.NewProcessedJobJoin)),
		kindOf("inbox", func(t *config.Tables) *config.InboxTable { return t.Inbox }, tables.NewInbox, nil, tables.NewInboxHorizon),
		outboxKind(),
	}
}

// outboxKind is the outbox: its columns' collector, left out when a relay
// drains it and columns: names none (the table may then have any shape),
// and the relay's collector.
func outboxKind() tableKind {
	outbox := func(t *config.Tables) *config.OutboxTable { return t.Outbox }
	k := kindOf("outbox", outbox, func(o tables.OutboxOptions) TableCollector {
		if !o.Table.ReadsColumns() {
			return nil
		}
		return tables.NewOutbox(o)
	}, nil)
	k.relay = func(t *config.Tables, o kindOptions) TableCollector {
		if cfg := outbox(t); cfg != nil && cfg.Relay != nil {
			return tables.NewOutboxRelay(tableOptions("outbox", cfg, o))
		}
		return nil
	}
	return k
}

// kindOptions are what every kind's collectors get from their database;
// prefix is the config key of the database's tables ("databases[0].tables.").
type kindOptions struct {
	db               *pgsource.DB
	database, prefix string
	lateCommitWindow time.Duration
	labelValueLimit  int
	folds            *labellimit.Stats
	logger           *slog.Logger
	views            *correlate.Registry
	engines          []string
}

// kindOf builds a kind from its config section, its collector, its join
// (nil for none) and, for a kind that deduplicates, its horizon.
func kindOf[T any, C TableCollector](section string, table func(*config.Tables) *T,
	collector func(tables.Options[T]) C, join func(tables.JoinOptions[T]) TableCollector,
	horizon ...func(tables.Options[T]) *tables.Horizon) tableKind {
	options := func(t *config.Tables, o kindOptions) (tables.Options[T], bool) {
		cfg := table(t)
		if cfg == nil {
			return tables.Options[T]{}, false
		}
		return tableOptions(section, cfg, o), true
	}
	k := tableKind{section: section}
	k.collector = func(t *config.Tables, o kindOptions) TableCollector {
		if to, ok := options(t, o); ok {
			return collector(to)
		}
		return nil
	}
	k.join = func(t *config.Tables, o kindOptions) TableCollector {
		if to, ok := options(t, o); ok && join != nil {
			return join(tables.JoinOptions[T]{Options: to, Views: o.views, Engines: o.engines})
		}
		return nil
	}
	k.horizon = func(t *config.Tables, o kindOptions) TableCollector {
		if to, ok := options(t, o); ok && len(horizon) > 0 {
			// A table without a horizon (an inbox read through a
			// preset) gives a nil *Horizon: no collector, not a nil
			// one in the interface.
			if h := horizon[0](to); h != nil {
				return h
			}
		}
		return nil
	}
	return k
}

// tableOptions are the options of a collector of the table configured at
// section.
func tableOptions[T any](section string, cfg *T, o kindOptions) tables.Options[T] {
	return tables.Options[T]{DB: o.db, Database: o.database, Table: *cfg, ConfigKey: o.prefix + section,
		LateCommitWindow: o.lateCommitWindow, LabelValueLimit: o.labelValueLimit, Folds: o.folds, Logger: o.logger}
}

// joinable is a table config whose rows name Camunda external tasks.
type joinable interface{ Correlation() config.Correlation }

// joined adapts a join's constructor to the kind list: no join when the
// table's camunda.disabled is set.
func joined[T joinable, J TableCollector](join func(tables.JoinOptions[T]) J) func(tables.JoinOptions[T]) TableCollector {
	return func(o tables.JoinOptions[T]) TableCollector {
		if o.Table.Correlation().Disabled {
			return nil
		}
		return join(o)
	}
}
