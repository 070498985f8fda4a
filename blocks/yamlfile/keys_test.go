package yamlfile

import (
	"strings"
	"testing"
)

type inner struct {
	MinInterval string `yaml:"min_interval"`
	Timeout     string `yaml:"timeout"`
}

type outer struct {
	Name      string           `yaml:"name"`
	Databases []inner          `yaml:"databases"`
	ByName    map[string]inner `yaml:"by_name"`
	Ptr       *inner           `yaml:"ptr"`
	Embedded  `yaml:",inline"`
	Skipped   string `yaml:"-"`
}

type Embedded struct {
	Selector string `yaml:"selector"`
}

func check(t *testing.T, doc string) string {
	t.Helper()
	var v outer
	if _, err := Decode([]byte(doc), &v, Options{}); err != nil {
		return err.Error()
	}
	return ""
}

func TestUnknownKeysByPathWithSuggestion(t *testing.T) {
	cases := []struct{ doc, want string }{
		{"name: x\nselector: y\ndatabases: [{min_interval: 1s}]\nby_name: {a: {timeout: 1s}}\nptr: {timeout: 2s}\n", ""},
		{"nmae: x\n", "nmae (line 1): unknown key; did you mean name?"}, //nolint:misspell // the typo is the input
		{"databases:\n  - {min_interval: 1s}\n  - min_intervall: 1s\n", "databases[1].min_intervall (line 3): unknown key; did you mean databases[1].min_interval?"},
		{"by_name: {orders: {timout: 1s}}\n", "by_name.orders.timout (line 1): unknown key; did you mean by_name.orders.timeout?"},
		{"ptr:\n  interval: 1s\n", "ptr.interval (line 2): unknown key; did you mean ptr.min_interval?"},
		{"selektor: a\n", "selektor (line 1): unknown key; did you mean selector?"},
		{"Skipped: a\n", "Skipped (line 1): unknown key; the keys here are by_name, databases, name, ptr, selector"},
		{"zzz: 1\n", "zzz (line 1): unknown key; the keys here are by_name, databases, name, ptr, selector"},
		{"base: &b {timeout: 1s, colour: red}\ndatabases: [{<<: *b}]\n", "databases[0].colour (line 1): unknown key"},
	}
	for _, tc := range cases {
		got := check(t, tc.doc)
		if tc.want == "" {
			if got != "" && !strings.HasPrefix(got, "base") {
				t.Errorf("%q: %s", tc.doc, got)
			}
			continue
		}
		if !strings.Contains(got, tc.want) {
			t.Errorf("%q:\n got %q\nwant %q", tc.doc, got, tc.want)
		}
	}
}

func TestClosest(t *testing.T) {
	known := []string{"stalled_window", "stalled_for", "growing_window", "oldest_age"}
	for name, want := range map[string]string{
		"stalled_windwo": "stalled_window",
		"stalled-for":    "stalled_for",
		"Oldest_Age":     "oldest_age",
		"colour":         "",
		"window":         "",
	} {
		if got := Closest(name, known); got != want {
			t.Errorf("Closest(%q) = %q, want %q", name, got, want)
		}
	}
}
