package layers

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

// shippedBinaries are the commands the release and the images ship.
var shippedBinaries = []string{"./cmd/exporter", "./cmd/workflow-sim"}

// linkedTestingElsewhere are the third-party packages a shipped binary
// links that import package testing themselves: go-abnf, which
// prometheus/common/expfmt uses to parse the exposition format, keeps a
// fuzzing helper in a non-test file. A new one fails the test, so that it
// is looked at.
var linkedTestingElsewhere = []string{"github.com/pandatix/go-abnf"}

// TestShippedBinariesDoNotLinkTesting: no package of this module that the
// exporter or the simulator links imports "testing" (the test harnesses
// stay out of the shipped binaries: the simulator's engine client, fault
// proxy and certificates live in sim/, the harnesses in test/).
func TestShippedBinariesDoNotLinkTesting(t *testing.T) {
	root := testkit.Path(t, ".")
	module, err := modulePath(root + "/go.mod")
	if err != nil {
		t.Fatal(err)
	}
	for _, bin := range shippedBinaries {
		cmd := exec.Command("go", append([]string{"list", "-deps", "-f", `{{.ImportPath}} {{join .Imports " "}}`}, bin)...)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", bin, err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			fields := strings.Fields(line)
			if len(fields) == 0 || !slices.Contains(fields[1:], "testing") {
				continue
			}
			pkg := fields[0]
			switch {
			case pkg == module || strings.HasPrefix(pkg, module+"/"):
				t.Errorf("%s links %s, which imports testing", bin, pkg)
			case !slices.Contains(linkedTestingElsewhere, pkg):
				t.Errorf("%s links the third-party %s, which imports testing: keep it out, or add it to linkedTestingElsewhere with the reason", bin, pkg)
			}
		}
	}
}

// TestWorkspaceBuildsWhatGoModSays: go.work joins the main module and the
// checks module, and in a workspace Go picks every shared dependency's
// version across both go.mod files. The main module's tests run in the
// workspace while the release and the image build from go.mod alone
// (GOWORK=off), so the two must pick the same versions for every package
// the main module builds or tests; when the checks module moves a shared
// dependency ahead, raise it in the main go.mod too (go get module@version).
func TestWorkspaceBuildsWhatGoModSays(t *testing.T) {
	root := testkit.Path(t, ".")
	versions := func(gowork string) string {
		cmd := exec.Command("go", "list", "-deps", "-test", "-f", "{{with .Module}}{{.Path}} {{.Version}}{{end}}", "./...")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GOWORK="+gowork)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list (GOWORK=%s): %v", gowork, err)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		slices.Sort(lines)
		return strings.Join(slices.Compact(lines), "\n")
	}
	off, on := versions("off"), versions(filepath.Join(root, "go.work"))
	if off == on {
		return
	}
	offSet := map[string]bool{}
	for _, l := range strings.Split(off, "\n") {
		offSet[l] = true
	}
	for _, l := range strings.Split(on, "\n") {
		if !offSet[l] {
			t.Errorf("in the workspace the main module builds with %s; go.mod alone picks another version (go get it in the main module)", l)
		}
	}
}
