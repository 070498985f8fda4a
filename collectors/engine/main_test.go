package engine_test

import (
	"testing"

	"github.com/workflow-exporter/workflow-exporter/test/harness/camundatest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

// The engine tests share one PostgreSQL server and one engine per flavor
// across the package; both are stopped when the package's tests end.
func TestMain(m *testing.M) { testkit.Main(m, camundatest.StopShared, pgtest.StopShared) }
