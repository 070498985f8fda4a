package camundatest_test

import (
	"testing"

	"github.com/workflow-exporter/workflow-exporter/internal/camundatest"
)

func TestMain(m *testing.M) { camundatest.Main(m) }
