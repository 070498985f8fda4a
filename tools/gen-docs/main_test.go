package main

import (
	"os"
	"strings"
	"testing"

	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

// generated are the files tools/generate's go:generate line for gen-docs
// names, relative to the repository root.
var generated = []string{"docs/metrics.md", "docs/database.md", "docs/outbox-shapes.md"}

// TestDocsAreCurrent fails when the catalog or the index requirements
// changed without `make generate`.
func TestDocsAreCurrent(t *testing.T) {
	docs := map[string]string{}
	for _, f := range generated {
		b, err := os.ReadFile(testkit.Path(t, f))
		if err != nil {
			t.Fatal(err)
		}
		docs[f] = string(b)
	}
	want, err := render(docs)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range generated {
		if want[f] != docs[f] {
			t.Errorf("%s is stale: run `make generate`", f)
		}
	}
}

// TestGenerateLineNamesTheFiles keeps the go:generate line and the test's
// list of files the same.
func TestGenerateLineNamesTheFiles(t *testing.T) {
	b, err := os.ReadFile("../generate/generate.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range generated {
		if !strings.Contains(string(b), "run ./tools/gen-docs ") || !strings.Contains(string(b), " "+f) {
			t.Errorf("tools/generate's go:generate line for gen-docs does not name %s", f)
		}
	}
}

func TestRenderWantsEachSectionOnce(t *testing.T) {
	both := ""
	for name := range sections {
		both += beginMarker(name) + "<!-- END GENERATED " + name + " -->\n"
	}
	if _, err := render(map[string]string{"a.md": both}); err != nil {
		t.Errorf("all sections in one file: %v", err)
	}
	if _, err := render(map[string]string{"a.md": both, "b.md": both}); err == nil {
		t.Error("a section in two files: no error")
	}
	if _, err := render(map[string]string{"a.md": beginMarker("metrics") + "<!-- END GENERATED metrics -->\n"}); err == nil {
		t.Error("a section in no file: no error")
	}
	if _, err := render(map[string]string{"a.md": strings.Replace(both, beginMarker("metrics")+"<!-- END GENERATED metrics -->\n", "<!-- END GENERATED metrics -->\n"+beginMarker("metrics"), 1)}); err == nil {
		t.Error("markers out of order: no error")
	}
}
