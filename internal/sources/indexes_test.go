package sources

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/workflow-exporter/workflow-exporter/collectors/engine/capability"
	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

// TestIndexFilesMatchTheCode: deploy/sql/003 is generated from the
// collectors' requirements, and the extension's index lives in 002; both
// must match what the code asks for.
func TestIndexFilesMatchTheCode(t *testing.T) {
	reqs := DefaultRequirements()
	gen, err := os.ReadFile(testkit.Path(t, "deploy/sql/003_exporter_indexes.sql"))
	if err != nil {
		t.Fatal(err)
	}
	if string(gen) != IndexSQL(reqs) {
		t.Fatal("deploy/sql/003_exporter_indexes.sql is stale: run `go generate ./internal/sources`")
	}
	eng, err := os.ReadFile(testkit.Path(t, "deploy/sql/camunda/001_history_timestamp_index.sql"))
	if err != nil {
		t.Fatal(err)
	}
	if string(eng) != capability.IndexSQL() || !strings.Contains(string(eng), `ON "act_hi_ext_task_log" ("timestamp_")`) {
		t.Fatal("deploy/sql/camunda/001_history_timestamp_index.sql is stale: run `go generate ./internal/sources`")
	}
	// The engine-database role grants SELECT on exactly the tables the
	// reader uses.
	role, err := os.ReadFile(testkit.Path(t, "deploy/sql/camunda/002_exporter_role.sql"))
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for _, r := range capability.DatabaseRequirements("", "") {
		tables = append(tables, r.Table)
	}
	if grant := "GRANT SELECT ON " + strings.Join(tables, ", ") + " TO"; !strings.Contains(string(role), grant) {
		t.Fatalf("deploy/sql/camunda/002_exporter_role.sql does not say %q", grant)
	}
	// deploy/sql/presets holds one generated file per library preset, and
	// nothing else.
	names, preqs := PresetRequirements()
	files, err := filepath.Glob(testkit.Path(t, "deploy/sql/presets") + "/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(names) || len(names) < 7 {
		t.Fatalf("deploy/sql/presets holds %d files for %d presets %v: run `go generate ./internal/sources`", len(files), len(names), names)
	}
	for _, n := range names {
		got, err := os.ReadFile(testkit.Path(t, "deploy/sql/presets/"+n+".sql"))
		if err != nil || string(got) != PresetIndexSQL(n, preqs[n]) {
			t.Errorf("deploy/sql/presets/%s.sql is stale or missing (%v): run `go generate ./internal/sources`", n, err)
		}
	}
	ext, err := os.ReadFile(testkit.Path(t, "deploy/sql/002_duplicate_count_extension.sql"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range reqs {
		for _, ix := range r.Indexes {
			if ix.Requires == "" {
				continue
			}
			n++
			if !strings.Contains(string(ext), ix.CreateStatement(r.Table)) {
				t.Errorf("002_duplicate_count_extension.sql lacks %s", ix.CreateStatement(r.Table))
			}
		}
	}
	if n == 0 {
		t.Fatal("no index of an optional column found; the test checks nothing")
	}
}
