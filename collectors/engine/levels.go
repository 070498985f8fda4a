package engine

import (
	"context"
	"log/slog"

	"github.com/workflow-exporter/workflow-exporter/collectors/engine/capability"
)

// Where a level came from, as check and the log name it.
const (
	levelFromConfig   = "history_level"
	levelFromProperty = "the engine database's act_ge_property historyLevel"
	levelFromEvidence = "the history the REST API shows"
)

// levelFinding is what one detection found.
type levelFinding struct {
	level capability.Level
	// from says where the level came from (levelFrom*).
	from string
	// final: nothing more can be learned for this engine version (the
	// level is configured, read from the database, or full).
	final bool
	// why explains an unknown level, or what an evidence reading cannot
	// tell apart (for check and the log).
	why string
}

// levelState is an engine's detection across collections: the finding
// for the current engine version.
type levelState struct {
	version string
	found   levelFinding
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
	if e.lvl.found.final {
		return nil
	}
	if l, ok := capability.LevelNamed(e.cfg.HistoryLevel); ok {
		e.lvl.found = levelFinding{level: l, from: levelFromConfig, final: true}
		return nil
	}
	found, err := e.reader.historyLevel(ctx, e.lvl.found)
	if err != nil && ctx.Err() != nil {
		return err
	}
	if err != nil {
		e.logger.Debug("camunda: history level not detected this time", "engine", e.name, "error", err.Error())
		return nil
	}
	if found.level != e.lvl.found.level || found.why != e.lvl.found.why {
		level := slog.LevelInfo
		if !found.level.HasOutcomes() {
			level = slog.LevelWarn
		}
		e.logger.Log(ctx, level, "camunda: history level "+found.level.String(), "engine", e.name, "from", found.from, "why", found.why)
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
	rep := capability.HistoryLevelReport{Level: f.level.String(), From: f.from, Why: f.why}
	if f.from == levelFromConfig {
		rep.From = e.key + "." + levelFromConfig
		if d, err := e.reader.historyLevel(ctx, levelFinding{}); err == nil && d.final {
			rep.Detected = d.level.String()
		}
	}
	return rep
}
