// Package promlabel checks the Prometheus label names and label matchers
// that the YAML files give by hand: the extra labels of the alerts config
// and of an SLO file, the dashboards' cluster and namespace labels, and the
// selectors (label matchers without braces) that the alerts config, the
// SLO files and the dashboards add to every query. One check for each, so
// the three files accept the same things and refuse them in the same words.
package promlabel

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

var nameRE = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// ValidName reports whether s is a label name Prometheus accepts in a rule
// or a selector: letters, digits and _, not starting with a digit.
func ValidName(s string) bool { return nameRE.MatchString(s) }

// CheckName returns nil for a valid label name, else an error that says
// what a label name is.
func CheckName(s string) error {
	if ValidName(s) {
		return nil
	}
	return fmt.Errorf("%q is not a label name (letters, digits and _, not starting with a digit)", s)
}

// Selector is a list of label matchers without braces, as a YAML file
// writes one: `job="workflow-exporter", topic=~"billing.*"`. The empty
// selector matches every series. Check it (Matchers) before using it.
type Selector string

// Matcher is one label matcher of a selector.
type Matcher struct {
	Name string
	// Op is =, !=, =~ or !~.
	Op string
	// Value is the value without its quotes and escapes.
	Value string
}

// oneMatcherRE is one label matcher with a double-quoted value.
var oneMatcherRE = regexp.MustCompile(`^\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*("(?:[^"\\]|\\.)*")\s*$`)

// Matchers parses the selector. A trailing comma is allowed (PromQL allows
// it); braces, a matcher without a quoted value, a value that is not a
// valid double-quoted string and a regular expression that does not compile
// are errors naming the matcher and how to write it.
func (s Selector) Matchers() ([]Matcher, error) {
	str := strings.TrimSpace(string(s))
	if str == "" {
		return nil, nil
	}
	if strings.HasPrefix(str, "{") || strings.HasSuffix(str, "}") {
		return nil, fmt.Errorf("give the matchers without braces: %s", strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(str, "{"), "}")))
	}
	parts := splitMatchers(str)
	if len(parts) > 1 && strings.TrimSpace(parts[len(parts)-1]) == "" {
		parts = parts[:len(parts)-1] // the trailing comma
	}
	out := make([]Matcher, 0, len(parts))
	for _, p := range parts {
		m := oneMatcherRE.FindStringSubmatch(p)
		if m == nil {
			return nil, fmt.Errorf(`%q is not a label matcher: write a label name, one of = != =~ !~ and the value in double quotes, e.g. topic="billing.charge"`, strings.TrimSpace(p))
		}
		v, err := strconv.Unquote(m[3])
		if err != nil {
			return nil, fmt.Errorf("%q: the value %s is not a valid double-quoted string (escape \\ and \" with a backslash)", strings.TrimSpace(p), m[3])
		}
		if m[2] == "=~" || m[2] == "!~" {
			// Prometheus anchors the expression and compiles it with Go's
			// regexp package.
			if _, err := regexp.Compile("^(?:" + v + ")$"); err != nil {
				return nil, fmt.Errorf("%q: the value is not a regular expression: %w", strings.TrimSpace(p), err)
			}
		}
		out = append(out, Matcher{Name: m[1], Op: m[2], Value: v})
	}
	return out, nil
}

// splitMatchers splits s at the commas outside double quotes.
func splitMatchers(s string) []string {
	var parts []string
	var cur strings.Builder
	inQuote, escaped := false, false
	for _, r := range s {
		switch {
		case escaped:
			escaped = false
		case r == '\\' && inQuote:
			escaped = true
		case r == '"':
			inQuote = !inQuote
		case r == ',' && !inQuote:
			parts = append(parts, cur.String())
			cur.Reset()
			continue
		}
		cur.WriteRune(r)
	}
	return append(parts, cur.String())
}

// Labels returns the label names the selector matches on, in its order;
// none for a selector that does not parse.
func (s Selector) Labels() []string {
	ms, _ := s.Matchers()
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Name
	}
	return out
}

// String returns the matchers as written, to go between braces: without
// the surrounding white space and the trailing comma.
func (s Selector) String() string {
	return strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(string(s)), ","))
}
