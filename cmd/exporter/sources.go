package main

import (
	"fmt"
	"log/slog"

	"github.com/workflow-exporter/workflow-exporter/collectors"
	"github.com/workflow-exporter/workflow-exporter/internal/config"
	"github.com/workflow-exporter/workflow-exporter/internal/correlate"
	"github.com/workflow-exporter/workflow-exporter/internal/labellimit"
	"github.com/workflow-exporter/workflow-exporter/internal/poll"
)

// buildSources turns the configuration into poll sources. It connects to
// nothing: a source that is down at start-up is reported by its collections.
// statusItems, when above 0, turns on the status page's reading (lists of
// at most that many items).
func buildSources(cfg *config.Config, folds *labellimit.Stats, statusItems int, logger *slog.Logger) ([]*poll.Source, func(), error) {
	var sources []*poll.Source
	var closers []func()
	closeAll := func() {
		for _, c := range closers {
			c()
		}
	}
	// The Camunda sources publish their in-flight tasks here; the database
	// sources join their tables against them.
	views := correlate.NewRegistry()
	var engines []string
	for _, e := range cfg.Camunda {
		engines = append(engines, e.Name)
	}
	for i, d := range cfg.Databases {
		db, err := collectors.NewDatabase(d, fmt.Sprintf("databases[%d]", i), collectors.DatabaseOptions{Folds: folds, Views: views, Engines: engines, StatusItems: statusItems, Logger: logger})
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		closers = append(closers, db.DB.Close)
		sources = append(sources, db.Source)
	}
	for i, e := range cfg.Camunda {
		eng, err := collectors.NewCamundaSource(e, fmt.Sprintf("camunda[%d]", i), collectors.CamundaOptions{Folds: folds, Views: views, StatusItems: statusItems, Logger: logger})
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		closers = append(closers, eng.Close)
		sources = append(sources, eng.Source)
	}
	return sources, closeAll, nil
}

// checkSources builds every source the way start-up does and closes them
// again, so --config.check refuses exactly what start-up refuses (a DSN that
// does not parse, credentials in a Camunda URL, an unreadable TLS file). Like
// buildSources it connects to nothing.
func checkSources(cfg *config.Config, logger *slog.Logger) error {
	_, closeSources, err := buildSources(cfg, labellimit.NewStats(), cfg.Status.MaxItems, logger)
	if err != nil {
		return err
	}
	closeSources()
	return nil
}
