package collectortest

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

var update = flag.Bool("update", false, "rewrite the golden expositions (testdata/*.prom) from what the collectors serve")

// volatile are the exporter's self-metrics whose values are the
// collection's own wall-clock time and duration: a golden file leaves them
// out.
var volatile = []string{catalog.ExporterCollectDuration, catalog.ExporterLastSuccessfulCollect}

// Golden compares what c serves, in the text exposition format, with the
// golden file (testdata/NAME.prom of the test's package), so that a change
// to any served series (a name, a label, a value, a HELP text) shows up as
// a diff in review. Run the test with -update to rewrite the file, and read
// the diff before committing it.
func Golden(t *testing.T, c prometheus.Collector, name string) {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("# The exposition of " + name + ": what " + t.Name() + " serves, compared by the test.\n")
	b.WriteString("# Rewrite with: go test -run '^" + strings.Split(t.Name(), "/")[0] + "$' -update (and read the diff).\n")
	enc := expfmt.NewEncoder(&b, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range testkit.Gather(t, c) {
		if slices.Contains(volatile, mf.GetName()) {
			continue
		}
		if err := enc.Encode(mf); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join("testdata", name+".prom")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to write it)", err)
	}
	if got := b.String(); got != string(want) {
		t.Errorf("the served exposition differs from %s (run the test with -update, then review the diff):\n%s", path, lineDiff(string(want), got))
	}
}

// lineDiff lists the lines only in want (-) and only in got (+).
func lineDiff(want, got string) string {
	inWant, inGot := map[string]int{}, map[string]int{}
	for _, l := range strings.Split(want, "\n") {
		inWant[l]++
	}
	for _, l := range strings.Split(got, "\n") {
		inGot[l]++
	}
	var out []string
	for _, l := range strings.Split(want, "\n") {
		if inGot[l] == 0 {
			out = append(out, "- "+l)
		}
	}
	for _, l := range strings.Split(got, "\n") {
		if inWant[l] == 0 {
			out = append(out, "+ "+l)
		}
	}
	return strings.Join(out, "\n")
}
