package sources

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/workflow-exporter/workflow-exporter/blocks/correlate"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine/capability"
	"github.com/workflow-exporter/workflow-exporter/collectors/tables"
	"github.com/workflow-exporter/workflow-exporter/config"
	"github.com/workflow-exporter/workflow-exporter/internal/check"
)

// RunCheck is the check command's wiring: it builds every source as start-up does
// (the same client of each engine, its database in engine-database mode,
// each database's table collectors and joins), hands what they need from
// the engines and tables to internal/check, and closes them again.
func RunCheck(ctx context.Context, cfg *config.Config, w io.Writer, logger *slog.Logger) check.Report {
	var closers []func()
	defer func() {
		for _, c := range closers {
			c()
		}
	}()
	engines := make([]check.EngineTarget, len(cfg.Camunda))
	for i, e := range cfg.Camunda {
		key := fmt.Sprintf("camunda[%d]", i)
		engines[i] = check.EngineTarget{Config: e, Key: key, Warnings: texts(EngineWarnings(e, key))}
		engines[i].Client, engines[i].ClientErr = engine.NewClient(e, logger)
		// The history level as the first collection finds it, through
		// the engine the collectors read (its database in that mode).
		if eng, err := engine.New(e, key, engine.Options{Logger: logger}); err == nil {
			closers = append(closers, eng.Close)
			engines[i].HistoryLevel = eng.HistoryLevel
		}
		if e.Database == nil {
			continue
		}
		ed := &check.EngineDBTarget{Tables: capability.DatabaseRequirements(e.Database.Schema, key+".database")}
		if sc, err := engine.OpenSchemaCheck(e, key, logger); err != nil {
			ed.Err = err
		} else {
			ed.DB, ed.Verify = sc.DB, sc.Verify
			closers = append(closers, sc.DB.Close)
		}
		engines[i].Database = ed
	}
	names := make([]string, len(cfg.Camunda))
	for i, e := range cfg.Camunda {
		names[i] = e.Name
	}
	databases := make([]check.DatabaseTarget, len(cfg.Databases))
	for i, dbc := range cfg.Databases {
		key := fmt.Sprintf("databases[%d]", i)
		databases[i] = check.DatabaseTarget{Config: dbc, Warnings: texts(DatabaseWarnings(dbc, key))}
		// A registry, even an empty one, so the Camunda joins' tables and
		// indexes are checked too.
		db, err := NewDatabase(dbc, key, DatabaseOptions{Views: correlate.NewRegistry(), Engines: names, Logger: logger})
		if err != nil {
			databases[i].Err = err
			continue
		}
		closers = append(closers, db.DB.Close)
		databases[i].DB = db.DB
		for _, c := range db.Collectors {
			databases[i].Tables = append(databases[i].Tables, c.Requirements())
		}
	}
	// Each delivery's needs go under its databases: the window's query
	// under the producer's, the lookup under the consumer's.
	for i, d := range cfg.Deliveries {
		ends := deliveryEnds(cfg, d)
		reqs := tables.NewDelivery(tables.DeliveryOptions{Delivery: d, Key: fmt.Sprintf("deliveries[%d]", i),
			Outbox: *ends.From.Tables.Outbox, Inbox: *ends.To.Tables.Inbox,
			OutboxKey: ends.FromKey + ".tables.outbox", InboxKey: ends.ToKey + ".tables.inbox", Logger: logger}).Requirements()
		for j := range databases {
			for k, db := range []string{d.From.Database, d.To.Database} {
				if databases[j].Config.Name == db && databases[j].DB != nil {
					r := reqs[k]
					r.Kind = fmt.Sprintf("%s, for delivery %s", r.Kind, d.Name)
					databases[j].Tables = append(databases[j].Tables, r)
				}
			}
		}
	}
	return check.Run(ctx, engines, databases, w)
}

func texts(ws []Warning) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.Text
	}
	return out
}
