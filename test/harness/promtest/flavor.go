package promtest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

// Flavor is one Prometheus and Alertmanager pair the tests run:
//
//   - "debian": Debian 12's packages, Prometheus 2.42 and Alertmanager 0.25
//     (PROMTEST_PROMETHEUS, PROMTEST_ALERTMANAGER, PROMTEST_PROMTOOL and
//     PROMTEST_AMTOOL override the paths);
//   - "current": the current releases, built from their Go modules at pinned
//     versions by scripts/install-deps.sh test into a cache outside the
//     clone (`install-deps.sh current-tools` names the binaries): Prometheus
//     and promtool at the version checks/go.mod requires, Alertmanager and
//     amtool at the script's pin.
//
// The package-level StartPrometheus, StartAlertmanager and StartAlerting run
// Debian's; a Flavor's methods of the same names run its own.
type Flavor struct {
	// Name names the flavor in subtests and logs: "debian" or "current".
	Name string
	// The binaries' paths; empty when unknown (the current flavor on a
	// machine where install-deps.sh cannot say).
	Prometheus, Promtool, Alertmanager, Amtool string
}

// FlavorName implements Flavored.
func (f Flavor) FlavorName() string { return f.Name }

// Debian is the flavor of Debian 12's packages.
func Debian() Flavor {
	return Flavor{Name: "debian", Prometheus: PrometheusBinary(), Alertmanager: AlertmanagerBinary(),
		Promtool: envOr("PROMTEST_PROMTOOL", "/usr/bin/promtool"), Amtool: envOr("PROMTEST_AMTOOL", "/usr/bin/amtool")}
}

var (
	currentOnce   sync.Once
	currentFlavor Flavor
	currentErr    error
)

// Current is the flavor of the current releases. It asks
// scripts/install-deps.sh where they are (once per test process), so it
// skips the test under -short, which starts no process; the binaries exist
// once `bash scripts/install-deps.sh test` has built them. An error leaves
// the paths empty: the Start methods then skip (or, with PROMTEST_REQUIRE,
// fail) with the reason.
func Current(t testing.TB) Flavor {
	t.Helper()
	testkit.SkipIfShort(t, "scripts/install-deps.sh")
	return current()
}

func current() Flavor {
	currentOnce.Do(func() {
		currentFlavor = Flavor{Name: "current"}
		root, err := testkit.RepoRoot()
		if err != nil {
			currentErr = err
			return
		}
		out, err := exec.Command("bash", root+"/scripts/install-deps.sh", "current-tools").Output()
		if err != nil {
			currentErr = fmt.Errorf("scripts/install-deps.sh current-tools: %w", err)
			return
		}
		currentErr = parseTools(out, &currentFlavor)
	})
	return currentFlavor
}

// parseTools reads install-deps.sh current-tools: "NAME PATH" per line.
func parseTools(out []byte, f *Flavor) error {
	paths := map[string]*string{"prometheus": &f.Prometheus, "promtool": &f.Promtool, "alertmanager": &f.Alertmanager, "amtool": &f.Amtool}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		name, path, ok := strings.Cut(sc.Text(), " ")
		if p := paths[name]; ok && p != nil {
			*p = path
		}
	}
	for name, p := range paths {
		if *p == "" {
			return fmt.Errorf("scripts/install-deps.sh current-tools names no %s:\n%s", name, out)
		}
	}
	return nil
}

// Flavors returns both flavors, Debian's first; it skips the test under
// -short (see Current).
func Flavors(t testing.TB) []Flavor {
	t.Helper()
	return []Flavor{Debian(), Current(t)}
}

// missing returns why the binaries are not there ("" when they all are).
func (f Flavor) missing(bins ...string) string {
	if f.Name == "current" {
		if current(); currentErr != nil {
			return currentErr.Error()
		}
	}
	var gone []string
	for _, b := range bins {
		if _, err := exec.LookPath(b); b == "" || err != nil {
			gone = append(gone, b)
		}
	}
	if len(gone) == 0 {
		return ""
	}
	how := "bash scripts/install-deps.sh test, or apt-get install prometheus prometheus-alertmanager"
	if f.Name == "current" {
		how = "bash scripts/install-deps.sh test builds them"
	}
	return fmt.Sprintf("%s flavor: %s not found (%s)", f.Name, strings.Join(gone, ", "), how)
}

// Tool returns bin, a binary of the flavor the test runs itself (promtool,
// amtool), after need.
func (f Flavor) Tool(t testing.TB, bin string) string {
	t.Helper()
	f.need(t, bin)
	return bin
}

