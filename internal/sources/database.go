package sources

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/workflow-exporter/workflow-exporter/blocks/correlate"
	"github.com/workflow-exporter/workflow-exporter/blocks/labellimit"
	"github.com/workflow-exporter/workflow-exporter/blocks/pgschema"
	"github.com/workflow-exporter/workflow-exporter/blocks/pgsource"
	"github.com/workflow-exporter/workflow-exporter/collectors"
	"github.com/workflow-exporter/workflow-exporter/config"
	"github.com/workflow-exporter/workflow-exporter/internal/poll"
)

// TableCollector is a collector over one configured table: a table kind's
// collector or its Camunda join.
type TableCollector interface {
	Name() string
	Collect(ctx context.Context, sink *collectors.Sink) ([]prometheus.Metric, error)
	Requirements() pgschema.Requirements
}

// DatabaseSource is one configured database: its connection and the collectors
// of the tables it lists.
type DatabaseSource struct {
	DB         *pgsource.DB
	Source     *poll.Source
	Collectors []TableCollector
}

// DatabaseOptions are the shared parts a database's collectors need.
type DatabaseOptions struct {
	Folds *labellimit.Stats
	// Views carries the Camunda side's in-flight tasks for the joins; nil
	// turns the joins off.
	Views *correlate.Registry
	// Engines are the configured Camunda engine names.
	Engines []string
	// StatusItems, when above 0, turns on the status page's reading with
	// lists of at most that many items (poll.SourceOptions.StatusItems).
	StatusItems int
	Logger      *slog.Logger
}

// NewDatabase wires a database's table collectors into a poll source. key is
// the config key of the database, e.g. "databases[0]".
func NewDatabase(cfg config.Database, key string, o DatabaseOptions) (*DatabaseSource, error) {
	logger, folds := orDiscard(o.Logger), o.Folds
	if folds == nil {
		folds = labellimit.NewStats()
	}
	db, err := pgsource.Open(pgsource.Options{
		Name: cfg.Name, DSN: cfg.ResolvedDSN,
		StatementTimeout: time.Duration(cfg.StatementTimeout), LockTimeout: time.Duration(cfg.LockTimeout),
		MaxConnections: cfg.MaxConnections, Logger: logger,
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	ko := kindOptions{db: db, database: cfg.Name, prefix: key + ".tables.", lateCommitWindow: time.Duration(cfg.LateCommitWindow),
		labelValueLimit: cfg.LabelValueLimit, folds: folds, logger: logger, views: o.Views, engines: o.Engines}
	// The tables' collectors (and the outbox's relay) first, then their
	// horizons, then the joins, each in the order of the kinds.
	var cs []TableCollector
	for _, k := range tableKinds() {
		if c := k.collector(cfg.Tables, ko); c != nil {
			cs = append(cs, c)
		}
		if k.relay == nil {
			continue
		}
		if c := k.relay(cfg.Tables, ko); c != nil {
			cs = append(cs, c)
		}
	}
	for _, k := range tableKinds() {
		if c := k.horizon(cfg.Tables, ko); c != nil {
			cs = append(cs, c)
		}
	}
	joinsFrom := len(cs)
	if o.Views != nil {
		for _, k := range tableKinds() {
			if c := k.join(cfg.Tables, ko); c != nil {
				cs = append(cs, c)
			}
		}
	}
	// With joins, refresh after the Camunda sources (phase 0) so a join uses
	// the engine view of the same scrape. Without one, refresh alongside
	// them: a slow engine must not hold back a database that does not join.
	phase := 0
	if len(cs) > joinsFrom {
		phase = 1
	}
	pcs := make([]collectors.Collector, len(cs))
	for i, c := range cs {
		pcs[i] = c
	}
	src := poll.NewSource(poll.SourceOptions{
		Kind: "database", Name: cfg.Name,
		MinInterval: time.Duration(cfg.MinInterval), Timeout: time.Duration(cfg.Timeout),
		Probe: db.Probe, Collectors: pcs, Logger: logger,
		Phase: phase, StatusItems: o.StatusItems,
	})
	return &DatabaseSource{DB: db, Source: src, Collectors: cs}, nil
}

func orDiscard(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}
