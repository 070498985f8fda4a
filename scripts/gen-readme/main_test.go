package main

import (
	"os"
	"testing"

	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

// TestREADMEIsCurrent fails when the catalog or the index requirements
// changed without `go generate ./scripts/gen-readme`.
func TestREADMEIsCurrent(t *testing.T) {
	b, err := os.ReadFile(testkit.Path(t, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := render(string(b))
	if err != nil {
		t.Fatal(err)
	}
	if want != string(b) {
		t.Fatal("README.md is stale: run `go generate ./scripts/gen-readme` (or `make generate`)")
	}
}
