package tables_test

import (
	"testing"

	"github.com/workflow-exporter/workflow-exporter/test/harness/collectortest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/relaytest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m, pgtest.StopShared, relaytest.StopShared) }

// testDB and exporter are the harness's database and exporter, with the
// row writers and checks of these tests as their methods.
type (
	testDB   struct{ *collectortest.DB }
	exporter struct{ *collectortest.Exporter }
)

func newTestDB(t *testing.T, withDuplicateCount bool) *testDB {
	return &testDB{collectortest.NewDB(t, withDuplicateCount)}
}

func (d *testDB) newExporter(configYAML string) *exporter {
	return &exporter{d.DB.NewExporter(configYAML)}
}
