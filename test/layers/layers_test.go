// Package layers holds the test that keeps the package graph in its layers:
// docs/design.md draws the layers and lists them in one block, which this
// test reads, so the picture and the rule cannot drift apart.
package layers

import (
	"bufio"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

// TestLayers: every import of the repository's Go code (test files aside:
// a test may use any harness) runs from a higher layer to a lower one, and
// only commands, test/ and internal/ itself import internal/ (the
// application's top layers: the low tier lives in blocks/).
func TestLayers(t *testing.T) {
	root := testkit.Path(t, ".")
	layers, err := readLayers(filepath.Join(root, "docs", "design.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range check(t, root, layers) {
		t.Error(v)
	}
}

// TestLayersCatchesViolations proves the check on a fixture tree with the
// mistakes it exists for: a package importing a higher layer (the scheduler
// importing the status page), a same-layer import, a package no layer names,
// and a library package outside internal/ importing internal/.
func TestLayersCatchesViolations(t *testing.T) {
	layers, err := readLayers(filepath.Join("testdata", "fixture", "layers.md"))
	if err != nil {
		t.Fatal(err)
	}
	got := check(t, filepath.Join("testdata", "fixture"), layers)
	want := []string{
		`cmd/app: in no layer of the list`,
		`collectors imports internal/poll: layer "api" may only import lower layers, "scheduler" is above it`,
		`collectors imports internal/poll: only commands, test/ and internal/ itself import internal/`,
		`internal/poll imports internal/status: layer "scheduler" may only import lower layers, "web" is above it`,
		`vocab imports collectors: layer "foundation" may only import lower layers, "api" is above it`,
		`vocab/more imports vocab: both in layer "foundation"; a package may only import lower layers`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// layer is one line of the list: its name and package patterns ("a/b" the
// package, "a/..." the package and everything below it). A name ending in
// "*" marks a layer whose packages may import each other (the test
// harnesses and tools); elsewhere a package imports only lower layers, so
// two packages of one layer stay independent.
type layer struct {
	name     string
	open     bool
	patterns []string
}

// readLayers reads the layers from the fenced block that follows the
// "<!-- layers -->" marker, highest layer first.
func readLayers(file string) ([]layer, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []layer
	state := 0 // 0 before the marker, 1 before the fence, 2 inside
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case state == 0 && line == "<!-- layers -->":
			state = 1
		case state == 1 && strings.HasPrefix(line, "```"):
			state = 2
		case state == 2 && strings.HasPrefix(line, "```"):
			if len(out) == 0 {
				return nil, fmt.Errorf("%s: the layers block is empty", file)
			}
			return out, nil
		case state == 2 && line != "":
			fields := strings.Fields(line)
			if len(fields) < 2 {
				return nil, fmt.Errorf("%s: layer line %q needs a name and at least one package", file, line)
			}
			name, open := strings.CutSuffix(fields[0], "*")
			out = append(out, layer{name: name, open: open, patterns: fields[1:]})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("%s: no fenced block after a line <!-- layers -->", file)
}

// rank returns the layer of a package (0 is the lowest) and its name, or
// -1 when no layer names it. A pattern naming the package itself wins over
// a subtree pattern, so "cmd/workflow-sim" can sit in another layer than
// "cmd/...".
func rank(layers []layer, pkg string) (int, string) {
	best, bestLen := -1, -1
	for i, l := range layers {
		for _, p := range l.patterns {
			n := -1
			switch {
			case p == pkg:
				n = len(p) + 1
			case strings.HasSuffix(p, "/..."):
				base := strings.TrimSuffix(p, "/...")
				if pkg == base || strings.HasPrefix(pkg, base+"/") {
					n = len(base)
				}
			}
			if n > bestLen {
				best, bestLen = len(layers)-1-i, n
			}
		}
	}
	if best < 0 {
		return -1, ""
	}
	return best, layers[len(layers)-1-best].name
}

// pkgInfo is what the check needs of one package: its imports of the
// module's own packages, and whether it is a command.
type pkgInfo struct {
	imports map[string]bool
	command bool
}

// check walks the module at root (its go.mod names the module path) and
// returns every violation, sorted.
func check(t *testing.T, root string, layers []layer) []string {
	t.Helper()
	module, err := modulePath(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	pkgs := map[string]*pkgInfo{}
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if p != root && (name == "testdata" || strings.HasPrefix(name, ".") || name == "node_modules") {
				return filepath.SkipDir
			}
			if p != root {
				if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
					return filepath.SkipDir // another module (the checks module)
				}
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		pkg := filepath.ToSlash(rel)
		info := pkgs[pkg]
		if info == nil {
			info = &pkgInfo{imports: map[string]bool{}}
			pkgs[pkg] = info
		}
		return readFile(p, module, pkg, info)
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for pkg, info := range pkgs {
		r, name := rank(layers, pkg)
		if r < 0 {
			out = append(out, pkg+": in no layer of the list")
			continue
		}
		for imp := range info.imports {
			if isInternal(imp) && !isInternal(pkg) && !info.command && !isTest(pkg) {
				out = append(out, fmt.Sprintf("%s imports %s: only commands, test/ and internal/ itself import internal/", pkg, imp))
			}
			ir, iname := rank(layers, imp)
			switch {
			case ir < 0:
				// Reported where the imported package itself is walked.
			case ir == r && layers[len(layers)-1-r].open:
			case ir == r:
				out = append(out, fmt.Sprintf("%s imports %s: both in layer %q; a package may only import lower layers", pkg, imp, name))
			case ir > r:
				out = append(out, fmt.Sprintf("%s imports %s: layer %q may only import lower layers, %q is above it", pkg, imp, name, iname))
			}
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

func modulePath(gomod string) (string, error) {
	b, err := os.ReadFile(gomod)
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			return f[1], nil
		}
	}
	return "", fmt.Errorf("%s: no module line", gomod)
}

// readFile adds a file's imports of the module's packages to info, and
// notes a command (package main), which may import internal/.
func readFile(file, module, pkg string, info *pkgInfo) error {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, parser.ImportsOnly|parser.SkipObjectResolution)
	if err != nil {
		return err
	}
	if f.Name.Name == "main" {
		info.command = true
	}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if p != module && !strings.HasPrefix(p, module+"/") {
			continue
		}
		info.imports[strings.TrimPrefix(strings.TrimPrefix(p, module), "/")] = true
	}
	return nil
}

func isTest(rel string) bool { return rel == "test" || strings.HasPrefix(rel, "test/") }

func isInternal(rel string) bool {
	return rel == "internal" || strings.HasPrefix(rel, "internal/") || strings.Contains(rel, "/internal/") || strings.HasSuffix(rel, "/internal")
}
