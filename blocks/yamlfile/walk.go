package yamlfile

import (
	"fmt"
	"reflect"
	"regexp"

	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v3"
)

// walker goes through a document alongside the Go type it decodes into and
// reports, by key path and line, what the decoder would refuse naming a Go
// type instead of the key, or would take silently. Which values are
// durations, sections or lists is read from the types by reflection, so a
// new field is covered without listing it here.
type walker struct {
	errs *Errors
	opts Options
}

var (
	durationType    = reflect.TypeOf(model.Duration(0))
	unmarshalerType = reflect.TypeOf((*yaml.Unmarshaler)(nil)).Elem()
)

// walk checks node n, written at key, which decodes into a value of type t.
func (w *walker) walk(n *yaml.Node, t reflect.Type, key string) {
	line := n.Line
	n = deref(n)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == durationType {
		w.duration(n, key, line)
		return
	}
	if t.Kind() != reflect.Struct && reflect.PointerTo(t).Implements(unmarshalerType) {
		return // a value that reads itself: the decoder's to check
	}
	if !w.shape(n, t, key, line) {
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		fs := fields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.ShortTag() == "!!merge" {
				w.walkMerge(v, t, key)
				continue
			}
			f, ok := fs[k.Value]
			if !ok {
				w.errs.at(join(key, k.Value), k.Line, unknown(key, k.Value, fs))
				continue
			}
			if isNull(v) && f.Type.Kind() == reflect.Pointer && f.Type.Elem().Kind() == reflect.Struct {
				w.errs.at(join(key, k.Value), k.Line, "has no value; "+w.emptySectionAdvice(f.Type.Elem()))
				continue
			}
			w.walk(v, f.Type, join(key, k.Value))
		}
	case reflect.Map:
		for i := 0; i+1 < len(n.Content); i += 2 {
			w.walk(n.Content[i+1], t.Elem(), join(key, n.Content[i].Value))
		}
	case reflect.Slice, reflect.Array:
		for i, c := range n.Content {
			w.walk(c, t.Elem(), fmt.Sprintf("%s[%d]", key, i))
		}
	}
}

// walkMerge follows a "<<" merge key: its mapping (or list of mappings)
// fills the same struct.
func (w *walker) walkMerge(v *yaml.Node, t reflect.Type, key string) {
	v = deref(v)
	if v.Kind == yaml.SequenceNode {
		for _, c := range v.Content {
			w.walk(c, t, key)
		}
		return
	}
	w.walk(v, t, key)
}

// emptySectionAdvice says what to write instead of an optional section of
// type t left without a value.
func (w *walker) emptySectionAdvice(t reflect.Type) string {
	if a, ok := w.opts.EmptySection[t]; ok {
		return a
	}
	return DefaultEmptySectionAdvice
}

// shape reports, by key and line, a value of the wrong kind for t: a
// single value where a mapping or a list is due, a list where a single
// value is due, text where a number or true/false is due. It says whether
// the walk may go into n. A null is the zero value, always fine.
func (w *walker) shape(n *yaml.Node, t reflect.Type, key string, line int) bool {
	if isNull(n) {
		return false
	}
	wrong := func(format string) bool {
		w.errs.at(key, line, fmt.Sprintf(format, describe(n)))
		return false
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		if n.Kind != yaml.MappingNode {
			return wrong("must be a mapping (key: value lines or {key: value}), not %s")
		}
	case reflect.Slice, reflect.Array:
		if n.Kind != yaml.SequenceNode {
			return wrong("must be a list (- item lines or [a, b]), not %s")
		}
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			return wrong("must be a single value, not %s")
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if !decodes(n, t) {
			return wrong("must be a whole number, not %s")
		}
	case reflect.Float32, reflect.Float64:
		if !decodes(n, t) {
			return wrong("must be a number, not %s")
		}
	case reflect.Bool:
		if !decodes(n, t) {
			return wrong("must be true or false, not %s")
		}
	}
	return true
}

// decodes says whether the decoder takes the scalar n into a value of type t.
func decodes(n *yaml.Node, t reflect.Type) bool {
	return n.Kind == yaml.ScalarNode && n.Decode(reflect.New(t).Interface()) == nil
}

// describe names what a node holds, for errors: a mapping, a list, or the
// value itself (cut short).
func describe(n *yaml.Node) string {
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

var wholeNumberRE = regexp.MustCompile(`^[0-9]+$`)

// duration checks a model.Duration: a bare number gets the advice to give
// a unit, anything else the way to write one.
func (w *walker) duration(n *yaml.Node, key string, line int) {
	if n.Kind != yaml.ScalarNode {
		w.errs.at(key, line, "must be a duration such as 30s")
		return
	}
	if isNull(n) {
		return // no value: the default
	}
	if _, err := model.ParseDuration(n.Value); err == nil {
		return
	}
	if wholeNumberRE.MatchString(n.Value) {
		w.errs.at(key, line, fmt.Sprintf("%q is not a duration; give a unit, e.g. %ss", n.Value, n.Value))
		return
	}
	w.errs.at(key, line, fmt.Sprintf("%q is not a duration; write it like 30s, 5m or 1h30m (whole numbers with the units ms, s, m, h, d, w, y)", n.Value))
}
