package config

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"

	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v3"

	"github.com/workflow-exporter/workflow-exporter/blocks/yamlkeys"
)

// checkDocument walks the parsed document alongside the Go types it decodes
// into and reports, by key path and line, what the decoder would report
// without naming the key. Which keys are durations is read from the types by
// reflection, so a new model.Duration field is covered without listing it
// here. A key the types do not know is reported by its full path, with the
// closest known key (yamlkeys.Unknown).
func checkDocument(doc *yaml.Node) error {
	w := &docWalker{}
	if doc != nil && doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		w.walk(doc.Content[0], reflect.TypeOf(Config{}), "")
	}
	return errors.Join(w.errs...)
}

type docWalker struct{ errs []error }

func (w *docWalker) add(key string, line int, format string, args ...any) {
	if key == "" {
		key = "the document"
	}
	w.errs = append(w.errs, fmt.Errorf("%s (line %d): %s", key, line, fmt.Sprintf(format, args...)))
}

var durationType = reflect.TypeOf(model.Duration(0))

// walk checks node n, written at key, which decodes into a value of type t.
func (w *docWalker) walk(n *yaml.Node, t reflect.Type, key string) {
	line := n.Line
	for depth := 0; n.Kind == yaml.AliasNode && n.Alias != nil && depth < 100; depth++ {
		n = n.Alias
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == durationType {
		w.duration(n, key, line)
		return
	}
	if !w.shape(n, t, key, line) {
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		fields := yamlkeys.Fields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.ShortTag() == "!!merge" {
				w.walkMerge(v, t, key)
				continue
			}
			f, ok := fields[k.Value]
			if !ok {
				w.errs = append(w.errs, yamlkeys.Unknown(key, k.Value, k.Line, fields))
				continue
			}
			if isNull(v) && f.Type.Kind() == reflect.Pointer && f.Type.Elem().Kind() == reflect.Struct {
				w.add(yamlkeys.Join(key, k.Value), k.Line, "has no value; %s", emptySectionAdvice(f.Type.Elem()))
				continue
			}
			w.walk(v, f.Type, yamlkeys.Join(key, k.Value))
		}
	case reflect.Map:
		for i := 0; i+1 < len(n.Content); i += 2 {
			w.walk(n.Content[i+1], t.Elem(), yamlkeys.Join(key, n.Content[i].Value))
		}
	case reflect.Slice, reflect.Array:
		for i, c := range n.Content {
			w.walk(c, t.Elem(), fmt.Sprintf("%s[%d]", key, i))
		}
	}
}

// shape reports, by key and line, a value of the wrong kind for t: a
// single value where a mapping or a list is due, a list where a single
// value is due, text where a number or true/false is due. The decoder
// would refuse the same, naming a Go type instead of the key. It says
// whether the walk may go into n. A null is the zero value, always fine.
func (w *docWalker) shape(n *yaml.Node, t reflect.Type, key string, line int) bool {
	if isNull(n) {
		return false
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		if n.Kind != yaml.MappingNode {
			w.add(key, line, "must be a mapping (key: value lines or {key: value}), not %s", describeNode(n))
			return false
		}
	case reflect.Slice, reflect.Array:
		if n.Kind != yaml.SequenceNode {
			w.add(key, line, "must be a list (- item lines or [a, b]), not %s", describeNode(n))
			return false
		}
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			w.add(key, line, "must be a single value, not %s", describeNode(n))
			return false
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if !decodes(n, reflect.New(t).Interface()) {
			w.add(key, line, "must be a whole number, not %s", describeNode(n))
			return false
		}
	case reflect.Float32, reflect.Float64:
		if !decodes(n, reflect.New(t).Interface()) {
			w.add(key, line, "must be a number, not %s", describeNode(n))
			return false
		}
	case reflect.Bool:
		if !decodes(n, reflect.New(t).Interface()) {
			w.add(key, line, "must be true or false, not %s", describeNode(n))
			return false
		}
	}
	return true
}

// decodes says whether the decoder takes the scalar n into out.
func decodes(n *yaml.Node, out any) bool {
	return n.Kind == yaml.ScalarNode && n.Decode(out) == nil
}

// describeNode names what a node holds, for errors: a mapping, a list, or
// the value itself (cut short).
func describeNode(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	v := n.Value
	if len(v) > 40 {
		v = v[:40] + "..."
	}
	return fmt.Sprintf("%q", v)
}

// walkMerge follows a "<<" merge key: its mapping (or list of mappings)
// fills the same struct.
func (w *docWalker) walkMerge(v *yaml.Node, t reflect.Type, key string) {
	for depth := 0; v.Kind == yaml.AliasNode && v.Alias != nil && depth < 100; depth++ {
		v = v.Alias
	}
	if v.Kind == yaml.SequenceNode {
		for _, c := range v.Content {
			w.walk(c, t, key)
		}
		return
	}
	w.walk(v, t, key)
}

// isNull says whether n is YAML's null: "key:" with nothing after it, "~"
// or "null".
func isNull(n *yaml.Node) bool {
	for depth := 0; n.Kind == yaml.AliasNode && n.Alias != nil && depth < 100; depth++ {
		n = n.Alias
	}
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// emptySectionAdvice says what to write instead of an optional section
// (a pointer to a struct) left without a value. The decoder would read such
// a key as absent, so "idempotency:" with nothing under it would silently
// unwatch the table.
func emptySectionAdvice(t reflect.Type) string {
	if t == reflect.TypeOf(Tables{}) {
		return "omit the key to watch all four tables with their default names, or list the tables under it"
	}
	if t == reflect.TypeOf(OutboxRelay{}) {
		return "name the logical replication slot the relay reads, relay: {slot: NAME} (or remove the key)"
	}
	return "write {} for the defaults (or remove the key to leave it out)"
}

var wholeNumberRE = regexp.MustCompile(`^[0-9]+$`)

func (w *docWalker) duration(n *yaml.Node, key string, line int) {
	if n.Kind != yaml.ScalarNode {
		w.add(key, line, "must be a duration such as 30s")
		return
	}
	if isNull(n) {
		return // no value: the default
	}
	if _, err := model.ParseDuration(n.Value); err == nil {
		return
	}
	if wholeNumberRE.MatchString(n.Value) {
		w.add(key, line, "%q is not a duration; give a unit, e.g. %ss", n.Value, n.Value)
		return
	}
	w.add(key, line, "%q is not a duration; write it like 30s, 5m or 1h30m (whole numbers with the units ms, s, m, h, d, w, y)", n.Value)
}
