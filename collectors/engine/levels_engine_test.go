//go:build !pgonly

package engine_test

// Real-engine tests of the history levels (docs/camunda-states.md, "History
// levels"): one engine per level, each on a PostgreSQL database of its own
// (an engine records its level at its first start and refuses another one
// later), read in REST and engine-database mode side by side, where every
// camunda_* series must be identical. Each level runs the same scenario:
// tasks completed and failed under the collections' eyes, then a burst of
// tasks created and ended (completed, BPMN errors caught and uncaught, a
// cancellation) entirely between two collections, an async job executed by
// hand, a worker holding a lock; then the REST request budget of a steady
// collection at that level.

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/config"
	"github.com/workflow-exporter/workflow-exporter/internal/sources"
	"github.com/workflow-exporter/workflow-exporter/sim/engineclient"
	"github.com/workflow-exporter/workflow-exporter/test/harness/camundatest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

func TestCamundaHistoryLevels(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a JVM per history level")
	}
	t.Parallel()
	// Camunda at every level; Operaton at audit (the common choice below
	// full on busy engines). Run one after the other: each is a JVM.
	levels := []struct {
		flavor camundatest.Flavor
		level  string
	}{
		{camundatest.FlavorCamunda, "none"},
		{camundatest.FlavorCamunda, "activity"},
		{camundatest.FlavorCamunda, "audit"},
		{camundatest.FlavorCamunda, "full"},
		{camundatest.FlavorOperaton, "audit"},
	}
	for _, lv := range levels {
		if !flavorWanted(lv.flavor) {
			continue
		}
		t.Run(string(lv.flavor)+"/"+lv.level, func(t *testing.T) {
			start := time.Now()
			u := engineUnderTest{dbURL: pgtest.NewDatabase(t), tzName: engineTimeZone}
			u.e = startCamundaEngine(t, camundatest.Options{Flavor: lv.flavor, PostgresURL: u.dbURL, TimeZone: engineTimeZone,
				HistoryLevel: lv.level, ExtraArgs: []string{"--" + lv.flavor.PropertyPrefix() + ".job-execution.enabled=false"}})
			levelScenario(t, u, lv.level)
			levelCheck(t, u, lv.level)
			levelRequestBudget(t, u, lv.level)
			t.Logf("%s at %s: %s", lv.flavor, lv.level, time.Since(start).Round(100*time.Millisecond))
		})
	}
}

// flavorWanted: CAMUNDATEST_FLAVORS (camundatest.Flavors) includes the
// flavor.
func flavorWanted(f camundatest.Flavor) bool {
	for _, w := range camundatest.Flavors() {
		if w == f {
			return true
		}
	}
	return false
}

