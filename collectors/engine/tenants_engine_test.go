//go:build !pgonly

package engine_test

import (
	"context"
	"maps"
	"net/url"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/sim/engineclient"
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
	bpmn := map[string][]byte{key + ".bpmn": engineclient.ExternalTaskProcess(key, topic)}
	started := map[string]int{"acme": 3, "globex": 2, "": 1}
	for tenant, n := range started {
		if _, err := c.DeployForTenant(ctx, key, tenant, bpmn); err != nil {
			t.Fatal(err)
		}
		for range n {
			if _, err := c.StartProcessForTenant(ctx, key, tenant, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Async jobs (the job executor is off: they stay executable) for acme
	// and without a tenant.
	jobKey := key + "_async"
	for _, tenant := range []string{"acme", ""} {
		if _, err := c.DeployForTenant(ctx, jobKey, tenant, map[string][]byte{jobKey + ".bpmn": engineclient.AsyncProcess(jobKey)}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.StartProcessForTenant(ctx, jobKey, tenant, map[string]any{"fail": false}); err != nil {
			t.Fatal(err)
		}
	}
	modes := map[string]string{"REST": "", "engine database": u.databaseConfig()}
	exporters := map[string]*camExporter{}
	for mode, extra := range modes {
		exporters[mode] = newCamundaExporter(t, camundaConfig(u.e.BaseURL, topic,
			u.creds+extra+"    tenant_label: true\n    history_cleanup:\n      interval: 1ms\n"))
	}
	plain := newCamundaExporter(t, camundaConfig(u.e.BaseURL, topic, u.creds))
	for _, x := range exporters {
		x.collect()
	}
	plain.collect()

	// A worker locks every task; acme's and the tenantless one's complete
	// two and one of them.
	w := engineclient.NewWorker(c, "w1")
	tasks, err := w.FetchAndLock(ctx, topic, 5*time.Minute, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 6 {
		t.Fatalf("fetched %d tasks, want 6", len(tasks))
	}
	// acme's and the tenantless one's complete two and one of them (their
	// process instances end); one of globex's fails out of retries (an
	// incident).
	completed := map[string]int{"acme": 2, "": 1}
	done, failedGlobex := map[string]int{}, false
	for _, tk := range tasks {
		tenant := ""
		if tk.TenantID != nil {
			tenant = *tk.TenantID
		}
		switch {
		case done[tenant] < completed[tenant]:
			if err := w.Complete(ctx, tk.ID, nil); err != nil {
				t.Fatal(err)
			}
			done[tenant]++
		case tenant == "globex" && !failedGlobex:
			if err := w.Failure(ctx, tk.ID, 0, 0, "globex gateway down"); err != nil {
				t.Fatal(err)
			}
			failedGlobex = true
		}
	}
	// Then one more task waits for acme and one without a tenant: the
	// oldest waiting task of the tasks without a tenant is one the REST
	// API cannot select (rest/tenants.go).
	for _, tenant := range []string{"acme", ""} {
		if _, err := c.StartProcessForTenant(ctx, key, tenant, nil); err != nil {
			t.Fatal(err)
		}
	}
	waiting := map[string]float64{"acme": 1, "globex": 0, "": 1}
	// Over REST the engine's clock is the Date header, truncated to the
	// second: past it, the new tasks' ages are above 0.
	time.Sleep(pastDateLag)
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
			if tenant == "globex" {
				wantLocked-- // out of retries
			}
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
		// The series per process definition key: running instances per
		// tenant (the task process: started less completed, plus the
		// waiting ones; the async one), finished ones, executable jobs,
		// the incident.
		perKey := []struct {
			name, key, tenant string
			want              float64
		}{
			{catalog.CamundaProcessInstances, key, "acme", 2}, {catalog.CamundaProcessInstances, key, "globex", 2},
			{catalog.CamundaProcessInstances, key, "", 1},
			{catalog.CamundaProcessInstances, jobKey, "acme", 1}, {catalog.CamundaProcessInstances, jobKey, "", 1},
			{catalog.CamundaHistoryFinished, key, "acme", 2}, {catalog.CamundaHistoryFinished, key, "", 1},
			{catalog.CamundaJobsExecutable, jobKey, "acme", 1}, {catalog.CamundaJobsExecutable, jobKey, "", 1},
		}
		for _, pk := range perKey {
			got, ok := x.get(pk.name, map[string]string{catalog.TenantLabel: pk.tenant, "process_definition_key": pk.key})
			if !ok || got != pk.want {
				t.Errorf("%s: %s{tenant=%q, process_definition_key=%s} = %v (served %v), want %v", mode, pk.name, pk.tenant, pk.key, got, ok, pk.want)
			}
		}
		if got, _ := x.get(catalog.CamundaIncidents, map[string]string{catalog.TenantLabel: "globex", "process_definition_key": key}); got != 1 {
			t.Errorf("%s: %v incidents of globex, want 1", mode, got)
		}
		if got, ok := x.get(catalog.CamundaIncidents, map[string]string{catalog.TenantLabel: "acme", "process_definition_key": key}); ok && got != 0 {
			t.Errorf("%s: %v incidents of acme, want none", mode, got)
		}
		// The status page names the tenant of the task out of retries and
		// of the locked ones.
		lists := x.statusLists()
		tenantsOf := func(kind string) map[string]int {
			out := map[string]int{}
			for _, it := range lists[kind].Items {
				if it.Topic == topic {
					out[it.Tenant]++
				}
			}
			return out
		}
		if got := tenantsOf(vocab.KindRetriesExhausted); !maps.Equal(got, map[string]int{"globex": 1}) {
			t.Errorf("%s: the status page's tasks out of retries by tenant: %v, want globex 1", mode, got)
		}
		groups := map[string]int{}
		for _, it := range lists[vocab.KindIncidentGroups].Items {
			if it.ProcessDefinitionKey == key {
				groups[it.Tenant] += it.Count
			}
		}
		if !maps.Equal(groups, map[string]int{"globex": 1}) {
			t.Errorf("%s: the status page's incident groups of %s by tenant: %v, want globex 1", mode, key, groups)
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
