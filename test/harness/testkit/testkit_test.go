package testkit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRepoRootIsThisModule: RepoRoot counts directories up from this file,
// so a move of the package must move the count with it; a go.mod of another
// module on the way (tools/*) would be the wrong root.
func TestRepoRootIsThisModule(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(string(b), "\n"); first != "module github.com/workflow-exporter/workflow-exporter" {
		t.Fatalf("RepoRoot found %s, whose go.mod starts %q", root, first)
	}
}
