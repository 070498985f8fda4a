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
			tables.NewIdempotency, joined(tables.NewIdempotencyJoin)),
		kindOf("processed_jobs", func(t *config.Tables) *config.ProcessedJobTable { return t.ProcessedJobs },
			tables.NewProcessedJobs, joined(tables.NewProcessedJobJoin)),
		kindOf("inbox", func(t *config.Tables) *config.InboxTable { return t.Inbox }, tables.NewInbox, nil),
		kindOf("outbox", func(t *config.Tables) *config.OutboxTable { return t.Outbox }, tables.NewOutbox, nil),
	}
}

// kindOptions are what every kind's collectors get from their database;
// prefix is the config key of the database's tables ("databases[0].tables.").
type kindOptions struct {
	db               *pgsource.DB
	database, prefix string
	lateCommitWindow time.Duration
	labelValueLimit  int
	forgetAfter      time.Duration
	maxCatchUp       time.Duration
	folds            *labellimit.Stats
	logger           *slog.Logger
	views            *correlate.Registry
	engines          []string
}

func kindOf[T any, C TableCollector](section string, table func(*config.Tables) *T,
	collector func(tables.Options[T]) C, join func(tables.JoinOptions[T]) TableCollector) tableKind {
	options := func(t *config.Tables, o kindOptions) (tables.Options[T], bool) {
		cfg := table(t)
		if cfg == nil {
			return tables.Options[T]{}, false
		}
		return tables.Options[T]{DB: o.db, Database: o.database, Table: *cfg, ConfigKey: o.prefix + section,
			LateCommitWindow: o.lateCommitWindow, LabelValueLimit: o.labelValueLimit, LabelValueForgetAfter: o.forgetAfter, MaxCatchUp: o.maxCatchUp,
			Folds: o.folds, Logger: o.logger}, true
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
	return k
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
