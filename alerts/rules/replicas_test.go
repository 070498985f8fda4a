package rules_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/workflow-exporter/workflow-exporter/test/harness/promtest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

var instanceRE = regexp.MustCompile(`instance="[^"]*"`)

// TestEveryCaseHoldsForTwoReplicas runs every promtool case of alerts/tests
// (but those that model several pods already) again with two replicas of
// the exporter: each input series doubled, once
// under instance "replica-a:7840" and pod "replica-a", once under
// "replica-b:7840" and "replica-b" (both replicas read the same sources and
// see the same values). promtool compares the firing alerts exactly, so a
// rule that kept instance or pod would fire twice where the case expects
// one alert, and fail. Run with both flavors' promtool (Debian's 2.42 and
// the current 3.x).
func TestEveryCaseHoldsForTwoReplicas(t *testing.T) {
	flavors := promtest.Flavors(t)
	files, err := filepath.Glob(testkit.Path(t, "alerts/tests/*.yml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("alerts/tests: %v %v", files, err)
	}
	dir := t.TempDir()
	var doubled []string
	cases := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := yaml.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		// The rule files, relative to the test file.
		var ruleFiles []any
		for _, r := range doc["rule_files"].([]any) {
			ruleFiles = append(ruleFiles, filepath.Join(filepath.Dir(f), r.(string)))
		}
		doc["rule_files"] = ruleFiles
		// The cases that already model several pods (reschedule*.yml,
		// replicas.yml) are left out: their series carry a pod.
		if strings.Contains(string(b), `pod="`) {
			continue
		}
		for _, tc := range doc["tests"].([]any) {
			tc := tc.(map[string]any)
			tc["name"] = "two replicas: " + tc["name"].(string)
			var series []any
			in, _ := tc["input_series"].([]any)
			for _, s := range in {
				s := s.(map[string]any)
				name := s["series"].(string)
				if !instanceRE.MatchString(name) {
					t.Fatalf("%s: %q: a case's series carry an instance", f, name)
				}
				for _, r := range []string{"replica-a", "replica-b"} {
					c := map[string]any{"values": s["values"],
						"series": instanceRE.ReplaceAllString(name, fmt.Sprintf(`instance="%s:7840", pod="%s"`, r, r))}
					series = append(series, c)
				}
			}
			tc["input_series"] = series
			cases++
		}
		out, err := yaml.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.Base(f))
		if err := os.WriteFile(p, out, 0o644); err != nil {
			t.Fatal(err)
		}
		doubled = append(doubled, p)
	}
	t.Logf("%d cases of %d files, each with two replicas", cases, len(doubled))
	promtest.Each(t, flavors, func(t *testing.T, fl promtest.Flavor) {
		out, err := exec.Command(fl.Tool(t, fl.Promtool), append([]string{"test", "rules"}, doubled...)...).CombinedOutput()
		if err != nil {
			var failed []string
			for _, l := range strings.Split(string(out), "\n") {
				if strings.Contains(l, "name: two replicas:") || strings.Contains(l, "alertname:") || strings.Contains(l, "Labels:") {
					failed = append(failed, strings.TrimSpace(l))
				}
			}
			t.Fatalf("promtool test rules with two replicas: %v\n%s", err, strings.Join(failed, "\n"))
		}
	})
}
