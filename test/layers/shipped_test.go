package layers

import (
	"os/exec"
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
