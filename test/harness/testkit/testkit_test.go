package testkit

import (
	"os"
	"strings"
	"testing"
)

// TestRepoRootIsThisModule: RepoRoot counts directories up from this file,
// so a move of the package must move the count with it; a go.mod of another
// module on the way (tools/*) would be the wrong root.
func TestRepoRootIsThisModule(t *testing.T) {
	b, err := os.ReadFile(Path(t, "go.mod"))
	if first, _, _ := strings.Cut(string(b), "\n"); err != nil || first != "module github.com/workflow-exporter/workflow-exporter" {
		t.Fatalf("RepoRoot found %s, whose go.mod starts %q (%v)", Path(t, "."), first, err)
	}
}
