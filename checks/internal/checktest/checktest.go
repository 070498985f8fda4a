// Package checktest holds what the checks' tests share: reading a committed
// file into a type and rendering the dashboards with options.
package checktest

import (
	"os"
	"testing"

	"github.com/workflow-exporter/workflow-exporter/dashboards"
)

// Decode reads the file at path and decodes it into a T with unmarshal
// (yaml.Unmarshal, json.Unmarshal), failing the test on either error.
func Decode[T any](t testing.TB, path string, unmarshal func([]byte, any) error) T {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v T
	if err := unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

// RenderDashboards renders the dashboards with the options of the YAML
// document opts, as `render dashboards` does with a config file.
func RenderDashboards(t testing.TB, opts string) []dashboards.Dashboard {
	t.Helper()
	o, err := dashboards.ParseOptions([]byte(opts))
	if err != nil {
		t.Fatal(err)
	}
	ds, err := dashboards.Render(o)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}
