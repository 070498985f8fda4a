//go:build !pgonly

package sources

import (
	"context"
	"maps"
	"net/url"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/test/harness/camundatest"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// engineTenants: two tenants and tasks without a tenant share one topic
// (one process key deployed three times). With tenant_label on, the
// per-topic series carry the tenant: each tenant's states and completions
// are its own, as the engine counts them per tenant, and they add up to
// what an exporter without the label serves.
func engineTenants(t *testing.T, u engineUnderTest) {
	ctx := t.Context()
	c := u.e.Client()
	key := camundatest.UniqueName(t.Name())
	topic := key + ".topic"
	bpmn := map[string][]byte{key + ".bpmn": camundatest.ExternalTaskProcess(key, topic)}
	started := map[string]int{"acme": 3, "globex": 2, "": 1}
	for tenant, n := range started {
		if _, err := c.DeployForTenant(ctx, key, tenant, bpmn); err != nil {
			t.Fatal(err)
		}
		for range n {
			var err error
			if tenant == "" {
				_, err = c.StartProcess(ctx, key, "", nil)
			} else {
				_, err = c.StartProcessForTenant(ctx, key, tenant)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	modes := map[string]string{"REST": "", "engine database": u.databaseConfig()}
	exporters := map[string]*camExporter{}
	for mode, extra := range modes {
		exporters[mode] = newCamundaExporter(t, camundaConfig(u.e.BaseURL, topic, u.creds+extra+"    tenant_label: true\n"))
	}
	plain := newCamundaExporter(t, camundaConfig(u.e.BaseURL, topic, u.creds))
	for _, x := range exporters {
		x.collect()
	}
	plain.collect()

	// A worker locks every task; acme's and the tenantless one's complete
	// two and one of them.
	w := camundatest.NewWorker(c, "w1")
	tasks, err := w.FetchAndLock(ctx, topic, 5*time.Minute, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 6 {
		t.Fatalf("fetched %d tasks, want 6", len(tasks))
	}
	completed := map[string]int{"acme": 2, "": 1}
	done := map[string]int{}
	for _, tk := range tasks {
		tenant := ""
		if tk.TenantID != nil {
			tenant = *tk.TenantID
		}
		if done[tenant] < completed[tenant] {
			if err := w.Complete(ctx, tk.ID, nil); err != nil {
				t.Fatal(err)
			}
			done[tenant]++
		}
	}
	// Then one more task waits for acme and one without a tenant: the
	// oldest waiting task of the tasks without a tenant is one the REST
	// API cannot select (rest_tenants.go).
	if _, err := c.StartProcessForTenant(ctx, key, "acme"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.StartProcess(ctx, key, "", nil); err != nil {
		t.Fatal(err)
	}
	waiting := map[string]float64{"acme": 1, "globex": 0, "": 1}
	// Over REST the engine's clock is the Date header, truncated to the
	// second: past it, the new tasks' ages are above 0.
	time.Sleep(1500 * time.Millisecond)
	for _, x := range exporters {
		x.collect()
	}
	plain.collect()

	for mode, x := range exporters {
		for tenant, want := range waiting {
			labels := map[string]string{catalog.TenantLabel: tenant, "topic": topic}
			if got := x.must(catalog.CamundaExternalTasks, map[string]string{catalog.TenantLabel: tenant, "topic": topic, "state": vocab.StateWaiting}); got != want {
				t.Errorf("%s: tenant %q: %v waiting, want %v", mode, tenant, got, want)
			}
			age, ok := x.get(catalog.CamundaExternalTaskOldestWaitingAge, labels)
			if !ok || (want > 0) != (age > 0) || age > 120 {
				t.Errorf("%s: tenant %q: oldest waiting age %v (served %v), want %s", mode, tenant, age, ok, map[bool]string{true: "above 0", false: "0"}[want > 0])
			}
		}
	}
	// Both modes serve the same states per tenant.
	states := func(x *camExporter) map[string]float64 {
		out := map[string]float64{}
		for _, s := range x.samples(catalog.CamundaExternalTasks) {
			if s.labels["topic"] == topic {
				out[s.labels[catalog.TenantLabel]+"/"+s.labels["state"]] = s.value
			}
		}
		return out
	}
	if rest, db := states(exporters["REST"]), states(exporters["engine database"]); !maps.Equal(rest, db) {
		t.Errorf("the modes differ:\nREST            %v\nengine database %v", rest, db)
	}

	for mode, x := range exporters {
		var sumLocked float64
		for tenant, n := range started {
			labels := func(kv ...string) map[string]string {
				m := map[string]string{catalog.TenantLabel: tenant, "topic": topic}
				for i := 0; i+1 < len(kv); i += 2 {
					m[kv[i]] = kv[i+1]
				}
				return m
			}
			wantLocked := float64(n - completed[tenant])
			if got := x.must(catalog.CamundaExternalTasks, labels("state", vocab.StateLocked)); got != wantLocked {
				t.Errorf("%s: tenant %q: %v locked, want %v", mode, tenant, got, wantLocked)
			}
			if got := x.must(catalog.CamundaExternalTaskCompletions, labels()); got != float64(completed[tenant]) {
				t.Errorf("%s: tenant %q: %v completions, want %d", mode, tenant, got, completed[tenant])
			}
			if got, _ := x.get(catalog.CamundaExternalTasksLockedByWorker, labels("worker_id", "w1")); got != wantLocked {
				t.Errorf("%s: tenant %q: %v locked by w1, want %v", mode, tenant, got, wantLocked)
			}
			if tenant != "" {
				q := url.Values{"topicName": {topic}, "tenantIdIn": {tenant}, "locked": {"true"}}
				n, err := c.Count(context.Background(), "/external-task/count", q)
				if err != nil {
					t.Fatal(err)
				}
				if float64(n) != wantLocked {
					t.Fatalf("the engine counts %d locked tasks of %s, the test expected %v", n, tenant, wantLocked)
				}
			}
			sumLocked += wantLocked
		}
		if got := plain.must(catalog.CamundaExternalTasks, map[string]string{"topic": topic, "state": vocab.StateLocked}); got != sumLocked {
			t.Errorf("without tenant_label: %v locked, want the tenants' sum %v", got, sumLocked)
		}
		for _, s := range plain.samples(catalog.CamundaExternalTasks) {
			if _, ok := s.labels[catalog.TenantLabel]; ok {
				t.Fatalf("without tenant_label a series carries a tenant label: %v", s.labels)
			}
		}
	}
}
