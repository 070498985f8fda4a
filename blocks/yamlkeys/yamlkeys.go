// Package yamlkeys names the keys of a YAML document that the Go type it
// decodes into does not know, by their full path and line, with the closest
// known key as a suggestion:
//
//	databases[0].tabels (line 4): unknown key; did you mean databases[0].tables?
//
// The exporter's config, the alerts config and the dashboards config use it
// before their strict decode, whose own message ("field tabels not found in
// type config.Database") names a Go type instead of the key.
package yamlkeys

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Decode decodes the YAML document data into v, a pointer to a struct
// (decoded on top of what it holds): first as a node tree, which it
// checks (Check) so that an unknown key is named by its path with the
// closest known key, then strictly (KnownFields). It returns the node tree
// for callers that name lines of their own. An empty document leaves v as
// it is.
func Decode(data []byte, v any) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if err := Check(&doc, reflect.TypeOf(v).Elem(), ""); err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return &doc, nil
}

// Check walks doc (a document node, or the value node itself) alongside type
// t and returns one error per unknown key, joined, or nil. prefix is put in
// front of every path ("" for the document root).
func Check(doc *yaml.Node, t reflect.Type, prefix string) error {
	if doc == nil {
		return nil
	}
	n := doc
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return nil
		}
		n = n.Content[0]
	}
	var errs []error
	walk(n, t, prefix, &errs)
	return errors.Join(errs...)
}

func walk(n *yaml.Node, t reflect.Type, key string, errs *[]error) {
	n = deref(n)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return
		}
		fields := Fields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.ShortTag() == "!!merge" {
				v = deref(v)
				if v.Kind == yaml.SequenceNode {
					for _, c := range v.Content {
						walk(c, t, key, errs)
					}
				} else {
					walk(v, t, key, errs)
				}
				continue
			}
			f, ok := fields[k.Value]
			if !ok {
				*errs = append(*errs, Unknown(key, k.Value, k.Line, fields))
				continue
			}
			walk(v, f.Type, Join(key, k.Value), errs)
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			walk(n.Content[i+1], t.Elem(), Join(key, n.Content[i].Value), errs)
		}
	case reflect.Slice, reflect.Array:
		if n.Kind != yaml.SequenceNode {
			return
		}
		for i, c := range n.Content {
			walk(c, t.Elem(), fmt.Sprintf("%s[%d]", key, i), errs)
		}
	}
}

func deref(n *yaml.Node) *yaml.Node {
	for depth := 0; n.Kind == yaml.AliasNode && n.Alias != nil && depth < 100; depth++ {
		n = n.Alias
	}
	return n
}

// Unknown is the error for key name, unknown in the mapping at parent (a
// path, "" for the root), written on line: its full path, and the closest of
// the known keys, or all of them when none is close.
func Unknown(parent, name string, line int, known map[string]reflect.StructField) error {
	names := make([]string, 0, len(known))
	for k := range known {
		names = append(names, k)
	}
	sort.Strings(names)
	msg := "unknown key"
	if c := Closest(name, names); c != "" {
		msg += "; did you mean " + Join(parent, c) + "?"
	} else if len(names) > 0 {
		msg += "; the keys here are " + strings.Join(names, ", ")
	}
	return fmt.Errorf("%s (line %d): %s", Join(parent, name), line, msg)
}

// Join appends a key to a path.
func Join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// Closest returns the known name nearest to name by edit distance (ignoring
// case, '-' and '_' count as the same), or "" when none is near enough to be
// a likely typo: at most a third of the longer name's length (at least 1), or
// the only known key that contains name or is contained in it.
func Closest(name string, known []string) string {
	norm := func(s string) string { return strings.ReplaceAll(strings.ToLower(s), "-", "_") }
	best, bestD := "", -1
	for _, k := range known {
		d := distance(norm(name), norm(k))
		if bestD < 0 || d < bestD || (d == bestD && k < best) {
			best, bestD = k, d
		}
	}
	if bestD < 0 {
		return ""
	}
	limit := max(len(name), len(best)) / 3
	if limit < 1 {
		limit = 1
	}
	if bestD <= limit {
		return best
	}
	// A key that contains the other (min_interval for interval) is a likely
	// mix-up too, if only one known key does.
	var found []string
	for _, k := range known {
		if strings.Contains(norm(k), norm(name)) || strings.Contains(norm(name), norm(k)) {
			found = append(found, k)
		}
	}
	if len(found) == 1 {
		return found[0]
	}
	return ""
}

// distance is the optimal string alignment distance: insertions, deletions,
// substitutions and transpositions of adjacent characters cost 1 each.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// Fields maps the YAML key names of struct type t to its fields, the way
// go.yaml.in/yaml/v3 names them: the yaml tag's name, else the lowercased
// field name; "-" is skipped and ",inline" structs contribute their own keys.
func Fields(t reflect.Type) map[string]reflect.StructField {
	m := map[string]reflect.StructField{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("yaml")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if strings.Contains(","+opts+",", ",inline,") {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range Fields(ft) {
					m[k] = v
				}
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		m[name] = f
	}
	return m
}