// levelScenario runs the scenario on an engine at level (none, activity,
// audit, full) and checks the exact values each level supports and the
// absence of the series it cannot.
func levelScenario(t *testing.T, u engineUnderTest, level string) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c := u.e.Client()
	key := camundatest.UniqueName(t.Name())
	topic := key + ".topic"
	async := key + "_async"
	ok := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err := c.Deploy(ctx, key, map[string][]byte{key + ".bpmn": engineclient.ErrorProcess(key, topic, key+"_interrupt")})
	ok(err)
	_, err = c.Deploy(ctx, async, map[string][]byte{async + ".bpmn": engineclient.AsyncProcess(async)})
	ok(err)
	start := func(n int) {
		t.Helper()
		for i := 0; i < n; i++ {
			_, err := c.StartProcess(ctx, key, "", map[string]any{"order": i})
			ok(err)
		}
	}
	// An exporter that starts on the fresh engine, before anything ran:
	// over REST nothing tells the level yet (unknown, read as none); it
	// learns the level as the history grows (checked at the end).
	early := newCamundaExporterWith(t, camundaConfig(u.e.BaseURL, "", ""), false)
	early.collect()
	if v, found := early.get(catalog.CamundaEngineInfo, map[string]string{"history_level": "unknown"}); !found || v != 1 {
		t.Errorf("on a fresh engine over REST: camunda_engine_info %v, want history_level unknown", early.samples(catalog.CamundaEngineInfo))
	}
	// Before the exporters start, the engine's history holds what its level
	// writes of one running process instance with a variable: the evidence
	// the REST mode reads the level from (none: an open task without an
	// activity instance; activity: an activity instance; audit: a variable
	// instance; full: an external task log entry).
	start(1)

	w := engineclient.NewWorker(c, "w1")
	fetch := func(n int, lock time.Duration) []engineclient.ExternalTask {
		t.Helper()
		tasks, err := w.FetchAndLock(ctx, topic, lock, n)
		ok(err)
		if len(tasks) != n {
			t.Fatalf("fetched %d tasks, want %d", len(tasks), n)
		}
		return tasks
	}
	// The history growth is read at every collection here (its interval
	// is 10m by default).
	every := "    history_cleanup: {interval: 1ms}\n"
	rest := newCamundaExporter(t, camundaConfig(u.e.BaseURL, topic, every))
	rest.twin = newCamundaExporter(t, camundaConfig(u.e.BaseURL, topic, every+u.databaseConfig()))
	// The engine is this test's alone: every series but the two one mode
	// alone has (the table sizes in engine-database mode, the cleanup's
	// switch over REST).
	rest.twinOwns = func(name string, _ map[string]string) bool {
		return name != catalog.CamundaEngineTableBytes && name != catalog.CamundaHistoryCleanupEnabled
	}
	rest.collect() // baseline
	info := map[string]string{"engine": "e1", "history_level": level}
	if v, found := rest.get(catalog.CamundaEngineInfo, info); !found || v != 1 {
		t.Fatalf("camunda_engine_info%v absent; served: %v", info, rest.samples(catalog.CamundaEngineInfo))
	}
	labels := map[string]string{"engine": "e1", "topic": topic}

	// Under the collections' eyes: three tasks locked, then two completed
	// and one failed (retry timeout 0: at once fetchable again).
	fetch(1, time.Minute) // the warm-up task
	start(2)
	tks := fetch(2, time.Minute)
	rest.collect()
	ok(w.Complete(ctx, tks[0].ID, nil))
	ok(w.Complete(ctx, tks[1].ID, nil))
	warm, err := c.ExternalTasks(ctx, url.Values{"topicName": {topic}, "workerId": {"w1"}})
	ok(err)
	if len(warm) != 1 {
		t.Fatalf("engine: %d tasks of w1 left, want 1", len(warm))
	}
	ok(w.Failure(ctx, warm[0].ID, 2, 0, "boom"))
	rest.collect()
	completions, failures, bpmnErrors, ended := 2.0, 1.0, 0.0, 2.0

	// The burst, between two collections: five tasks created, fetched and
	// ended (three completed, the failed one among them, one uncaught BPMN
	// error, one caught), one process instance cancelled with its task
	// open, and the failed task fetched again and completed.
	start(5)
	burst := fetch(6, time.Minute) // the five and the failed one
	pis := map[string]bool{}
	for i, tk := range burst {
		switch {
		case tk.ID == warm[0].ID, i < 3:
			ok(w.Complete(ctx, tk.ID, nil))
			completions++
		case !pis["uncaught"]:
			pis["uncaught"] = true
			ok(w.BpmnError(ctx, tk.ID, "NOT_MODELLED", "no boundary event catches this"))
			bpmnErrors++
		case !pis["caught"]:
			pis["caught"] = true
			ok(w.BpmnError(ctx, tk.ID, "CAUGHT", "rejected"))
			bpmnErrors++
		default:
			ok(w.Complete(ctx, tk.ID, nil))
			completions++
		}
	}
	if completions != 6 || bpmnErrors != 2 {
		t.Fatalf("the burst ended %v completions and %v BPMN errors, want 6 and 2", completions, bpmnErrors)
	}
	cancelled, err := c.StartProcess(ctx, key, "", nil)
	ok(err)
	ok(c.Do(ctx, http.MethodDelete, "/process-instance/"+cancelled.ID, nil, nil))
	ended++ // the failed task, listed (lapsed) before and gone now; the burst's tasks were never seen
	// An async continuation, executed by hand (the job executor is off).
	_, err = c.StartProcess(ctx, async, "", map[string]any{"fail": false})
	ok(err)
	var jobs []struct{ ID string }
	ok(c.Get(ctx, "/job", url.Values{"processDefinitionKey": {async}, "maxResults": {"10"}}, &jobs))
	if len(jobs) != 1 {
		t.Fatalf("engine: %d jobs, want 1", len(jobs))
	}
	ok(c.Do(ctx, http.MethodPost, "/job/"+jobs[0].ID+"/execute", nil, nil))
	// A worker holds a lock at the collection.
	start(1)
	fetch(1, time.Minute)
	rest.collect()
	rest.collect() // read again: nothing twice

	want := func(name string, v float64) {
		t.Helper()
		if got, found := rest.get(name, labels); !found || got != v {
			t.Errorf("%s%v = %v (served %v), want %v", name, labels, got, found, v)
		}
	}
	absent := func(name string, l map[string]string) {
		t.Helper()
		if s, found := rest.get(name, l); found {
			t.Errorf("%s%v = %v at history level %s, want no series", name, l, s, level)
		}
	}
	want(catalog.CamundaExternalTasksEnded, ended)
	want(catalog.CamundaExternalTaskFailures, failures)
	levelTopicExpression(t, ctx, rest, c, key, level)
	jobKey := map[string]string{"engine": "e1", "process_definition_key": async}
	idle := map[string]string{"engine": "e1", "topic": topic, "worker_id": "w1"}
	switch level {
	case "none":
		for _, name := range []string{catalog.CamundaExternalTaskCompletions, catalog.CamundaExternalTaskBpmnErrors} {
			absent(name, labels)
		}
		if n := histogramOrNone(t, rest, catalog.CamundaExternalTaskDuration, labels); n >= 0 {
			t.Errorf("%s%v served at history level none", catalog.CamundaExternalTaskDuration, labels)
		}
	default:
		want(catalog.CamundaExternalTaskCompletions, completions)
		want(catalog.CamundaExternalTaskBpmnErrors, bpmnErrors)
		if n := histogramOrNone(t, rest, catalog.CamundaExternalTaskDuration, labels); n != int(completions) {
			t.Errorf("%s%v count %d, want %v", catalog.CamundaExternalTaskDuration, labels, n, completions)
		}
	}
	// The early exporter found the level, and reads the history growth
	// at once (not after history_cleanup.interval, 10m by default).
	early.collect()
	if v, found := early.get(catalog.CamundaEngineInfo, info); !found || v != 1 {
		t.Errorf("the exporter started on the fresh engine: camunda_engine_info %v, want history_level %s", early.samples(catalog.CamundaEngineInfo), level)
	}
	if _, found := early.get(catalog.CamundaHistoryFinished, map[string]string{"process_definition_key": key}); found != (level != "none") {
		t.Errorf("the exporter started on the fresh engine at %s: %s{process_definition_key=%s} served: %v", level, catalog.CamundaHistoryFinished, key, found)
	}
	// Finished process instances (the camunda_history collector): from
	// level activity on as many as the engine's own history counts; at
	// none absent.
	keyLabels := map[string]string{"engine": "e1", "process_definition_key": key}
	if level == "none" {
		absent(catalog.CamundaHistoryFinished, keyLabels)
		absent(catalog.CamundaHistoryCleanable, keyLabels)
	} else {
		n, err := c.Count(ctx, "/history/process-instance/count", url.Values{"processDefinitionKey": {key}, "finished": {"true"}})
		ok(err)
		if v, found := rest.get(catalog.CamundaHistoryFinished, keyLabels); !found || v != float64(n) || n == 0 {
			t.Errorf("%s%v = %v (served %v), want the engine's %d", catalog.CamundaHistoryFinished, keyLabels, v, found, n)
		}
	}
	if level == "full" {
		want(catalog.CamundaExternalTaskFailures, float64(engineLogCount(t, c, topic, "failureLog")))
		want(catalog.CamundaExternalTaskCompletions, float64(engineLogCount(t, c, topic, "successLog")))
		if _, found := rest.get(catalog.CamundaExternalTaskWorkerIdle, idle); !found {
			t.Errorf("%s%v absent at history level full", catalog.CamundaExternalTaskWorkerIdle, idle)
		}
		if v, found := rest.get(catalog.CamundaExternalTaskFailuresByError, labels); !found || v != failures {
			t.Errorf("%s%v = %v (served %v), want %v", catalog.CamundaExternalTaskFailuresByError, labels, v, found, failures)
		}
		if v, found := rest.get(catalog.CamundaJobSuccesses, jobKey); !found || v != 1 {
			t.Errorf("%s%v = %v (served %v), want 1", catalog.CamundaJobSuccesses, jobKey, v, found)
		}
	} else {
		absent(catalog.CamundaExternalTaskWorkerIdle, idle)
		absent(catalog.CamundaJobSuccesses, jobKey)
		absent(catalog.CamundaJobFailures, jobKey)
		absent(catalog.CamundaExternalTaskFailuresByError, labels)
		absent(catalog.CamundaJobFailuresByError, jobKey)
		if logs := rest.logs.String(); !strings.Contains(logs, "history level "+level) {
			t.Errorf("the log does not name history level %s:\n%s", level, logs)
		}
	}
}

