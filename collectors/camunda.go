package collectors

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/version"

	"github.com/workflow-exporter/workflow-exporter/camunda"
	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/internal/config"
	"github.com/workflow-exporter/workflow-exporter/internal/correlate"
	"github.com/workflow-exporter/workflow-exporter/internal/fold"
	"github.com/workflow-exporter/workflow-exporter/internal/poll"
)

// Camunda watches one Camunda 7 engine (or fork) over its REST API and
// emits every camunda_* metric of the catalog except camunda_up, which the
// source emits. The state partition, the lock tracking and the request
// budget are documented in docs/camunda-states.md; the rules themselves are
// in camunda_locks.go (classification), camunda_tasks.go (per-topic counts
// and the partition), camunda_history.go (counters from history log
// deltas) and camunda_incidents.go (incidents and jobs).
//
// State between collections (tracked tasks, counters, history baselines,
// known topics) is built as a new value during a collection and replaces
// the old one only when the whole collection succeeded, so a failed
// collection leaves the state as it was.
type Camunda struct {
	client *camunda.Client
	engine string
	cfg    config.Camunda
	logger *slog.Logger
	views  *correlate.Registry // nil: no join

	topicLimit    *fold.Limiter // topic label of every per-topic metric
	workerFold    *fold.Ranked  // worker_id per topic, admitted anew in every collection
	incidentLimit *fold.Limiter // (incident_type, process_definition_key, activity_id)
	jobLimit      *fold.Limiter // process_definition_key of jobs

	st camundaState

	// productName is cached per engine version: the telemetry product name
	// only changes with the engine.
	productName, productFor string
	// version is the engine version of the current collection;
	// noCreateTime is set to it when the engine's external tasks carry no
	// createTime (oldest waiting age is then not reported).
	version, noCreateTime string
}

// camundaState is everything a collection commits on success.
type camundaState struct {
	// engineNow is the engine time of the last successful collection.
	engineNow time.Time
	// topics are the topics reported (configured, seen); each keeps
	// reporting after it drains.
	topics map[string]bool
	// tasks are the tracked tasks by id.
	tasks map[string]tracked
	// expirations and redeliveries are the lock counters per topic label.
	expirations, redeliveries map[string]float64
	// history holds the failure and completion counters per topic label.
	history map[string]*historyCounter
	// other holds the failure and completion counters of topic="other".
	other otherHistory
	// incidents and jobs remember label tuples seen, to report 0 after
	// they clear.
	incidents map[incidentKey]bool
	oldestInc map[string]bool
	jobs      map[string]bool
}

func (s camundaState) clone() camundaState {
	n := camundaState{
		engineNow:    s.engineNow,
		topics:       cloneMap(s.topics),
		tasks:        map[string]tracked{},
		expirations:  cloneMap(s.expirations),
		redeliveries: cloneMap(s.redeliveries),
		history:      make(map[string]*historyCounter, len(s.history)),
		other:        s.other,
		incidents:    cloneMap(s.incidents),
		oldestInc:    cloneMap(s.oldestInc),
		jobs:         cloneMap(s.jobs),
	}
	for k, v := range s.history {
		c := *v
		n.history[k] = &c
	}
	return n
}

