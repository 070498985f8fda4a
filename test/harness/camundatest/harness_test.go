package camundatest_test

import (
	"context"
	"encoding/xml"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/sim/engineclient"
	"github.com/workflow-exporter/workflow-exporter/test/harness/camundatest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

func TestExternalTaskProcessIsWellFormed(t *testing.T) {
	b := engineclient.ExternalTaskProcess("p_x", "a.topic", "b<&>topic")
	var doc struct {
		Process struct {
			ID    string `xml:"id,attr"`
			HTTL  string `xml:"http://camunda.org/schema/1.0/bpmn historyTimeToLive,attr"`
			Tasks []struct {
				ID    string `xml:"id,attr"`
				Topic string `xml:"http://camunda.org/schema/1.0/bpmn topic,attr"`
				Type  string `xml:"http://camunda.org/schema/1.0/bpmn type,attr"`
			} `xml:"serviceTask"`
		} `xml:"process"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("BPMN is not well-formed XML: %v\n%s", err, b)
	}
	p := doc.Process
	if p.ID != "p_x" || p.HTTL != "P1D" || len(p.Tasks) != 2 ||
		p.Tasks[0].Topic != "a.topic" || p.Tasks[1].Topic != "b<&>topic" || p.Tasks[1].ID != "task_2" || p.Tasks[0].Type != "external" {
		t.Fatalf("unexpected BPMN model %+v\n%s", p, b)
	}
}

func TestUniqueName(t *testing.T) {
	if got := camundatest.UniqueName("TestX/sub case", "camunda"); got != "p_TestX_sub_case_camunda" {
		t.Fatalf("UniqueName = %q", got)
	}
}

func TestSourceHashIsStable(t *testing.T) {
	seen := map[string]camundatest.Flavor{}
	for _, f := range camundatest.KnownFlavors() {
		a, err := camundatest.SourceHash(f)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := camundatest.SourceHash(f)
		if a != b || len(a) != 16 {
			t.Fatalf("%s: hash %q then %q", f, a, b)
		}
		if other, ok := seen[a]; ok {
			t.Fatalf("flavors %s and %s share a hash", f, other)
		}
		seen[a] = f
	}
	if _, err := camundatest.SourceHash("no-such-flavor"); err == nil || !strings.Contains(err.Error(), "unknown flavor") {
		t.Fatalf("unknown flavor: err = %v", err)
	}
}

func TestBuildNamesMissingTool(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := camundatest.Build(context.Background(), camundatest.FlavorCamunda)
	if err == nil || !strings.Contains(err.Error(), `"java"`) {
		t.Fatalf("Build without java in PATH: err = %v", err)
	}
	// java present, mvn missing.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "java"), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	_, err = camundatest.Build(context.Background(), camundatest.FlavorCamunda)
	if err == nil || !strings.Contains(err.Error(), `"mvn"`) {
		t.Fatalf("Build without mvn in PATH: err = %v", err)
	}
}

// TestBuildIsCached builds every flavor (a no-op when the cache is warm) and checks a second
// Build returns the same jar at once.
func TestBuildIsCached(t *testing.T) {
	testkit.SkipIfShort(t, "Maven")
	for _, f := range camundatest.Flavors() {
		start := time.Now()
		jar, err := camundatest.Build(context.Background(), f)
		if err != nil {
			t.Fatal(err)
		}
		first := time.Since(start)
		start = time.Now()
		again, err := camundatest.Build(context.Background(), f)
		if err != nil {
			t.Fatal(err)
		}
		if again != jar || time.Since(start) > 2*time.Second {
			t.Fatalf("%s: second Build gave %s after %s (first %s)", f, again, time.Since(start), jar)
		}
		t.Logf("%s: %s (first Build %s)", f, jar, first.Round(time.Millisecond))
	}
}

// TestStartFailureCarriesLogAndCleansUp starts an engine with a bad argument: the error must carry
// the JVM's output and no process may be left.
func TestStartFailureCarriesLogAndCleansUp(t *testing.T) {
	testkit.SkipIfShort(t, "a JVM")
	ctx := context.Background()
	_, err := camundatest.Start(ctx, camundatest.Options{
		Flavor:    camundatest.FlavorCamunda,
		ExtraArgs: []string{"--spring.datasource.url=jdbc:nosuchdriver:x"},
	})
	if err == nil {
		t.Fatal("Start with a broken datasource URL succeeded")
	}
	if !strings.Contains(err.Error(), "engine output (tail)") || !strings.Contains(err.Error(), "JVM exited") {
		t.Fatalf("error lacks the engine's output: %v", err)
	}
	var apiErr *engineclient.APIError
	if errors.As(err, &apiErr) {
		t.Fatalf("unexpected API error type: %v", err)
	}
}

// TestConcurrentColdBuild builds the camunda jar into an empty cache from two goroutines at once:
// the lock file must make them share one Maven run and one jar.
func TestConcurrentColdBuild(t *testing.T) {
	testkit.SkipIfShort(t, "Maven")
	cache := t.TempDir()
	t.Setenv("CAMUNDATEST_CACHE_DIR", cache)
	start := time.Now()
	type result struct {
		jar string
		err error
	}
	results := make(chan result, 2)
	for i := 0; i < 2; i++ {
		go func() {
			jar, err := camundatest.Build(context.Background(), camundatest.FlavorCamunda)
			results <- result{jar, err}
		}()
	}
	a, b := <-results, <-results
	if a.err != nil || b.err != nil {
		t.Fatalf("concurrent builds: %v / %v", a.err, b.err)
	}
	if a.jar != b.jar || !strings.HasPrefix(a.jar, cache) {
		t.Fatalf("concurrent builds gave %s and %s, want one jar under %s", a.jar, b.jar, cache)
	}
	builds, _ := filepath.Glob(filepath.Join(cache, "build-*"))
	jars, _ := filepath.Glob(filepath.Join(cache, "camunda-*", "test-engine.jar"))
	if len(builds) != 0 || len(jars) != 1 {
		t.Fatalf("cache after builds: scratch dirs %v, jars %v", builds, jars)
	}
	t.Logf("cold build (warm ~/.m2) of camunda: %s", time.Since(start).Round(100*time.Millisecond))
}

// TestPruneStaleKeepsOtherFlavors: pruning the camunda flavor's old jars must leave those of
// camunda-7.22 and the other releases, whose directories also start with "camunda-".
func TestPruneStaleKeepsOtherFlavors(t *testing.T) {
	cache := t.TempDir()
	dirs := map[string]bool{ // directory -> kept
		"camunda-0123456789abcdef":      true, // the current jar
		"camunda-fedcba9876543210":      false,
		"camunda-7.22-0123456789abcdef": true,
		"camunda-7.19-fedcba9876543210": true,
		"operaton-fedcba9876543210":     true,
	}
	for d := range dirs {
		if err := os.MkdirAll(filepath.Join(cache, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(cache, d, "test-engine.jar"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	camundatest.PruneStale(cache, camundatest.FlavorCamunda, filepath.Join(cache, "camunda-0123456789abcdef"))
	for d, kept := range dirs {
		if _, err := os.Stat(filepath.Join(cache, d)); (err == nil) != kept {
			t.Errorf("%s: exists = %v, want %v", d, err == nil, kept)
		}
	}
}
