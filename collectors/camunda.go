package collectors

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/version"

	"github.com/workflow-exporter/workflow-exporter/camunda"
	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/internal/config"
	"github.com/workflow-exporter/workflow-exporter/internal/fold"
	"github.com/workflow-exporter/workflow-exporter/internal/poll"
)

// Camunda watches one Camunda 7 engine (or fork) over its REST API.
type Camunda struct {
	client *camunda.Client
	engine string
	cfg    config.Camunda
	logger *slog.Logger
}

// NewCamundaSource builds the poll source of one configured engine. key is
// the config key, e.g. "camunda[0]".
func NewCamundaSource(cfg config.Camunda, key string, folds *fold.Stats, logger *slog.Logger) (*poll.Source, error) {
	c, err := NewCamunda(cfg, key, folds, logger)
	if err != nil {
		return nil, err
	}
	upDesc := catalog.Desc(catalog.CamundaUp)
	return poll.NewSource(poll.SourceOptions{
		Kind: "camunda", Name: cfg.Name,
		MinInterval: time.Duration(cfg.MinInterval), Timeout: time.Duration(cfg.Timeout),
		Collectors: []poll.Collector{c},
		UpMetrics: func(up bool) []prometheus.Metric {
			v := 0.0
			if up {
				v = 1
			}
			return []prometheus.Metric{prometheus.MustNewConstMetric(upDesc, prometheus.GaugeValue, v, cfg.Name)}
		},
		Logger: logger,
	}), nil
}

// NewCamunda returns the collector of one engine.
func NewCamunda(cfg config.Camunda, key string, folds *fold.Stats, logger *slog.Logger) (*Camunda, error) {
	logger = orDiscard(logger)
	client, err := camunda.New(camunda.Config{
		BaseURL: cfg.URL, Engine: cfg.Engine, Username: cfg.Username, Password: cfg.Password,
		TLS: camunda.TLSConfig{
			CAFile: cfg.TLS.CAFile, CertFile: cfg.TLS.CertFile, KeyFile: cfg.TLS.KeyFile,
			ServerName: cfg.TLS.ServerName, InsecureSkipVerify: cfg.TLS.InsecureSkipVerify,
		},
		Timeout: time.Duration(cfg.RequestTimeout),
		Logger:  logger.With("engine", cfg.Name),
		Version: version.Version,
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	return &Camunda{client: client, engine: cfg.Name, cfg: cfg, logger: logger}, nil
}

// Name implements poll.Collector.
func (c *Camunda) Name() string { return "camunda" }

// Collect implements poll.Collector.
func (c *Camunda) Collect(ctx context.Context) ([]prometheus.Metric, error) {
	info, err := c.client.EngineInfo(ctx)
	if err != nil {
		return nil, err
	}
	return []prometheus.Metric{
		prometheus.MustNewConstMetric(catalog.Desc(catalog.CamundaEngineInfo), prometheus.GaugeValue, 1, c.engine, info.Version, string(info.Flavor)),
	}, nil
}
