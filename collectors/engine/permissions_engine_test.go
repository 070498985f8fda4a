//go:build !pgonly

package engine_test

import (
	"bytes"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/config"
	"github.com/workflow-exporter/workflow-exporter/internal/sources"
	"github.com/workflow-exporter/workflow-exporter/sim/engineclient"
	"github.com/workflow-exporter/workflow-exporter/test/harness/camundatest"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// TestCamundaPermissions: on an engine with authorization on, a monitoring
// user without READ_HISTORY would read a worker's completions as 0 (the REST
// API filters silently). The collectors that need the grant fail naming it,
// the one that does not stays up, `check` names the missing grant per
// collector; once granted, the next collection is up and counts the
// completions.
func TestCamundaPermissions(t *testing.T) {
	flavor := camundatest.FlavorCamunda
	e := startCamundaEngine(t, camundatest.Options{Flavor: flavor, Username: engineUser, Password: enginePassword,
		ExtraArgs: []string{"--" + flavor.PropertyPrefix() + ".job-execution.enabled=false", "--" + flavor.PropertyPrefix() + ".authorization.enabled=true"}})
	ctx := t.Context()
	admin := e.Client()
	key := camundatest.UniqueName(t.Name())
	topic := key + ".topic"
	startTasks(t, ctx, admin, key, topic, 3)
	// The monitoring user: READ on every process definition and process
	// instance, no READ_HISTORY.
	const user, password = "monitor", "Mon1tor-s3cret"
	ok := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	ok(admin.Do(ctx, http.MethodPost, "/user/create", map[string]any{
		"profile":     map[string]any{"id": user, "firstName": "Mon", "lastName": "Itor", "email": "monitor@example.com"},
		"credentials": map[string]any{"password": password}}, nil))
	allow := func(resourceType int, permissions ...string) {
		t.Helper()
		ok(admin.Do(ctx, http.MethodPost, "/authorization/create", map[string]any{"type": 1, "permissions": permissions,
			"userId": user, "resourceType": resourceType, "resourceId": "*"}, nil))
	}
	allow(6, "READ")
	allow(8, "READ")

	file := filepath.Join(t.TempDir(), "monitor-password")
	ok(os.WriteFile(file, []byte(password), 0o600))
	cfgText := camundaConfig(e.BaseURL, topic, "    username: "+user+"\n    password_file: "+file+"\n")
	x := newCamundaExporter(t, cfgText)
	x.collect()
	up := func(c string) float64 {
		t.Helper()
		v, _ := x.get(catalog.ExporterCollectorUp, map[string]string{"collector": c})
		return v
	}
	if v, _ := x.get(catalog.CamundaUp, nil); v != 1 {
		t.Fatalf("camunda_up = %v; log:\n%s", v, x.logs)
	}
	for c, want := range map[string]float64{vocab.CollectorCamunda: 0, vocab.CollectorCamundaJobs: 0, vocab.CollectorCamundaHistory: 0, vocab.CollectorCamundaProcesses: 1} {
		if got := up(c); got != want {
			t.Errorf("without READ_HISTORY: collector %s up = %v, want %v; log:\n%s", c, got, want, x.logs)
		}
	}
	if _, found := x.get(catalog.CamundaExternalTaskCompletions, map[string]string{"topic": topic}); found {
		t.Errorf("without READ_HISTORY: camunda_external_task_completions_total served (a zero that means nothing)")
	}
	if logs := x.logs.String(); !strings.Contains(logs, "permission missing (READ_HISTORY on PROCESS_DEFINITION") {
		t.Errorf("the log does not name the missing grant:\n%s", logs)
	}

	// check names it per collector.
	cfg, err := config.Parse([]byte(cfgText))
	ok(err)
	var out bytes.Buffer
	rep := sources.RunCheck(ctx, cfg, &out, nil)
	for _, want := range []string{
		`ERROR collector camunda: the user "monitor" lacks READ_HISTORY on PROCESS_DEFINITION`,
		`ERROR collector camunda_jobs: the user "monitor" lacks READ_HISTORY on PROCESS_DEFINITION`,
		`ERROR collector camunda_history: the user "monitor" lacks READ_HISTORY on PROCESS_DEFINITION`,
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("check does not say %q:\n%s", want, out.String())
		}
	}
	if rep.Errors < 3 || strings.Contains(out.String(), "collector camunda_processes") {
		t.Errorf("check: %d errors, want 3 (camunda_processes needs no READ_HISTORY):\n%s", rep.Errors, out.String())
	}
	if !strings.Contains(out.String(), "tenants: not checked (listing them needs READ on TENANT)") {
		t.Errorf("check without READ on TENANT does not say the tenants were not checked:\n%s", out.String())
	}

	// Granted: the next collection is up (a baseline), and completions
	// after it count.
	// One authorization per user and resource: the definitions' one gains
	// READ_HISTORY.
	var auths []struct{ ID string }
	ok(admin.Get(ctx, "/authorization", url.Values{"userIdIn": {user}, "resourceType": {"6"}}, &auths))
	if len(auths) != 1 {
		t.Fatalf("engine: %d authorizations of %s on process definitions, want 1", len(auths), user)
	}
	ok(admin.Do(ctx, http.MethodPut, "/authorization/"+auths[0].ID, map[string]any{"permissions": []string{"READ", "READ_HISTORY"},
		"userId": user, "resourceType": 6, "resourceId": "*"}, nil))
	x.collect()
	for _, c := range []string{vocab.CollectorCamunda, vocab.CollectorCamundaJobs, vocab.CollectorCamundaHistory, vocab.CollectorCamundaProcesses} {
		if got := up(c); got != 1 {
			t.Errorf("with READ_HISTORY: collector %s up = %v; log:\n%s", c, got, x.logs)
		}
	}
	w := engineclient.NewWorker(admin, "w1")
	tasks, err := w.FetchAndLock(ctx, topic, time.Minute, 2)
	ok(err)
	for _, tk := range tasks {
		ok(w.Complete(ctx, tk.ID, nil))
	}
	x.collect()
	if got := x.must(catalog.CamundaExternalTaskCompletions, map[string]string{"topic": topic}); got != 2 || len(tasks) != 2 {
		t.Errorf("with READ_HISTORY: completions %v, want %d", got, len(tasks))
	}
	out.Reset()
	sources.RunCheck(ctx, cfg, &out, nil)
	if !strings.Contains(out.String(), `permissions of "monitor": every grant the collectors need is held`) {
		t.Errorf("check after the grant:\n%s", out.String())
	}

	// Tenants: the monitoring user, a member of acme only, does not see
	// the task of globex's instance (the engine's tenant check, on by
	// default, filters silently); check names globex. A member of both,
	// the user sees it.
	for _, tenant := range []string{"acme", "globex"} {
		ok(admin.Do(ctx, http.MethodPost, "/tenant/create", map[string]any{"id": tenant, "name": tenant}, nil))
	}
	ok(admin.Do(ctx, http.MethodPut, "/tenant/acme/user-members/"+user, nil, nil))
	allow(2, "READ")
	_, err = admin.DeployForTenant(ctx, key, "globex", map[string][]byte{key + ".bpmn": engineclient.ExternalTaskProcess(key, topic)})
	ok(err)
	_, err = admin.StartProcessForTenant(ctx, key, "globex", nil)
	ok(err)
	open := func() float64 {
		t.Helper()
		x.collect()
		var n float64
		for _, s := range vocab.ExternalTaskStates() {
			n += x.must(catalog.CamundaExternalTasks, map[string]string{"topic": topic, "state": s})
		}
		return n
	}
	engineOpen, err := admin.Count(ctx, "/external-task/count", url.Values{"topicName": {topic}})
	ok(err)
	if got := open(); engineOpen != 2 || got != 1 {
		t.Errorf("member of acme only: %v open tasks read, the engine holds %d; want 1 of 2 (globex's is filtered)", got, engineOpen)
	}
	// The engine lists globex to the user neither (it holds READ on every
	// tenant): check names the membership it has.
	out.Reset()
	sources.RunCheck(ctx, cfg, &out, nil)
	if want := `tenants: "monitor" is a member of tenant acme; with the engine's tenant check on`; !strings.Contains(out.String(), want) {
		t.Errorf("check does not say %q:\n%s", want, out.String())
	}
	ok(admin.Do(ctx, http.MethodPut, "/tenant/globex/user-members/"+user, nil, nil))
	if got := open(); got != 2 {
		t.Errorf("member of both tenants: %v open tasks read, want 2", got)
	}
	out.Reset()
	sources.RunCheck(ctx, cfg, &out, nil)
	if want := `tenants: "monitor" is a member of tenant acme, globex;`; !strings.Contains(out.String(), want) {
		t.Errorf("check does not say %q:\n%s", want, out.String())
	}
}
