package camundatest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

// Flavor names a test engine: a directory test/camunda-engine/<flavor> holding its Maven project.
// Most flavors are an engine distribution speaking the Camunda 7 REST API; one release each, so a
// flavor names a version too ("camunda" is the newest Camunda 7, "camunda-7.22" an older one).
// FlavorCIBSeven is the exception: a CIB seven engine on PostgreSQL behind a test driver (see
// Flavor.RESTAPI).
type Flavor string

const (
	// FlavorCamunda is Camunda 7 CE 7.24.0.
	FlavorCamunda Flavor = "camunda"
	// FlavorOperaton is the Operaton fork (1.0.3, the newest release served by Maven Central here).
	FlavorOperaton Flavor = "operaton"
	// FlavorCamunda722 is Camunda 7 CE 7.22.0 (Spring Boot 3.3).
	FlavorCamunda722 Flavor = "camunda-7.22"
	// FlavorCamunda720 is Camunda 7 CE 7.20.0 (Spring Boot 3.1), the first release on Jakarta EE.
	FlavorCamunda720 Flavor = "camunda-7.20"
	// FlavorCamunda719 is Camunda 7 CE 7.19.0 (Spring Boot 2.7, javax), the last release before
	// historyTimeToLive became mandatory.
	FlavorCamunda719 Flavor = "camunda-7.19"
	// FlavorCIBSeven is a CIB seven 2.0.0 engine (a Camunda 7 fork). Maven Central serves its engine
	// jar but none of its REST artifacts, so this is a plain Java process engine on PostgreSQL
	// (Options.PostgresURL is required) with a small HTTP test driver under /engine-rest that answers
	// exactly what Client and Worker call, with the same JSON. It is no REST API for the exporter,
	// which reads this engine through its database only. See test/camunda-engine/README.md.
	FlavorCIBSeven Flavor = "cibseven"
)

// PropertyPrefix is the Spring property prefix of the engine starter: "camunda.bpm" or
// "operaton.bpm", e.g. for Options.ExtraArgs such as
// "--"+f.PropertyPrefix()+".generic-properties.properties.query-max-results-limit=100".
// FlavorCIBSeven has no Spring properties (its arguments are in Options.ExtraArgs' doc).
func (f Flavor) PropertyPrefix() string {
	if f == FlavorOperaton {
		return "operaton.bpm"
	}
	return "camunda.bpm"
}

// Product returns the distribution a flavor is a release of: FlavorCamunda for Camunda 7 (every
// "camunda-7.x"), FlavorOperaton, FlavorCIBSeven. Code that compares a flavor with a detected
// product (GET /telemetry/data) compares its Product.
func (f Flavor) Product() Flavor {
	if strings.HasPrefix(string(f), string(FlavorCamunda)+"-") {
		return FlavorCamunda
	}
	return f
}

// RESTAPI reports whether the flavor's /engine-rest is the engine's real REST API. It is false for
// FlavorCIBSeven, whose /engine-rest is a test driver: only the endpoints Client and Worker call
// (plus GET /engine, /history/external-task-log and /test-driver/info), backed by the Java API.
func (f Flavor) RESTAPI() bool { return f != FlavorCIBSeven }

// NeedsPostgres reports whether the flavor runs only on PostgreSQL (Options.PostgresURL); the
// others default to H2 in memory.
func (f Flavor) NeedsPostgres() bool { return f == FlavorCIBSeven }

// AllFlavors lists the default flavors: the newest release of each REST engine (Camunda 7.24.0,
// Operaton 1.0.3). Flavors() returns them unless CAMUNDATEST_FLAVORS says otherwise; KnownFlavors
// lists every flavor the harness can build.
func AllFlavors() []Flavor { return []Flavor{FlavorCamunda, FlavorOperaton} }

// OlderCamundaFlavors lists the older Camunda 7 releases the harness can build, newest first. Tests
// select them by name in CAMUNDATEST_FLAVORS, e.g. "camunda,camunda-7.22,camunda-7.20,camunda-7.19".
func OlderCamundaFlavors() []Flavor {
	return []Flavor{FlavorCamunda722, FlavorCamunda720, FlavorCamunda719}
}

// KnownFlavors lists every flavor the harness can build: AllFlavors, OlderCamundaFlavors and
// FlavorCIBSeven.
func KnownFlavors() []Flavor {
	return append(append(AllFlavors(), OlderCamundaFlavors()...), FlavorCIBSeven)
}

// Flavors returns the flavors to test: AllFlavors, or those named in CAMUNDATEST_FLAVORS
// (comma-separated; any of KnownFlavors). Unknown names are kept so that Build reports them.
func Flavors() []Flavor {
	env := strings.TrimSpace(os.Getenv("CAMUNDATEST_FLAVORS"))
	if env == "" {
		return AllFlavors()
	}
	var out []Flavor
	for _, f := range strings.Split(env, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, Flavor(f))
		}
	}
	return out
}

// SourceDir returns test/camunda-engine/<flavor>, the Maven project of a flavor.
func SourceDir(flavor Flavor) (string, error) {
	root, err := testkit.RepoRoot()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, "test", "camunda-engine", string(flavor))
	if _, err := os.Stat(filepath.Join(dir, "pom.xml")); err != nil {
		return "", fmt.Errorf("camundatest: unknown flavor %q: no Maven project at %s", flavor, dir)
	}
	return dir, nil
}

