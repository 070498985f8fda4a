//go:build !pgonly

package reliability

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/sim/faultproxy"
)

// TestNoLeaksCamunda: the same for every kind of the Camunda matrix:
// faultedCollections faulted collections of each kind, spread over
// camundaLeakRigs exporters collecting side by side.
func TestNoLeaksCamunda(t *testing.T) {
	s := startCamundaBehindProxy(t)
	topic, proxy := s.topic, s.proxy
	n := faultedCollections()
	// Close every idle connection on both sides of the proxy.
	quiesce := func() {
		must(t, proxy.Set(faultproxy.Fault{}))
		http.DefaultTransport.(*http.Transport).CloseIdleConnections()
		http.DefaultClient.CloseIdleConnections()
	}
	for _, c := range camundaFaults(time.Second) {
		t.Run(c.name, func(t *testing.T) {
			rigs := make([]*rig, camundaLeakRigs)
			for i := range rigs {
				rigs[i] = newRig(t, camundaConfig(proxy, topic, 200*time.Millisecond), nil)
			}
			each := func(fn func(r *rig) error) {
				errs := make(chan error, len(rigs))
				for _, r := range rigs {
					go func() { errs <- fn(r) }()
				}
				for range rigs {
					must(t, <-errs)
				}
			}
			// Three healthy collections per exporter, one exporter at a
			// time. A short request_timeout keeps the slow kind quick; ten
			// exporters at once on a busy machine exceeded it on every
			// request (CI, load 12 on two cores), which is not what this
			// test is about: one at a time, up to 20 tries, each a little
			// later than the one before.
			good := func(r *rig) error {
				ok := 0
				for i := 0; i < 20 && ok < 3; i++ {
					time.Sleep(time.Duration(3+25*i) * time.Millisecond)
					p, err := r.scrape(60 * time.Second)
					if err != nil {
						return err
					}
					// Every collector of the engine: camunda_up is only
					// its probe.
					healthy := len(p.family("workflow_exporter_collector_up")) > 0
					for _, v := range p.family("workflow_exporter_collector_up") {
						healthy = healthy && v == 1
					}
					if v, _ := p.get("camunda_up", "engine", "main"); v == 1 && healthy {
						ok++
					}
				}
				if ok < 3 {
					return fmt.Errorf("only %d of 20 collections without a fault succeeded:\n%s", ok, r.logs)
				}
				return nil
			}
			healthy := func() {
				for _, r := range rigs {
					must(t, good(r))
				}
			}
			healthy()
			quiesce()
			base := measure(t, nil)
			f := fault{kind: "camunda", source: "main", step: c.step}
			start := time.Now()
			must(t, proxy.Set(c.fault))
			each(func(r *rig) error { return runFaulted(t, r, f, n/len(rigs)) })
			must(t, proxy.Set(faultproxy.Fault{}))
			t.Logf("%d faulted collections on %d exporters in %s", n/len(rigs)*len(rigs), len(rigs), time.Since(start).Round(time.Millisecond))
			healthy()
			settle(t, base, quiesce, nil, 0)
		})
	}
}
