package testkit

import (
	"os"
	"os/exec"
	"testing"
)

// The fast tier (`go test -short ./...`, make test-unit) runs every test
// that needs no process outside the test binary; `go test ./...` (make
// test) runs everything. The harnesses decide it here, in the one place:
// each that starts an external process (PostgreSQL, a JVM, Prometheus,
// Alertmanager, the exporter binary, Chromium) or runs an installed tool
// (promtool, amtool) calls SkipIfShort or Tool first, so a test is in the
// fast tier exactly when it reaches none of them. Building a Go binary is
// allowed in the fast tier (GoBuild): it runs nothing but the Go toolchain.

// EnvRequire names the variable that turns a missing tool into a failure:
// make test sets it (scripts/install-deps.sh installs every tool), so a
// missing package fails the run instead of passing it silently. The name
// dates from when only the Prometheus harness read it.
const EnvRequire = "PROMTEST_REQUIRE"

// SkipIfShort skips the test under `go test -short`: it starts what (an
// external process). Harnesses call it before starting anything.
func SkipIfShort(t testing.TB, what string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("starts %s: not in the fast tier (-short)", what)
	}
}

// Tool returns the path of an installed command the test runs (promtool,
// chromium, Prometheus...), found in PATH or at an absolute path. It skips
// the test under -short, and when the command is missing, unless
// EnvRequire is set: then a missing command fails the test. debianPackage
// names the package that installs it, for the message.
func Tool(t testing.TB, name, debianPackage string) string {
	t.Helper()
	SkipIfShort(t, name)
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv(EnvRequire) != "" {
			t.Fatalf("%s not found and %s is set: bash scripts/install-deps.sh test (apt-get install %s)", name, EnvRequire, debianPackage)
		}
		t.Skipf("%s not found (bash scripts/install-deps.sh test, or apt-get install %s)", name, debianPackage)
	}
	return p
}
