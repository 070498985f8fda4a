//go:build !pgonly

package engine_test

import (
	"context"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/sim/engineclient"
	"github.com/workflow-exporter/workflow-exporter/test/harness/camundatest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
)

// balancer is a load balancer in front of engine nodes: each request goes
// to a node chosen at random (a strict alternation would send the same
// request of every collection to the same node, and the nodes would never
// disagree about one list). It rewrites the Date header with its own clock,
// as nginx does.
func balancer(t *testing.T, nodes ...*camundatest.Engine) string {
	t.Helper()
	var targets []*url.URL
	for _, n := range nodes {
		u, err := url.Parse(n.BaseURL)
		if err != nil {
			t.Fatal(err)
		}
		targets = append(targets, u)
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			u := targets[rand.IntN(len(targets))]
			r.SetURL(&url.URL{Scheme: u.Scheme, Host: u.Host})
			r.Out.URL.Path = r.In.URL.Path
		},
		ModifyResponse: func(resp *http.Response) error {
			resp.Header.Set("Date", time.Now().UTC().Format(http.TimeFormat))
			return nil
		},
	}
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	u, _ := url.Parse(nodes[0].BaseURL)
	return srv.URL + u.Path
}

// TestCamundaCluster: two engine nodes on one PostgreSQL behind a
// balancer that picks a node per request, one node's engine clock 25 s behind the other's.
// Two locks lapse once: the exporter, whose consecutive requests reach
// both nodes, counts two lock expirations and no redelivery while the nodes
// disagree whether the locks are held, in both modes, and the states stay
// a partition of the tasks; fetched again, the two are two redeliveries.
func TestCamundaCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two JVMs")
	}
	flavor := camundatest.FlavorCamunda
	dbURL := pgtest.NewDatabase(t)
	start := func(offset string) *camundatest.Engine {
		return startCamundaEngine(t, camundatest.Options{Flavor: flavor, Username: engineUser, Password: enginePassword,
			PostgresURL: dbURL, TimeZone: engineTimeZone,
			ExtraArgs: []string{"--" + flavor.PropertyPrefix() + ".job-execution.enabled=false", "--test-engine.clock-offset-ms=" + offset}})
	}
	nodeA := start("0")
	nodeB := start("-25000")
	lb := balancer(t, nodeA, nodeB)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c := nodeA.Client()
	key := camundatest.UniqueName(t.Name())
	topic := key + ".topic"
	startTasks(t, ctx, c, key, topic, 3)
	creds := credentialsConfig(t, enginePassword)
	rest := newCamundaExporter(t, camundaConfig(lb, topic, creds))
	db := newCamundaExporter(t, camundaConfig(lb, topic, creds+engineUnderTest{dbURL: dbURL, tzName: engineTimeZone}.databaseConfig()))
	exps := map[string]*camExporter{"REST": rest, "engine database": db}
	collect := func() {
		for _, x := range exps {
			x.collect()
		}
	}
	collect() // baselines

	// Two locks of 10 s taken on node A: lapsed by A's clock after 10 s, by
	// B's after 35 s. Between, the nodes disagree.
	w := engineclient.NewWorker(c, "w1")
	locked, err := w.FetchAndLock(ctx, topic, 10*time.Second, 2)
	if err != nil || len(locked) != 2 {
		t.Fatalf("fetch: %v (%d tasks)", err, len(locked))
	}
	labels := map[string]string{"engine": "e1", "topic": topic}
	state := func(x *camExporter, s string) float64 {
		return x.must(catalog.CamundaExternalTasks, map[string]string{"engine": "e1", "topic": topic, "state": s})
	}
	// Collect through the balancer while the nodes disagree (while they do,
	// a task is held by one and lapsed by the other: no state is exact).
	for end := time.Now().Add(40 * time.Second); time.Now().Before(end); time.Sleep(1500 * time.Millisecond) {
		collect()
	}
	for mode, x := range exps {
		if w, l := state(x, "waiting"), state(x, "locked"); w != 1 || l != 0 {
			t.Errorf("%s mode: waiting %v, locked %v once every node agrees, want 1 and 0", mode, w, l)
		}
	}
	for mode, x := range exps {
		if e, r := x.must(catalog.CamundaExternalTaskLockExpirations, labels), x.must(catalog.CamundaExternalTaskRedeliveries, labels); e != 2 || r != 0 {
			t.Errorf("%s mode: %v lock expirations and %v redeliveries after two lapses, want 2 and 0", mode, e, r)
		}
		if v := state(x, "lock_expired"); v != 2 {
			t.Errorf("%s mode: %v lapsed, want 2", mode, v)
		}
		// No task ended: one missing from both lists while the nodes
		// disagree is not an end.
		if v := x.must(catalog.CamundaExternalTasksEnded, labels); v != 0 {
			t.Errorf("%s mode: %v tasks ended, want 0 (none did)", mode, v)
		}
	}
	// Fetched again (by any node: every clock says lapsed now): two
	// redeliveries.
	again, err := engineclient.NewWorker(c, "w2").FetchAndLock(ctx, topic, time.Minute, 3)
	if err != nil || len(again) != 3 {
		t.Fatalf("fetch again: %v (%d tasks)", err, len(again))
	}
	collect()
	for mode, x := range exps {
		if e, r := x.must(catalog.CamundaExternalTaskLockExpirations, labels), x.must(catalog.CamundaExternalTaskRedeliveries, labels); e != 2 || r != 2 {
			t.Errorf("%s mode: %v lock expirations and %v redeliveries after the re-fetch, want 2 and 2", mode, e, r)
		}
	}
}
