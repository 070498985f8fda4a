// Package yamlfile loads the project's YAML files (the exporter's config,
// the alerts config, SLO files, the dashboards' options) one way, so that
// every mistake in any of them is reported alike: by its key path and line,
// with what is wrong and how to fix it, and all of them at once.
//
// Decode reads one document strictly into a struct. Before the decoder
// sees it, the document is walked alongside the Go type, and the mistakes
// the decoder would report naming a Go type, or not at all, are reported
// by key and line: an unknown key (with the closest known key), a value of
// the wrong shape, a duration without a unit, an optional section left
// without a value, a second document:
//
//	databases[0].tabels (line 4): unknown key; did you mean databases[0].tables?
//	databases[0].min_interval (line 5): "30" is not a duration; give a unit, e.g. 30s
//
// Errors then collects the validation errors of the decoded values, each
// with its key, and resolves the key to its line in the document (or to the
// line of the deepest part of the path the file has, for a key left out):
//
//	databases[0].tables.outbox.table (line 9): "a.b.c" is not a table name ...
package yamlfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Options adapt the walk to a file.
type Options struct {
	// EmptySection says, by the section's type, what to write instead of
	// an optional section (a pointer to a struct) left without a value
	// ("tables:" with nothing under it): the decoder would read it as left
	// out, which is rarely what the writer meant. Types not listed get
	// DefaultEmptySectionAdvice.
	EmptySection map[reflect.Type]string
}

// DefaultEmptySectionAdvice is what an optional section left without a
// value is told, unless Options.EmptySection says otherwise.
const DefaultEmptySectionAdvice = "write {} for the defaults (or remove the key to leave it out)"

// Document is a decoded file's node tree: where each key was written.
type Document struct {
	root *yaml.Node // the document's top node; nil for an empty file
}

// Decode decodes data, one YAML document, into v, a pointer to a struct
// (decoded on top of what it holds, so defaults set before stay where the
// file says nothing). Every mistake of the document's shape is reported at
// once, by key and line (see the package documentation); then the document
// is decoded strictly. An empty document leaves v as it is. The Document
// returned resolves keys to lines for the validation errors (Errors).
func Decode(data []byte, v any, opts Options) (*Document, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return nil, errors.New(friendlyError(err))
	}
	if err := noSecondDocument(dec); err != nil {
		return nil, err
	}
	d := &Document{}
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		d.root = doc.Content[0]
	}
	errs := d.Errors()
	if d.root != nil {
		w := &walker{errs: errs, opts: opts}
		w.walk(d.root, reflect.TypeOf(v).Elem(), "")
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	strict := yaml.NewDecoder(bytes.NewReader(data))
	strict.KnownFields(true)
	if err := strict.Decode(v); err != nil && !errors.Is(err, io.EOF) {
		return nil, errors.New(friendlyError(err))
	}
	return d, nil
}

// noSecondDocument refuses a stream that goes on after the first document:
// the decoder reads only the first one, so the rest would be ignored
// silently. A trailing "---" or a document of comments holds nothing and is
// accepted.
func noSecondDocument(dec *yaml.Decoder) error {
	var next yaml.Node
	err := dec.Decode(&next)
	switch {
	case errors.Is(err, io.EOF):
		return nil
	case err != nil:
		return fmt.Errorf("holds more than one YAML document (the second does not parse: %s); put everything in one document", friendlyError(err))
	case len(next.Content) == 0 || isNull(next.Content[0]):
		return noSecondDocument(dec)
	}
	return fmt.Errorf("holds more than one YAML document (another starts at line %d); only the first would be read, so put everything in one document", next.Line)
}

// friendlyError is a decoder's error without the Go types it names: the
// walk reports those mistakes by key first, so this is a fallback, and
// none may reach a user with a Go type name.
func friendlyError(err error) string {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs := make([]string, 0, len(te.Errors))
		for _, m := range te.Errors {
			// "field x not found in type config.Database": name the key.
			if i := strings.Index(m, " not found in type "); i > 0 {
				m = m[:i] + " is not a known key here"
				m = strings.Replace(m, "field ", "key ", 1)
			}
			msgs = append(msgs, goTypeRE.ReplaceAllString(m, ""))
		}
		return strings.Join(msgs, "; ")
	}
	return err.Error()
}

// goTypeRE matches the Go type a decoder's message names (" into
// config.Tables", " into []config.Database").
var goTypeRE = regexp.MustCompile(` into (\[\]|map\[[^\]]*\]|\*)*[a-z]+\.[A-Za-z]+`)

// Line returns the line of a key path such as databases[0].tables.outbox
// in the document: the line of its last key (of the list item, for a path
// that ends in an index). For a key the file leaves out, the line of the
// deepest part of the path it has (the section the key would go in); 0
// when it has none, or for a nil Document. Keys that hold dots are found
// too (the longest key that fits wins), and so are keys merged in with <<.
func (d *Document) Line(path string) int {
	if d == nil || d.root == nil {
		return 0
	}
	n, line, rest := d.root, 0, path
	for rest != "" {
		n = deref(n)
		if strings.HasPrefix(rest, "[") {
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return line
			}
			i, err := strconv.Atoi(rest[1:end])
			if err != nil || n.Kind != yaml.SequenceNode || i < 0 || i >= len(n.Content) {
				return line
			}
			n = n.Content[i]
			line, rest = n.Line, strings.TrimPrefix(rest[end+1:], ".")
			continue
		}
		k, v := lookup(n, rest, 0)
		if k == nil {
			return line
		}
		n, line, rest = v, k.Line, strings.TrimPrefix(rest[len(k.Value):], ".")
	}
	return line
}

// lookup finds, in mapping n, the longest key that path starts with (the
// whole path, or followed by . or [), first among n's own keys, then among
// the keys merged in with <<.
func lookup(n *yaml.Node, path string, depth int) (key, value *yaml.Node) {
	n = deref(n)
	if n.Kind != yaml.MappingNode || depth > 100 {
		return nil, nil
	}
	var merged []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if k.ShortTag() == "!!merge" {
			merged = append(merged, n.Content[i+1])
			continue
		}
		if k.Kind != yaml.ScalarNode || (key != nil && len(k.Value) <= len(key.Value)) {
			continue
		}
		if rest, ok := strings.CutPrefix(path, k.Value); ok && (rest == "" || rest[0] == '.' || rest[0] == '[') {
			key, value = k, n.Content[i+1]
		}
	}
	if key != nil {
		return key, value
	}
	for _, m := range merged {
		m = deref(m)
		sources := []*yaml.Node{m}
		if m.Kind == yaml.SequenceNode {
			sources = m.Content
		}
		for _, s := range sources {
			if k, v := lookup(s, path, depth+1); k != nil {
				return k, v
			}
		}
	}
	return nil, nil
}

// deref follows an alias to the node it names.
func deref(n *yaml.Node) *yaml.Node {
	for depth := 0; n.Kind == yaml.AliasNode && n.Alias != nil && depth < 100; depth++ {
		n = n.Alias
	}
	return n
}

// isNull says whether n is YAML's null: "key:" with nothing after it, "~"
// or "null".
func isNull(n *yaml.Node) bool {
	n = deref(n)
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}
