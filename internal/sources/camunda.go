package sources

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine"
	"github.com/workflow-exporter/workflow-exporter/config"
	"github.com/workflow-exporter/workflow-exporter/internal/poll"
)

// CamundaOptions are the shared parts an engine's collectors need.
type CamundaOptions = engine.Options

// EngineSource is one configured engine: its poll source and what must be
// closed at shutdown (the engine database's pool, in that mode).
type EngineSource struct {
	Source *poll.Source
	engine *engine.Engine
}

// Close releases the engine database's connections, if any.
func (e *EngineSource) Close() { e.engine.Close() }

// NewCamundaSource builds the poll source of one configured engine: GET
// /version as its probe (camunda_up: the engine answers), then one
// collector per aspect of the engine (collectors/engine), each of which can
// fail alone. key is the config key, e.g. "camunda[0]". It connects to
// nothing.
func NewCamundaSource(cfg config.Camunda, key string, o CamundaOptions) (*EngineSource, error) {
	e, err := engine.New(cfg, key, o)
	if err != nil {
		return nil, err
	}
	upDesc := catalog.Desc(catalog.CamundaUp)
	src := poll.NewSource(poll.SourceOptions{
		Kind: "camunda", Name: cfg.Name,
		MinInterval: time.Duration(cfg.MinInterval), Timeout: time.Duration(cfg.Timeout),
		Probe:      e.Probe,
		Collectors: e.Collectors(),
		UpMetrics: func(up bool) []prometheus.Metric {
			v := 0.0
			if up {
				v = 1
			}
			return []prometheus.Metric{prometheus.MustNewConstMetric(upDesc, prometheus.GaugeValue, v, cfg.Name)}
		},
		StatusItems: o.StatusItems,
		Logger:      o.Logger,
	})
	return &EngineSource{Source: src, engine: e}, nil
}