// histogramOrNone is the count of a histogram series; -1 when it is not
// served.
func histogramOrNone(t *testing.T, e *camExporter, name string, labels map[string]string) int {
	t.Helper()
	for _, mf := range testkit.Gather(t, e.set) {
		if mf.GetName() == name {
			n, _, _ := histogram(t, e, name, labels)
			return int(n)
		}
	}
	return -1
}

// engineLogCount is the engine's own external task log count of the
// topic (history level full only).
func engineLogCount(t *testing.T, c *engineclient.Client, topic, kind string) int {
	t.Helper()
	n, err := c.Count(context.Background(), "/history/external-task-log/count", url.Values{"topicName": {topic}, kind: {"true"}})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// levelRequestBudget counts the history requests of a steady REST
// collection at a proxy (docs/camunda-states.md, "History levels"): the
// level's evidence probes and its stream, nothing else of the history.
func levelRequestBudget(t *testing.T, u engineUnderTest, level string) {
	p := startCountingProxy(t, u.e)
	x := newCamundaExporterWith(t, camundaConfig(p.URL, "", ""), false)
	x.collect()
	x.collect() // the process models are cached
	p.Counts()
	x.collect()
	got := p.Counts()
	want := map[string]map[string]int{
		// the stream (the external task log) proves full: no probe
		"full": {"/history/external-task-log": 1, "/history/activity-instance": 0, "/history/variable-instance": 0, "/history/job-log": 1},
		// the log probe, and the activity stream (one request per activity type)
		"audit": {"/history/external-task-log": 1, "/history/activity-instance": 1, "/history/variable-instance": 0, "/history/job-log": 0},
		// the log and variable probes, and the activity stream
		"activity": {"/history/external-task-log": 1, "/history/activity-instance": 1, "/history/variable-instance": 1, "/history/job-log": 0},
		// the log and activity probes; no stream
		"none": {"/history/external-task-log": 1, "/history/activity-instance": 1, "/history/variable-instance": 0, "/history/job-log": 0},
	}[level]
	for path, n := range want {
		if got[path] != n {
			t.Errorf("history level %s: %s: %d requests, want %d (all: %v)", level, path, got[path], n, got)
		}
	}
	for path, n := range got {
		if strings.HasSuffix(path, "/xml") {
			t.Errorf("history level %s: %d requests of %s in a steady collection, want none (the models are cached)", level, n, path)
		}
	}
	t.Logf("history level %s: a steady collection made %v", level, got)
}

// levelCheck runs `workflow-exporter check` (RunCheck) on the engine at
// level, in both modes, and with a configured level that differs from the
// engine's: it names the level, where it came from and what each metric is
// at that level, warns below full (over REST naming the missing
// READ_HISTORY as the other explanation of an empty history), and warns
// when the configured level is not the engine's. Then the precedence as the
// collections apply it: the configured level wins over the engine's; in
// engine-database mode through the role of
// deploy/sql/camunda/002_exporter_role.sql the engine's property gives the
// level, and without SELECT on act_ge_property the level is unknown while
// every collector stays up.
func levelCheck(t *testing.T, u engineUnderTest, level string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run := func(extra string) string {
		t.Helper()
		cfg, err := config.Parse([]byte(camundaConfig(u.e.BaseURL, "", extra)))
		if err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		sources.RunCheck(ctx, cfg, &out, nil)
		return out.String()
	}
	has := func(out, what, want string) {
		t.Helper()
		if !strings.Contains(out, want) {
			t.Errorf("check (%s) at history level %s does not say %q:\n%s", what, level, want, out)
		}
	}
	completions := map[string]string{"none": "absent", "activity": "exact", "audit": "exact", "full": "exact"}[level]
	for _, m := range []struct{ name, extra, from string }{
		{"REST", "", "(from the history the REST API shows)"},
		{"engine database", u.databaseConfig(), "(from the engine database's act_ge_property historyLevel)"},
	} {
		out := run(m.extra)
		t.Logf("check (%s) at history level %s:\n%s", m.name, level, out)
		has(out, m.name, "history level: "+level+" "+m.from)
		// The line of the completions' support names it.
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, catalog.CamundaExternalTaskCompletions) && !strings.HasPrefix(strings.TrimSpace(line), completions+":") {
				t.Errorf("check (%s) at history level %s: %q, want the completions %s", m.name, level, line, completions)
			}
		}
		if m.extra == "" {
			// The REST mode line names the history the level has.
			mode := map[string]string{"none": "no history is read at level none", "activity": "activity instance history by end time",
				"audit": "activity instance history by end time", "full": "history log sorted by timestamp"}[level]
			has(out, m.name, mode)
		}
		if level == "full" {
			if strings.Contains(out, "is below full") {
				t.Errorf("check (%s) warns of a level below full at full:\n%s", m.name, out)
			}
			continue
		}
		has(out, m.name, "WARNING history level "+level+" is below full")
		if m.extra == "" {
			has(out, m.name, "READ_HISTORY")
		}
	}
	other := map[string]string{"none": "full", "activity": "full", "audit": "activity", "full": "audit"}[level]
	out := run("    history_level: " + other + "\n" + u.databaseConfig())
	has(out, "configured", "history level: "+other+" (from camunda[0].history_level)")
	has(out, "configured", "WARNING history_level is "+other+", but the engine is at "+level)

	info := func(x *camExporter, want string) {
		t.Helper()
		x.collect()
		l := map[string]string{"engine": "e1", "history_level": want}
		if v, found := x.get(catalog.CamundaEngineInfo, l); !found || v != 1 {
			t.Errorf("camunda_engine_info%v absent on an engine at %s; served: %v; log:\n%s", l, level, x.samples(catalog.CamundaEngineInfo), x.logs)
		}
		for _, c := range []string{"camunda", "camunda_jobs", "camunda_processes"} {
			if v, _ := x.get(catalog.ExporterCollectorUp, map[string]string{"collector": c}); v != 1 {
				t.Errorf("collector %s up = %v; log:\n%s", c, v, x.logs)
			}
		}
	}
	info(newCamundaExporterWith(t, camundaConfig(u.e.BaseURL, "", "    history_level: "+other+"\n"), false), other)
	if level != "audit" {
		return
	}
	conn := pgtest.Connect(t, u.dbURL)
	roleSQL, err := os.ReadFile(testkit.Path(t, "deploy/sql/camunda/002_exporter_role.sql"))
	if err != nil {
		t.Fatal(err)
	}
	role := "wfx_levels_" + strings.ToLower(string(u.e.Flavor))
	if _, err := conn.Exec(ctx, strings.NewReplacer("workflow_exporter_engine", role, "change-me", "s3cret").Replace(string(roleSQL))); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = conn.Exec(context.Background(), "DROP OWNED BY "+role+"; DROP ROLE "+role) })
	roleURL, err := url.Parse(u.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	roleURL.User = url.UserPassword(role, "s3cret")
	asRole := strings.Replace(u.databaseConfig(), u.dbURL, roleURL.String(), 1)
	info(newCamundaExporterWith(t, camundaConfig(u.e.BaseURL, "", asRole), false), level)
	if _, err := conn.Exec(ctx, "REVOKE SELECT ON "+"act_ge_property FROM "+role); err != nil {
		t.Fatal(err)
	}
	info(newCamundaExporterWith(t, camundaConfig(u.e.BaseURL, "", asRole), false), "unknown")
	out = run(asRole)
	has(out, "without SELECT on act_ge_property", "history level: unknown")
	has(out, "without SELECT on act_ge_property", "GRANT SELECT ON act_ge_property")
	t.Logf("check without SELECT on act_ge_property:\n%s", out)
}

