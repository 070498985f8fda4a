package camundatest

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

// sharedEngines is the only package-level mutable state: one engine per (flavor, credentials) for
// the whole `go test` process, so the JVM start-up is paid once however many tests ask, and so
// Main can stop them all at exit. It cannot live in a value the tests pass around because tests of
// different files and packages' TestMain need to reach the same engines.
var sharedEngines = struct {
	mu      sync.Mutex
	entries map[string]*sharedEntry
}{entries: map[string]*sharedEntry{}}

type sharedEntry struct {
	once sync.Once
	e    *Engine
	err  error
}

// Shared returns the process-wide engine of a flavor without authentication, starting it on first
// use. It skips the test under `go test -short` and fails it if the engine cannot be built or
// started (missing java/mvn included). Tests must not Stop it; Main does. Tests sharing it must
// use their own process keys and topics (see UniqueName).
func Shared(t testing.TB, flavor Flavor) *Engine {
	t.Helper()
	return SharedWith(t, Options{Flavor: flavor})
}

// SharedWith is Shared with options; engines are shared per set of options.
func SharedWith(t testing.TB, opts Options) *Engine {
	t.Helper()
	testkit.SkipIfShort(t, "a Camunda engine (a JVM)")
	if opts.Flavor == "" {
		opts.Flavor = FlavorCamunda
	}
	key := fmt.Sprintf("%s|%s|%s|%s|%q|%s|%q", opts.Flavor, opts.Username, opts.Password, opts.TimeZone, opts.ExtraArgs, opts.PostgresURL, opts.JVMArgs)
	sharedEngines.mu.Lock()
	entry := sharedEngines.entries[key]
	if entry == nil {
		entry = &sharedEntry{}
		sharedEngines.entries[key] = entry
	}
	sharedEngines.mu.Unlock()
	entry.once.Do(func() {
		entry.e, entry.err = Start(context.Background(), opts)
		if entry.err == nil {
			t.Logf("camundatest: started shared %s engine %s at %s in %s",
				opts.Flavor, entry.e.Version, entry.e.BaseURL, entry.e.StartupTime.Round(100_000_000))
		}
	})
	if entry.err != nil {
		t.Fatalf("camundatest: shared %s engine: %v", opts.Flavor, entry.err)
	}
	if entry.e.Exited() {
		t.Fatalf("camundatest: shared %s engine has exited\n%s", opts.Flavor, entry.e.LogTail(4000))
	}
	return entry.e
}

// StopShared stops every shared engine. Main calls it; call it yourself if you run m.Run otherwise.
func StopShared() {
	sharedEngines.mu.Lock()
	defer sharedEngines.mu.Unlock()
	for key, entry := range sharedEngines.entries {
		if entry.e != nil {
			entry.e.Stop()
		}
		delete(sharedEngines.entries, key)
	}
}

// Main runs the tests and stops the shared engines before exiting. Use it in TestMain:
//
//	func TestMain(m *testing.M) { camundatest.Main(m) }
func Main(m *testing.M) { testkit.Main(m, StopShared) }
