package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/sim/engineclient"
	"github.com/workflow-exporter/workflow-exporter/test/harness/camundatest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/exportertest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/promtest"
)

// TestBacklogStalledPagesOnEveryVersion: CamundaExternalTaskBacklogStalled
// pages for a topic no worker fetches on Camunda 7.20 and 7.22 as on 7.24,
// with the real engines, the exporter binary and real Prometheus and
// Alertmanager evaluating the shipped rule (windows shortened): 7.24 dates
// the waiting tasks by their createTime, 7.22 by the activity instance of
// the task it sorts first, 7.20 by the oldest unfinished activity instance
// of its listed tasks (REST) and by ACT_HI_ACTINST (engine-database mode).
// A topic whose worker completes its tasks on the same engines stays
// quiet, and no CamundaExternalTaskWaitingAgeMissing ticket says a page is
// blind.
func TestBacklogStalledPagesOnEveryVersion(t *testing.T) {
	besideTheMatrix(t)
	const stalledTopic, servedTopic = "versions.stalled", "versions.served"
	processOf := func(topic string) string { return strings.ReplaceAll(topic, ".", "_") }
	promtest.SkipIfMissing(t, promtest.PrometheusBinary(), promtest.AlertmanagerBinary())
	type engine struct {
		name   string
		flavor camundatest.Flavor
		// database: also read in engine-database mode (engine name
		// name+"db"), on PostgreSQL.
		database bool
		e        *camundatest.Engine
		dsn      string
	}
	engines := []*engine{
		// 7.24: the package's shared engine (other tests' topics on it
		// are left alone: this test's have names of their own).
		{name: "e724", flavor: camundatest.FlavorCamunda, e: sharedEngine(t)},
		{name: "e722", flavor: camundatest.FlavorCamunda722},
		{name: "e720", flavor: camundatest.FlavorCamunda720, database: true},
	}
	var wg sync.WaitGroup
	errs := make([]error, len(engines))
	for i, en := range engines {
		if en.e != nil {
			continue
		}
		opts := camundatest.Options{Flavor: en.flavor}
		if en.database {
			en.dsn = pgtest.NewDatabase(t)
			opts.PostgresURL = en.dsn
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			en.e, errs[i] = camundatest.Start(ctx, opts)
		}()
	}
	wg.Wait()
	for i, en := range engines {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if en.name != "e724" {
			t.Cleanup(en.e.Stop)
		}
		t.Logf("%s: %s %s at %s (started in %s)", en.name, en.flavor, en.e.Version, en.e.BaseURL, en.e.StartupTime.Round(time.Second))
	}

	var cfg strings.Builder
	cfg.WriteString("camunda:\n")
	for _, en := range engines {
		fmt.Fprintf(&cfg, "  - {name: %s, url: %q, min_interval: 1s}\n", en.name, en.e.BaseURL)
		if en.database {
			fmt.Fprintf(&cfg, "  - {name: %sdb, url: %q, min_interval: 1s, database: {dsn: %q}}\n", en.name, en.e.BaseURL, en.dsn)
		}
	}
	exporterAddr := exportertest.Start(t, exportertest.Options{Config: cfg.String()}).Addr

	// The shipped rules with the age at 20s, the window at its 1m minimum
	// (for rules written for a 15s poll) and no for: delay.
	stacks := promtest.StartAlertingEach(t, promtest.AlertingOptions{
		Rules: promtest.GenerateRules(t, "camunda: {backlog_stalled_age: 20s, backlog_stalled_window: 1m, backlog_stalled_for: 0s, waiting_age_missing_for: 10s}\n"+
			"exporter: {min_interval: 15s}\n"),
		Target: exporterAddr,
	})

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var work sync.WaitGroup
	defer work.Wait()
	defer cancel()
	stalled := time.Now()
	for _, en := range engines {
		c := en.e.Client()
		for _, topic := range []string{stalledTopic, servedTopic} {
			key := processOf(topic)
			if _, err := c.Deploy(ctx, key, map[string][]byte{key + ".bpmn": engineclient.ExternalTaskProcess(key, topic)}); err != nil {
				t.Fatal(err)
			}
		}
		// Two tasks nobody fetches.
		for range 2 {
			if _, err := c.StartProcess(ctx, processOf(stalledTopic), "", nil); err != nil {
				t.Fatal(err)
			}
		}
		// A topic whose worker keeps up: a task every 2 s, completed.
		work.Add(1)
		go func() {
			defer work.Done()
			w := engineclient.NewWorker(c, "served-worker")
			for ctx.Err() == nil {
				if _, err := c.StartProcess(ctx, processOf(servedTopic), "", nil); err != nil && ctx.Err() == nil {
					t.Errorf("%s: start: %v", en.name, err)
					return
				}
				tasks, err := w.FetchAndLock(ctx, servedTopic, time.Minute, 10)
				for _, tk := range tasks {
					if err := w.Complete(ctx, tk.ID, nil); err != nil && ctx.Err() == nil {
						t.Errorf("%s: complete: %v", en.name, err)
						return
					}
				}
				if err != nil && ctx.Err() == nil {
					t.Errorf("%s: fetch: %v", en.name, err)
					return
				}
				select {
				case <-ctx.Done():
				case <-time.After(2 * time.Second):
				}
			}
		}()
	}

	want := map[string]bool{}
	for _, en := range engines {
		want[en.name] = true
		if en.database {
			want[en.name+"db"] = true
		}
	}
	promtest.Each(t, stacks, func(t *testing.T, a *promtest.Alerting) {
		paged := map[string]time.Time{}
		for time.Since(stalled) < 4*time.Minute && len(paged) < len(want) && !a.Exited() {
			time.Sleep(500 * time.Millisecond)
			for _, n := range a.Receiver.Notifications() {
				if n.Receiver == "pager" && n.Status == "firing" && n.Labels["alertname"] == "CamundaExternalTaskBacklogStalled" && n.Labels["topic"] == stalledTopic {
					if _, seen := paged[n.Labels["engine"]]; !seen {
						paged[n.Labels["engine"]] = n.At
					}
				}
			}
		}
		for name := range want {
			at, ok := paged[name]
			if !ok {
				t.Errorf("engine %s: no CamundaExternalTaskBacklogStalled page for the stalled topic within 4m; notifications: %+v", name, a.Receiver.Notifications())
				continue
			}
			took := at.Sub(stalled)
			t.Logf("engine %s: paged %s after the tasks were started (age threshold 20s, for 0s, pager group_wait 10s)", name, took.Round(time.Second))
			if took < 20*time.Second {
				t.Errorf("engine %s: paged %s after the tasks were started, before they could be 20s old: the rule fires on something else", name, took)
			}
		}
		for _, n := range a.Receiver.Notifications() {
			switch {
			case n.Status != "firing", n.Labels["alertname"] == "WorkflowExporterWatchdog":
			case n.Labels["topic"] == servedTopic:
				t.Errorf("a notification for the topic whose worker keeps up: %+v", n)
			case n.Labels["alertname"] == "CamundaExternalTaskWaitingAgeMissing":
				t.Errorf("the oldest waiting age was missing, a page blind: %+v", n)
			}
		}
	})
}
