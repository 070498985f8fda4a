//go:build !pgonly

package reliability

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/workflow-exporter/workflow-exporter/blocks/failure"
	"github.com/workflow-exporter/workflow-exporter/sim/engineclient"
	"github.com/workflow-exporter/workflow-exporter/sim/faultproxy"
	"github.com/workflow-exporter/workflow-exporter/test/harness/camundatest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// engineWithTasks deploys a process on the shared engine, starts three
// instances and locks one task for ten minutes. It returns the topic and
// the locked task's id.
func engineWithTasks(t testing.TB, e *camundatest.Engine) (topic, lockedID string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := e.Client()
	key := camundatest.UniqueName(t.Name())
	topic = key + ".charge"
	if _, err := c.Deploy(ctx, key, map[string][]byte{key + ".bpmn": engineclient.ExternalTaskProcess(key, topic)}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, err := c.StartProcess(ctx, key, fmt.Sprintf("order-%d", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	tasks, err := engineclient.NewWorker(c, "worker-1").FetchAndLock(ctx, topic, 10*time.Minute, 1)
	if err != nil || len(tasks) != 1 {
		t.Fatalf("fetch and lock: %v, %v", tasks, err)
	}
	return topic, tasks[0].ID
}

// camundaConfig is the exporter's config for the engine behind the proxy
// (with basic auth and the proxy's CA) and for a database that joins with
// it.
func camundaConfig(p *faultproxy.Proxy, topic string, requestTimeout time.Duration) string {
	return fmt.Sprintf(`
camunda:
  - name: main
    url: %s
    username: exporter
    password_env: WFX_REL_CAMUNDA_PW
    tls: {ca_file: %s}
    min_interval: 1ms
    timeout: 15s
    request_timeout: %s
    topics: [%s]
databases:
  - name: orders
    dsn_env: WFX_REL_DSN
    min_interval: 1ms
    tables:
      idempotency: {camunda: {engine: main}}
      outbox: {}
`, p.URL, p.CAFile, model.Duration(requestTimeout), topic)
}

// camundaFault is a fault the proxy injects, the step and the failure
// class it must be logged with. A fault of every endpoint fails the probe
// (GET /version): the source is down and step is "connect"; a fault of one
// endpoint fails the collector that reads it (step), and the engine's other
// collectors keep reporting.
type camundaFault struct {
	name  string
	fault faultproxy.Fault
	step  string
	cause string
}

// down says the fault takes the whole engine down: the probe failed, or a
// collector lost its connection (class unreachable), which makes the
// source down at once whatever step met it.
func (c camundaFault) down() bool {
	return c.step == vocab.CollectorConnect || c.cause == failure.Unreachable
}

// gone are the series that must go while the fault lasts: those of the
// failed collector, or of every collector when the engine is down, and the
// join's, which must not report from an engine it cannot read.
func (c camundaFault) gone() func(string) bool {
	if c.down() {
		return ownedBy("camunda", "camunda_jobs", "camunda_processes", "camunda_history", "idempotency_camunda")
	}
	if c.step == "camunda" {
		return ownedBy("camunda", "idempotency_camunda")
	}
	return ownedBy(c.step)
}

// camundaFaults are the faults of the Camunda matrix; slow is how long the
// slow endpoint takes (longer than request_timeout).
func camundaFaults(slow time.Duration) []camundaFault {
	return []camundaFault{
		{"HTTP 500 on one endpoint", faultproxy.Fault{Kind: faultproxy.Status, Status: http.StatusInternalServerError, Endpoint: "/incident/count"}, "camunda", "HTTP 500 from GET /incident/count"},
		{"HTTP 401", faultproxy.Fault{Kind: faultproxy.Status, Status: http.StatusUnauthorized}, vocab.CollectorConnect, "HTTP 401 from GET /version"},
		{"HTTP 404 on one endpoint", faultproxy.Fault{Kind: faultproxy.Status, Status: http.StatusNotFound, Endpoint: "/history/external-task-log"}, "camunda", "HTTP 404 from GET /history/external-task-log"},
		{"slower than request_timeout", faultproxy.Fault{Kind: faultproxy.Slow, Delay: slow, Endpoint: "/external-task/count"}, "camunda", "request timeout"},
		{"truncated JSON", faultproxy.Fault{Kind: faultproxy.Truncate, Endpoint: "/external-task"}, "camunda", "unexpected response from GET /external-task"},
		{"valid JSON of the wrong shape", faultproxy.Fault{Kind: faultproxy.Body, Body: `{"total": 3}`, Endpoint: "/external-task/count"}, "camunda", "unexpected response from GET /external-task/count"},
		{"connection reset on one endpoint", faultproxy.Fault{Kind: faultproxy.Reset, Endpoint: "/external-task/count"}, "camunda", "unreachable"},
		{"connection refused", faultproxy.Fault{Kind: faultproxy.Refuse}, vocab.CollectorConnect, "unreachable"},
		{"certificate that does not verify", faultproxy.Fault{Kind: faultproxy.BadCertificate}, vocab.CollectorConnect, "TLS verification failed"},
	}
}

// camundaBehindProxy is what the Camunda fault and leak tests start: the
// shared Camunda engine with tasks of topic (one locked, lockedID), a TLS
// proxy in front of it that wants basic auth with password, and a fault
// database. The exporter's config (camundaConfig) finds the database's DSN
// in $WFX_REL_DSN and the password in $WFX_REL_CAMUNDA_PW.
type camundaBehindProxy struct {
	topic, lockedID, password string
	proxy                     *faultproxy.Proxy
	db                        *faultDB
}

func startCamundaBehindProxy(t *testing.T) camundaBehindProxy {
	t.Helper()
	e := camundatest.Shared(t, camundatest.FlavorCamunda)
	var s camundaBehindProxy
	s.topic, s.lockedID = engineWithTasks(t, e)
	s.password = fmt.Sprintf("Rel-Camunda-Pw-%d", time.Now().UnixNano())
	s.proxy = faultproxy.Start(t, e.BaseURL, faultproxy.Options{TLS: true, Username: "exporter", Password: s.password})
	s.db = newFaultDB(t, pgtest.SharedServer(t))
	t.Setenv("WFX_REL_DSN", s.db.dsn)
	t.Setenv("WFX_REL_CAMUNDA_PW", s.password)
	return s
}

// TestCamundaFaults is the fault matrix of the Camunda source: a real
// engine behind a proxy that injects what the engine cannot be made to do
// on demand. A database joins with the engine: while the engine cannot be
// read, the join's series go too, and the database's own stay.
func TestCamundaFaults(t *testing.T) {
	s := startCamundaBehindProxy(t)
	topic, lockedID, password, proxy, d := s.topic, s.lockedID, s.password, s.proxy, s.db
	// The side effect of the locked task is done, its completion lost: the
	// join reports it while the engine can be read.
	d.exec(t, fmt.Sprintf(`INSERT INTO workflow_idempotency_record (scope, idempotency_key, business_entity_id, job_reference, status, updated_at)
		VALUES ('payment', 'k9', 'e9', '%s', 'COMPLETED', now() - interval '1 minute')`, lockedID))
	out := &outputs{}
	r := newRig(t, camundaConfig(proxy, topic, time.Second), out)
	base := r.collect()
	if v, ok := base.get("workflow_idempotency_completed_task_open", "database", "orders", "engine", "main", "scope", "payment", "topic", topic); !ok || v != 1 {
		t.Fatalf("the join does not report the completed record whose task is open: %v %v\n%s", v, ok, r.logs)
	}
	for _, c := range camundaFaults(5 * time.Second) {
		t.Run(c.name, func(t *testing.T) {
			f := fault{name: c.name, kind: "camunda", source: "main", step: c.step, cause: c.cause, down: c.down(), gone: c.gone(),
				inject: func(t *testing.T) { must(t, proxy.Set(c.fault)) },
				clear:  func(t *testing.T) { must(t, proxy.Set(faultproxy.Fault{})) },
			}
			r.t = t
			f.run(t, r)
		})
	}
	if n := proxy.AuthFailures(); n != 0 {
		t.Errorf("%d requests reached the proxy without the configured credentials", n)
	}
	token := base64.StdEncoding.EncodeToString([]byte("exporter:" + password))
	out.scan(t, password, token, d.secret, strings.TrimSuffix(token, "="))
}
