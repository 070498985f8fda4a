package camundatest_test

import (
	"testing"

	"github.com/workflow-exporter/workflow-exporter/test/harness/camundatest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

// TestMain stops the shared engines and the PostgreSQL server of the cibseven test.
func TestMain(m *testing.M) { testkit.Main(m, camundatest.StopShared, pgtest.StopShared) }
