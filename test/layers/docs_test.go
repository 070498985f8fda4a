package layers

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

// TestEveryPackageSaysWhatItHolds: each package of both modules (test-only
// packages too) has a doc comment that begins with "Package <name>" (or
// "Command <name>" for a main package). CONTRIBUTING.md keeps no table of
// packages: `go doc` and the package's first file are where a contributor
// reads what a folder holds, and this keeps every folder answering.
func TestEveryPackageSaysWhatItHolds(t *testing.T) {
	for _, v := range undocumented(t, testkit.Path(t, ".")) {
		t.Errorf("%s: no package doc comment (// Package <name> ... above the package clause of one file)", v)
	}
}

// TestUndocumentedPackagesAreFound proves the check on a fixture tree.
func TestUndocumentedPackagesAreFound(t *testing.T) {
	got := strings.Join(undocumented(t, filepath.Join("testdata", "docs")), " ")
	if want := "testonly undocumented"; got != want {
		t.Errorf("undocumented packages %q, want %q", got, want)
	}
}

// undocumented lists the directories below root (the checks module's
// included) whose Go package has no doc comment, relative to root.
func undocumented(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if name := d.Name(); p != root && (name == "testdata" || strings.HasPrefix(name, ".") || name == "node_modules" || name == "target") {
			return filepath.SkipDir
		}
		files, _ := filepath.Glob(filepath.Join(p, "*.go"))
		if len(files) == 0 {
			return nil
		}
		documented := false
		for _, f := range files {
			af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.PackageClauseOnly|parser.ParseComments)
			if err != nil {
				return err
			}
			if af.Doc == nil {
				continue
			}
			text := af.Doc.Text()
			prefix := "Package " + af.Name.Name + " "
			if af.Name.Name == "main" {
				prefix = "Command "
			}
			if strings.HasPrefix(text, prefix) {
				documented = true
				break
			}
		}
		if !documented {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}