// need skips the test under -short, and when one of the binaries is
// missing: the test fails instead when PROMTEST_REQUIRE is set (see
// testkit.Tool).
func (f Flavor) need(t testing.TB, bins ...string) {
	t.Helper()
	testkit.SkipIfShort(t, f.Name+" Prometheus or Alertmanager")
	if why := f.missing(bins...); why != "" {
		if os.Getenv(testkit.EnvRequire) != "" {
			t.Fatalf("%s and %s is set", why, testkit.EnvRequire)
		}
		t.Skip(why)
	}
}

// StartPrometheus starts this flavor's Prometheus (see the package's
// StartPrometheus).
func (f Flavor) StartPrometheus(t testing.TB, config string, files Files, flags ...string) *Server {
	t.Helper()
	f.need(t, f.Prometheus)
	return launch(t, f, f.Prometheus, "prometheus", config, files, append([]string{
		"--storage.tsdb.path=data",
		"--web.enable-lifecycle",
	}, flags...))
}

// StartAlertmanager starts this flavor's Alertmanager (see the package's
// StartAlertmanager).
func (f Flavor) StartAlertmanager(t testing.TB, config string, flags ...string) *Server {
	t.Helper()
	f.need(t, f.Alertmanager)
	return launch(t, f, f.Alertmanager, "alertmanager", config, nil, append([]string{
		"--storage.path=data",
		"--cluster.listen-address=", // no gossip port, no peers
	}, flags...))
}

// Flavored is what Each runs over: a Flavor, or a Server or an Alerting
// stack of one.
type Flavored interface{ FlavorName() string }

// Each runs fn for every item as a subtest named after its flavor
// (TestX/debian, TestX/current), all at once, and returns when every one
// has: one injected fault, every stack watched at the same time, so the
// wall time is the slowest stack's, not the sum. fn runs in the subtest's
// own goroutine, so it may call t.Fatal; the caller's deferred calls have
// not run yet (unlike t.Parallel subtests, which start only after the
// caller returns).
//
//	stacks := promtest.StartAlertingEach(t, promtest.AlertingOptions{Rules: rules, Target: exporter})
//	// ... inject the fault once ...
//	promtest.Each(t, stacks, func(t *testing.T, a *promtest.Alerting) {
//		page := a.AwaitPage(t, stall, 4*time.Minute)
//		promtest.ExpectOnlyOutboxStallPage(t, a, page, stall, want)
//	})
func Each[T Flavored](t *testing.T, items []T, fn func(t *testing.T, item T)) {
	t.Helper()
	var wg sync.WaitGroup
	for _, it := range items {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.Run(it.FlavorName(), func(t *testing.T) { fn(t, it) })
		}()
	}
	wg.Wait()
}

// available returns the flavors that have every binary bins names, for
// the Start...Each functions: a flavor without them is left out and
// logged, or fails the test when PROMTEST_REQUIRE is set; the test skips
// under -short and when none is left.
func available(t testing.TB, bins func(Flavor) []string) []Flavor {
	t.Helper()
	testkit.SkipIfShort(t, "Prometheus or Alertmanager")
	var out []Flavor
	var why []string
	for _, f := range Flavors(t) {
		if w := f.missing(bins(f)...); w != "" {
			why = append(why, w)
			continue
		}
		out = append(out, f)
	}
	for _, w := range why {
		if os.Getenv(testkit.EnvRequire) != "" {
			t.Fatalf("%s and %s is set", w, testkit.EnvRequire)
		}
		t.Logf("left out: %s", w)
	}
	if len(out) == 0 {
		t.Skipf("no flavor of Prometheus and Alertmanager: %s", strings.Join(why, "; "))
	}
	return out
}

// StartPrometheusEach starts one Prometheus of every flavor whose binary is
// there (see available), each with the same configuration and files: for
// a test that checks the same scrape on both.
func StartPrometheusEach(t testing.TB, config string, files Files, flags ...string) []*Server {
	t.Helper()
	var out []*Server
	for _, f := range available(t, func(f Flavor) []string { return []string{f.Prometheus} }) {
		out = append(out, f.StartPrometheus(t, config, files, flags...))
	}
	return out
}

// StartAlertingEach starts one alerting stack (StartAlerting) of every
// flavor whose binaries are there (see available): each Prometheus scrapes
// o.Target and evaluates o.Rules, and sends to its own Alertmanager, which
// delivers to its own Receiver. Watch them with Each.
func StartAlertingEach(t testing.TB, o AlertingOptions) []*Alerting {
	t.Helper()
	var out []*Alerting
	for _, f := range available(t, func(f Flavor) []string { return []string{f.Prometheus, f.Alertmanager} }) {
		out = append(out, f.StartAlerting(t, o))
	}
	return out
}
