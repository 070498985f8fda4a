package yamlfile

import (
	"errors"
	"fmt"
	"slices"
)

// Errors collects the errors of a file, each with its key and the key's
// line in the document, and returns them all (Err), in the order of the
// document. Validation keeps going past the first error, so a user fixes
// the file in one round:
//
//	errs := doc.Errors()
//	add := errs.Add
//	if c.Timeout <= 0 {
//		add("databases[0].timeout", "must be a positive duration such as 30s")
//	}
//	return errs.Err()
type Errors struct {
	doc  *Document
	list []keyed
}

type keyed struct {
	line int
	err  error
}

// Errors returns a collector that resolves keys to lines in d. A nil
// Document gives errors without lines (a configuration built in code).
func (d *Document) Errors() *Errors { return &Errors{doc: d} }

// Add records the error format (with args) at key, a path such as
// databases[0].tables.outbox.table; "" is the document itself. The message
// reads `key (line N): what is wrong`, or `key: what is wrong` when the
// document has no part of the path.
func (e *Errors) Add(key, format string, args ...any) {
	e.at(key, e.doc.Line(key), fmt.Sprintf(format, args...))
}

// at records msg at key, written on line (0: unknown).
func (e *Errors) at(key string, line int, msg string) {
	if key == "" {
		key = "the document"
	}
	where := key
	if line > 0 {
		where = fmt.Sprintf("%s (line %d)", key, line)
	}
	e.list = append(e.list, keyed{line: line, err: fmt.Errorf("%s: %s", where, msg)})
}

// Len returns how many errors were recorded.
func (e *Errors) Len() int { return len(e.list) }

// Err returns every recorded error joined (one a line), in the order of
// their lines in the document; errors at the same line, and those without
// a line (which come last), in the order they were added. Nil when there
// are none.
func (e *Errors) Err() error {
	list := slices.Clone(e.list)
	slices.SortStableFunc(list, func(a, b keyed) int {
		switch {
		case a.line == b.line:
			return 0
		case a.line == 0:
			return 1
		case b.line == 0:
			return -1
		}
		return a.line - b.line
	})
	errs := make([]error, len(list))
	for i, k := range list {
		errs[i] = k.err
	}
	return errors.Join(errs...)
}