// levelTopicExpression: a task whose topic is an expression
// (camunda:topic="${dyn}"). Below full the activity instance history names
// the element, not the topic: a task a collection listed (in flight:
// locked) counts under the topic it was listed with, one created and completed between two
// collections under topic="unattributed". At full the log names the topic
// of both. ended_total counts the listed one at every level.
func levelTopicExpression(t *testing.T, ctx context.Context, x *camExporter, c *engineclient.Client, key, level string) {
	t.Helper()
	expr := key + "_expr"
	dyn := key + ".dyn"
	if _, err := c.Deploy(ctx, expr, map[string][]byte{expr + ".bpmn": engineclient.ExternalTaskProcess(expr, "${dyn}")}); err != nil {
		t.Fatal(err)
	}
	w := engineclient.NewWorker(c, "w2")
	one := func() {
		t.Helper()
		if _, err := c.StartProcess(ctx, expr, "", map[string]any{"dyn": dyn}); err != nil {
			t.Fatal(err)
		}
	}
	fetch := func() string {
		t.Helper()
		tasks, err := w.FetchAndLock(ctx, dyn, time.Minute, 1)
		if err != nil || len(tasks) != 1 {
			t.Fatalf("fetched %d tasks of %s (%v), want 1", len(tasks), dyn, err)
		}
		return tasks[0].ID
	}
	complete := func(id string) {
		t.Helper()
		if err := w.Complete(ctx, id, nil); err != nil {
			t.Fatal(err)
		}
	}
	one()
	listed := fetch()
	x.collect() // lists the locked task with its resolved topic
	complete(listed)
	one()
	complete(fetch()) // created and completed between two collections
	x.collect()
	x.collect()
	seen := map[string]string{"engine": "e1", "topic": dyn}
	unattributed := map[string]string{"engine": "e1", "topic": "unattributed"}
	get := func(l map[string]string) string {
		v, found := x.get(catalog.CamundaExternalTaskCompletions, l)
		if !found {
			return "absent"
		}
		return fmt.Sprint(v)
	}
	// completions by the listed topic and by unattributed
	want := map[string][2]string{"none": {"absent", "absent"}, "activity": {"1", "1"}, "audit": {"1", "1"}, "full": {"2", "absent"}}[level]
	wantSeen, wantUnattributed := want[0], want[1]
	if got := get(seen); got != wantSeen {
		t.Errorf("at %s: %s%v = %s, want %s", level, catalog.CamundaExternalTaskCompletions, seen, got, wantSeen)
	}
	if got := get(unattributed); got != wantUnattributed {
		t.Errorf("at %s: %s%v = %s, want %s", level, catalog.CamundaExternalTaskCompletions, unattributed, got, wantUnattributed)
	}
	if v, found := x.get(catalog.CamundaExternalTasksEnded, seen); !found || v != 1 {
		t.Errorf("at %s: %s%v = %v (served %v), want 1", level, catalog.CamundaExternalTasksEnded, seen, v, found)
	}
}
