package engine

import (
	"context"

	"github.com/workflow-exporter/workflow-exporter/collectors/engine/capability"
)

// Capabilities probes the engine as a collection does, finds its history
// level and asks its reader where the oldest waiting age comes from: what
// `workflow-exporter check` reports of the engine.
func (e *Engine) Capabilities(ctx context.Context) (capability.EngineReport, error) {
	if err := e.Probe(ctx); err != nil {
		return capability.EngineReport{}, err
	}
	c := capability.EngineReport{Version: e.at.Version, Flavor: string(e.flavor(e.at.Version)), Level: e.HistoryLevel(ctx)}
	switch {
	case e.client == nil:
		c.Mode = capability.ModeDatabaseAlone
	case e.db != nil:
		c.Mode = capability.ModeDatabase
	default:
		c.Mode = capability.ModeREST
	}
	var err error
	if c.Age, c.AgeWhy, err = e.reader.WaitingAgeSource(ctx, e.at); err != nil {
		return c, err
	}
	c.Facts = capability.Facts(e.at.Level, c.Age)
	return c, nil
}