func cloneMap[K comparable, V any](m map[K]V) map[K]V {
	out := make(map[K]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// CamundaOptions are the shared parts an engine's collector needs.
type CamundaOptions struct {
	Folds *fold.Stats
	// Views receives the engine's in-flight tasks after every successful
	// collection (withdrawn when one fails), for the database side's joins;
	// nil publishes nothing.
	Views  *correlate.Registry
	Logger *slog.Logger
}

// NewCamundaSource builds the poll source of one configured engine. key is
// the config key, e.g. "camunda[0]".
func NewCamundaSource(cfg config.Camunda, key string, o CamundaOptions) (*poll.Source, error) {
	c, err := NewCamunda(cfg, key, o)
	if err != nil {
		return nil, err
	}
	logger := o.Logger
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
func NewCamunda(cfg config.Camunda, key string, o CamundaOptions) (*Camunda, error) {
	logger, folds := orDiscard(o.Logger), o.Folds
	client, err := camunda.New(camunda.Config{
		BaseURL: cfg.URL, Engine: cfg.Engine, Username: cfg.Username, Password: cfg.Password,
		TLS: camunda.TLSConfig{
			CAFile: cfg.TLS.CAFile, CertFile: cfg.TLS.CertFile, KeyFile: cfg.TLS.KeyFile,
			ServerName: cfg.TLS.ServerName, InsecureSkipVerify: cfg.TLS.InsecureSkipVerify,
		},
		Timeout:         time.Duration(cfg.RequestTimeout),
		MaxResultsLimit: cfg.MaxResultsLimit,
		Logger:          logger.With("engine", cfg.Name),
		Version:         version.Version,
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	if folds == nil {
		folds = fold.NewStats()
	}
	c := &Camunda{
		client: client, engine: cfg.Name, cfg: cfg, logger: logger, views: o.Views,
		topicLimit:    fold.NewLimiter(folds, catalog.CamundaExternalTasks, cfg.LabelValueLimit),
		workerFold:    fold.NewRanked(folds, catalog.CamundaExternalTasksLockedByWorker, cfg.WorkerIDLimit),
		incidentLimit: fold.NewLimiter(folds, catalog.CamundaIncidents, cfg.LabelValueLimit),
		jobLimit:      fold.NewLimiter(folds, catalog.CamundaJobsRetriesExhausted, cfg.LabelValueLimit),
	}
	c.st = camundaState{
		topics: map[string]bool{}, tasks: map[string]tracked{},
		expirations: map[string]float64{}, redeliveries: map[string]float64{},
		history: map[string]*historyCounter{}, incidents: map[incidentKey]bool{},
		oldestInc: map[string]bool{}, jobs: map[string]bool{},
	}
	// Configured topics come first, so they are admitted before any topic
	// discovered in the engine.
	for _, t := range cfg.Topics {
		if c.topicLimit.Admit(t)[0] == t && t != fold.Other {
			c.st.topics[t] = true
		} else {
			c.st.topics[fold.Other] = true
		}
	}
	c.topicLimit.Flush()
	return c, nil
}

// Name implements poll.Collector.
func (c *Camunda) Name() string { return "camunda" }

// folder is a fold.Limiter or fold.Ranked: their folds are counted when the
// collection succeeds and forgotten when it fails.
type folder interface {
	Flush()
	Discard()
}

// collection is the working set of one Collect call.
type collection struct {
	c         *Camunda
	ctx       context.Context
	st        camundaState // the next state, committed on success
	engineNow time.Time
	budget    int // listed tasks left in this collection (max_listed_tasks)
	out       []prometheus.Metric
	limiters  []folder // touched this collection: Flush or Discard
	// inflight are the listed tasks a worker touched, for the join;
	// truncated says the lists did not cover every such task, and
	// unwatched how many of them the lists left out.
	inflight  []correlate.Task
	truncated bool
	unwatched int64
}

func (k *collection) gauge(name string, v float64, labels ...string) {
	k.out = append(k.out, prometheus.MustNewConstMetric(catalog.Desc(name), prometheus.GaugeValue, v, labels...))
}

func (k *collection) counter(name string, v float64, labels ...string) {
	k.out = append(k.out, prometheus.MustNewConstMetric(catalog.Desc(name), prometheus.CounterValue, v, labels...))
}

// Collect implements poll.Collector.
func (c *Camunda) Collect(ctx context.Context) ([]prometheus.Metric, error) {
	taken := time.Now()
	k := &collection{c: c, ctx: ctx, st: c.st.clone(), budget: c.cfg.MaxListedTasks}
	k.limiters = []folder{c.topicLimit, c.workerFold, c.incidentLimit, c.jobLimit}
	err := k.run()
	for _, l := range k.limiters {
		if err != nil {
			l.Discard()
		} else {
			l.Flush()
		}
	}
	if err != nil {
		c.views.Withdraw(c.engine)
		return nil, err
	}
	k.st.engineNow = k.engineNow
	c.st = k.st
	c.views.Publish(&correlate.View{Engine: c.engine, Taken: taken, Tasks: k.inflight, Truncated: k.truncated})
	return k.out, nil
}

func (k *collection) run() error {
	c := k.c
	v, now, err := c.client.VersionAt(k.ctx)
	if err != nil {
		return err
	}
	k.engineNow = now
	c.version = v
	if c.productFor != v {
		// Asked once per engine version, answer or not: the endpoint may be
		// forbidden for the exporter's user or missing in a fork.
		name, err := c.client.ProductName(k.ctx)
		if err != nil && k.ctx.Err() != nil {
			return err
		}
		if err != nil {
			c.logger.Debug("camunda: no telemetry product name; detecting flavor from the version alone", "engine", c.engine, "error", err.Error())
		}
		c.productName, c.productFor = name, v
	}
	k.gauge(catalog.CamundaEngineInfo, 1, c.engine, v, string(camunda.DetectFlavor(v, c.productName)))

	if err := k.externalTasks(); err != nil {
		return err
	}
	k.gauge(catalog.ExporterUnwatchedTasks, float64(k.unwatched), c.engine)
	if err := k.incidents(); err != nil {
		return err
	}
	return k.jobs()
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
