package tables_test

import (
	"testing"

	"github.com/workflow-exporter/workflow-exporter/test/harness/collectortest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

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
