package camundatest_test

import (
	"testing"

	"github.com/workflow-exporter/workflow-exporter/test/harness/camundatest"
)

func TestMain(m *testing.M) { camundatest.Main(m) }