func cacheDir() (string, error) {
	if d := os.Getenv("CAMUNDATEST_CACHE_DIR"); d != "" {
		return d, nil
	}
	root, err := testkit.RepoRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, ".cache", "camunda-engine"), nil
}

// requireTool returns the path of a command or an error that names it and says how to get it.
func requireTool(name, what string) (string, error) {
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("camundatest: %s (%q) not found in PATH: the real-engine tests need it (Debian: apt-get install %s): %w",
			what, name, map[string]string{"mvn": "maven", "java": "openjdk-17-jre-headless"}[name], err)
	}
	return p, nil
}

// sharedDir is test/camunda-engine/shared beside a flavor's project: the Java sources of the Spring
// Boot flavors, which their poms copy in with the engine's package prefix filled in, and the parent
// pom of the older Camunda 7 releases (shared/camunda7).
func sharedDir(src string) string { return filepath.Join(filepath.Dir(src), "shared") }

// SourceHash hashes the flavor name, pom.xml, every file under src/ (if any) and everything under
// shared/ (paths and contents), so each flavor, and so each engine version, has a jar of its own.
func SourceHash(flavor Flavor) (string, error) {
	dir, err := SourceDir(flavor)
	if err != nil {
		return "", err
	}
	// The older Camunda 7 releases have no src/: their parent in shared/ has it all.
	return testkit.HashTrees(dir, fmt.Sprintf("flavor %s\n", flavor), "src", "../shared")
}

// Build returns the path of the flavor's executable jar, building it with Maven when the cache has
// none for the current pom and sources. Concurrent builds (goroutines or `go test` processes) are
// serialised with a lock file; the build runs in a scratch copy of the project and the shared
// sources so it never touches test/camunda-engine/<flavor>/target.
func Build(ctx context.Context, flavor Flavor) (string, error) {
	if _, err := requireTool("java", "Java 17"); err != nil {
		return "", err
	}
	mvn, err := requireTool("mvn", "Maven")
	if err != nil {
		return "", err
	}
	src, err := SourceDir(flavor)
	if err != nil {
		return "", err
	}
	hash, err := SourceHash(flavor)
	if err != nil {
		return "", err
	}
	cache, err := cacheDir()
	if err != nil {
		return "", err
	}
	jar := filepath.Join(cache, string(flavor)+"-"+hash, "test-engine.jar")
	if fileExists(jar) {
		return jar, nil
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", fmt.Errorf("camundatest: %w", err)
	}
	unlock, err := testkit.LockFile(filepath.Join(cache, string(flavor)+".lock"))
	if err != nil {
		return "", fmt.Errorf("camundatest: locking the %s build: %w", flavor, err)
	}
	defer unlock()
	if fileExists(jar) { // built by someone else while we waited
		return jar, nil
	}

	work, err := os.MkdirTemp(cache, "build-"+string(flavor)+"-")
	if err != nil {
		return "", fmt.Errorf("camundatest: %w", err)
	}
	defer os.RemoveAll(work)
	// The pom reads ../shared: the copies stand side by side as in test/camunda-engine.
	project := filepath.Join(work, string(flavor))
	if err := testkit.CopyTree(src, project, "target"); err != nil {
		return "", fmt.Errorf("camundatest: copying %s: %w", src, err)
	}
	if err := testkit.CopyTree(sharedDir(src), sharedDir(project)); err != nil {
		return "", fmt.Errorf("camundatest: copying %s: %w", sharedDir(src), err)
	}
	built, err := testkit.MavenPackage(ctx, mvn, "the "+string(flavor)+" engine", src, project, "test-engine.jar", strings.Fields(os.Getenv("CAMUNDATEST_MVN_ARGS")))
	if err != nil {
		return "", fmt.Errorf("camundatest: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(jar), 0o755); err != nil {
		return "", fmt.Errorf("camundatest: %w", err)
	}
	if err := os.Rename(built, jar); err != nil {
		return "", fmt.Errorf("camundatest: %w", err)
	}
	pruneStale(cache, flavor, filepath.Dir(jar))
	return jar, nil
}

// pruneStale removes jars of the flavor built from older sources. Another process may still run
// one: on Linux its open file stays readable after removal. Only <flavor>-<hash> directories are
// the flavor's: "camunda-*" also matches the jars of camunda-7.22 and the other releases.
func pruneStale(cache string, flavor Flavor, keep string) {
	old, _ := filepath.Glob(filepath.Join(cache, string(flavor)+"-*"))
	for _, d := range old {
		if d != keep && isHash(strings.TrimPrefix(filepath.Base(d), string(flavor)+"-")) && fileExists(filepath.Join(d, "test-engine.jar")) {
			_ = os.RemoveAll(d)
		}
	}
}

// isHash reports whether s looks like a SourceHash: 16 lower-case hex digits.
func isHash(s string) bool {
	if len(s) != 16 {
		return false
	}
	for _, r := range s {
		if (r < '0' || r > '9') && (r < 'a' || r > 'f') {
			return false
		}
	}
	return true
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// tail returns at most the last n bytes of b, starting at a line boundary when possible.
func tail(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	b = b[len(b)-n:]
	if i := bytes.IndexByte(b, '\n'); i >= 0 && i < len(b)-1 {
		b = b[i+1:]
	}
	return "..." + string(b)
}
