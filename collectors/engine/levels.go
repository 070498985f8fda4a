package engine

import (
	"context"
	"log/slog"

	"github.com/workflow-exporter/workflow-exporter/collectors/engine/capability"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine/reading"
)

// levelState is an engine's detection across collections: the finding
// for the current engine version.
type levelState struct {
	version string
	found   reading.LevelFinding
}

// learnLevel finds the history level for this collection (Probe): the
// configured one; else, once per engine version, the engine database's
// property (retried while it cannot be read); else evidence in the
// history over REST, probed at every collection until full is seen (the
// history only grows). A failed detection leaves the level as it was (or
// unknown): it never fails the probe, except when ctx ends.
func (e *Engine) learnLevel(ctx context.Context, version string) error {
	if e.lvl.version != version {
		e.lvl = levelState{version: version}
	}
	if e.lvl.found.Final {
		return nil
	}
	if l, ok := capability.LevelNamed(e.cfg.HistoryLevel); ok {
		e.lvl.found = reading.LevelFinding{Level: l, From: reading.LevelFromConfig, Final: true}
		return nil
	}
	found, err := e.reader.HistoryLevel(ctx, e.lvl.found)
	if err != nil && ctx.Err() != nil {
		return err
	}
	if err != nil {
		e.logger.Debug("camunda: history level not detected this time", "engine", e.name, "error", err.Error())
		return nil
	}
	if found.Level != e.lvl.found.Level || found.Why != e.lvl.found.Why {
		level := slog.LevelInfo
		if !found.Level.HasOutcomes() {
			level = slog.LevelWarn
		}
		e.logger.Log(ctx, level, "camunda: history level "+found.Level.String(), "engine", e.name, "from", found.From, "why", found.Why)
	}
	e.lvl.found = found
	return nil
}

// HistoryLevel finds the history level as the first collection does (the
// configured one, else the engine database's property, else the evidence
// in the history over REST), for `workflow-exporter check`. With a
// configured level it also asks the engine, so check can compare.
func (e *Engine) HistoryLevel(ctx context.Context) capability.HistoryLevelReport {
	if err := e.learnLevel(ctx, e.lvl.version); err != nil {
		return capability.HistoryLevelReport{Level: capability.LevelUnknown.String(), Why: err.Error()}
	}
	f := e.lvl.found
	rep := capability.HistoryLevelReport{Level: f.Level.String(), From: f.From, Why: f.Why}
	if f.From == reading.LevelFromConfig {
		rep.From = e.key + "." + reading.LevelFromConfig
		if d, err := e.reader.HistoryLevel(ctx, reading.LevelFinding{}); err == nil && d.Final {
			rep.Detected = d.Level.String()
		}
	}
	return rep
}
