package rules

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

// docs/alerts.md gives every alert's severity with its reason, and every
// inhibition with its reason: the tables follow Alerts() and Inhibitions().
func TestDocsGiveEverySeverityAndInhibition(t *testing.T) {
	b, err := os.ReadFile(testkit.Path(t, "docs/alerts.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, a := range Alerts() {
		row := regexp.MustCompile("(?m)^\\| `" + a.Name + "` \\| ([a-z]+) \\| (?:[^|]|\\\\\\|)+ \\| (.+) \\|$").FindStringSubmatch(doc)
		switch {
		case row == nil:
			t.Errorf("docs/alerts.md: no row `| `%s` | severity | fires when | reasoning |` in \"Thresholds and why\"", a.Name)
		case row[1] != a.Severity:
			t.Errorf("docs/alerts.md: %s has severity %s, the rules say %s", a.Name, row[1], a.Severity)
		case strings.TrimSpace(row[2]) == "":
			t.Errorf("docs/alerts.md: %s: no reason", a.Name)
		}
	}
	for _, in := range Inhibitions() {
		want := "| `" + in.Source + "` | `" + strings.Join(in.Targets, "`, `") + "`; " + strings.Join(in.Equal, ", ") + " | " + in.Why + " |"
		if !strings.Contains(doc, want) {
			t.Errorf("docs/alerts.md: the inhibition table lacks\n%s", want)
		}
	}
}
