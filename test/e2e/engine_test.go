package e2e

import (
	"testing"

	"github.com/workflow-exporter/workflow-exporter/internal/camundatest"
)

// sharedEngine is the one Camunda 7.24 engine of the package's tests, with
// its job executor off: an async job then stays executable, as behind a job
// executor that stopped, which is what the dashboards' job panels need to
// show data. The simulator's processes and the other tests use external
// tasks only, which need no job executor.
func sharedEngine(t *testing.T) *camundatest.Engine {
	t.Helper()
	flavor := camundatest.FlavorCamunda
	return camundatest.SharedWith(t, camundatest.Options{Flavor: flavor,
		ExtraArgs: []string{"--" + flavor.PropertyPrefix() + ".job-execution.enabled=false"}})
}
