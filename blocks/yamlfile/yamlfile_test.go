package yamlfile

import (
	"reflect"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
)

type section struct {
	Every model.Duration `yaml:"every"`
}

type special struct {
	Keys []string `yaml:"keys"`
}

type file struct {
	Name     string            `yaml:"name"`
	Count    int               `yaml:"count"`
	Ratio    float64           `yaml:"ratio"`
	On       *bool             `yaml:"on"`
	Window   model.Duration    `yaml:"window"`
	Items    []section         `yaml:"items"`
	ByName   map[string]string `yaml:"by_name"`
	Optional *section          `yaml:"optional"`
	Special  *special          `yaml:"special"`
}

var specialAdvice = Options{EmptySection: map[reflect.Type]string{reflect.TypeOf(special{}): "list its keys"}}

// TestDecodeNamesEveryMistakeByKeyAndLine: what the decoder would refuse
// naming a Go type, or take silently, is reported by key and line, every
// mistake at once, in the order of the document.
func TestDecodeNamesEveryMistakeByKeyAndLine(t *testing.T) {
	cases := []struct {
		name, doc string
		opts      Options
		want      string // "": accepted
	}{
		{"valid", "name: a\ncount: 3\nratio: 0.5\non: true\nwindow: 1h30m\nitems: [{every: 5m}]\nby_name: {x: y}\noptional: {}\n", Options{}, ""},
		{"empty", "", Options{}, ""},
		{"nulls are the defaults", "name:\ncount: ~\nwindow:\nitems: null\n", Options{}, ""},
		{"a scalar document", "0", Options{}, `the document (line 1): must be a mapping (key: value lines or {key: value}), not "0"`},
		{"every mistake, in order", "count: two\nname: [a]\nratio: x\non: maybe\nitems: {every: 5m}\nby_name: [x]\n", Options{},
			`count (line 1): must be a whole number, not "two"` + "\n" +
				`name (line 2): must be a single value, not a list` + "\n" +
				`ratio (line 3): must be a number, not "x"` + "\n" +
				`on (line 4): must be true or false, not "maybe"` + "\n" +
				`items (line 5): must be a list (- item lines or [a, b]), not a mapping` + "\n" +
				`by_name (line 6): must be a mapping (key: value lines or {key: value}), not a list`},
		{"durations", "window: 30\nitems:\n  - every: soon\n  - every: [1m]\n", Options{},
			`window (line 1): "30" is not a duration; give a unit, e.g. 30s` + "\n" +
				`items[0].every (line 3): "soon" is not a duration; write it like 30s, 5m or 1h30m (whole numbers with the units ms, s, m, h, d, w, y)` + "\n" +
				`items[1].every (line 4): must be a duration such as 30s`},
		{"through an anchor", "window: &w 20\nitems: [{every: *w}]\n", Options{},
			`window (line 1): "20" is not a duration; give a unit, e.g. 20s` + "\n" + `items[0].every (line 2): "20" is not a duration`},
		{"empty sections", "optional:\nspecial: ~\n", specialAdvice,
			"optional (line 1): has no value; write {} for the defaults (or remove the key to leave it out)\nspecial (line 2): has no value; list its keys"},
		{"unknown keys, merged too", "base: &b {every: 1m, evry: 2m}\nitems: [{<<: *b}]\n", Options{},
			"base (line 1): unknown key; the keys here are by_name, count, items, name, on, optional, ratio, special, window\n" +
				"items[0].evry (line 1): unknown key; did you mean items[0].every?"},
		{"a second document", "name: a\n---\nname: b\n", Options{}, "holds more than one YAML document (another starts at line 2); only the first would be read, so put everything in one document"},
		{"an empty second document", "name: a\n---\n# nothing\n", Options{}, ""},
		{"syntax", "name: [a\n", Options{}, "yaml: line 1: did not find expected ',' or ']'"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := file{Name: "default"}
			_, err := Decode([]byte(tc.doc), &v, tc.opts)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.want != "" && err == nil:
				t.Fatalf("accepted; want %q", tc.want)
			case tc.want != "" && !strings.HasPrefix(err.Error(), tc.want):
				t.Fatalf("error\n%v\nwant\n%s", err, tc.want)
			}
		})
	}
	// Decoded on top of what the value holds: keys left out keep it.
	v := file{Name: "default", Count: 7}
	if _, err := Decode([]byte("count: 3\n"), &v, Options{}); err != nil || v.Name != "default" || v.Count != 3 {
		t.Errorf("decoded %+v, %v; want the default name and count 3", v, err)
	}
}

// TestLineOfAKeyPath: a key path resolves to its key's line, an index to
// its item's, a key left out to the deepest part of the path the file has.
func TestLineOfAKeyPath(t *testing.T) {
	const doc = `databases:
  - name: a
    tables:
      outbox:
        table: x
  - &second
    name: b
    statuses: {"DONE.X": [a], DONE: [b]}
labels:
  team.name: x
copy:
  <<: *second
  extra: 1
`
	var v any
	d, err := Decode([]byte(doc), &v, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]int{
		"databases":                          1,
		"databases[0]":                       2,
		"databases[0].name":                  2,
		"databases[0].tables.outbox.table":   5,
		"databases[0].tables.outbox.columns": 4, // left out: its section
		"databases[0].tables.inbox":          3,
		"databases[1]":                       6,
		"databases[1].name":                  7,
		"databases[2].name":                  1, // no such item: the list
		"databases[x]":                       1,
		"databases[1].statuses.DONE.X":       8,
		"databases[1].statuses.DONE":         8,
		"labels.team.name":                   10,
		"copy.name":                          7, // merged in: where it is written
		"copy.extra":                         13,
		"status.max_items":                   0, // nothing of it in the file
		"":                                   0,
	} {
		if got := d.Line(path); got != want {
			t.Errorf("Line(%q) = %d, want %d", path, got, want)
		}
	}
	var nilDoc *Document
	if nilDoc.Line("databases") != 0 {
		t.Error("a nil document has lines")
	}
}

// TestErrorsInDocumentOrder: every error keeps its key and gains its line;
// they come in the order of the document, those without a line last.
func TestErrorsInDocumentOrder(t *testing.T) {
	var v any
	d, err := Decode([]byte("a: 1\nb:\n  c: 2\n"), &v, Options{})
	if err != nil {
		t.Fatal(err)
	}
	errs := d.Errors()
	if errs.Err() != nil {
		t.Fatal("no error recorded, yet Err is not nil")
	}
	add := errs.Add
	add("z", "not in the file %d", 1)
	add("b.c", "second %s", "key")
	add("b.d", "left out: its section")
	add("a", "first")
	add("", "the whole file")
	want := "a (line 1): first\nb.d (line 2): left out: its section\nb.c (line 3): second key\nz: not in the file 1\nthe document: the whole file"
	if errs.Len() != 5 || errs.Err().Error() != want {
		t.Errorf("%d errors:\n%v\nwant\n%s", errs.Len(), errs.Err(), want)
	}
	// Without a document (a value built in code): keys, no lines.
	var none *Document
	e := none.Errors()
	e.Add("b.c", "bad")
	if got := e.Err().Error(); got != "b.c: bad" {
		t.Errorf("%q", got)
	}
}
