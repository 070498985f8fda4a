// Package signature reduces an error message to its signature: the
// message with what differs from one occurrence of the same failure to the
// next (ids, long numbers, UUIDs, quoted values, timestamps) masked, so
// that the failures of one cause group together.
//
// "order 4711 timed out after 30012 ms" and "order 4712 timed out after
// 30007 ms" are both "order <n> timed out after <n> ms"; "connection
// refused" and "read timed out" stay apart. The rules, in order, and why:
//
//  1. At most MaxInput bytes of the message are read, invalid UTF-8
//     becomes U+FFFD and control characters (newlines, tabs) spaces: a
//     message of megabytes, a stack trace or a binary payload still gives
//     a short, valid label value.
//  2. Quoted values ('x', "x", `x`) become <q>: they carry the data a
//     failure was about (a key, a name, a path), which varies by
//     occurrence.
//  3. Timestamps (ISO 8601 dates with or without a time, and times of
//     day) become <time>.
//  4. UUIDs become <uuid> (Camunda's own ids, and most business ids).
//  5. Hex ids become <hex>: 0x-prefixed numbers, and runs of 8 or more hex
//     digits that hold at least one digit and one letter (so that English
//     words made of the letters a to f stay, and decimal numbers are left
//     to rule 6).
//  6. Numbers with a fraction, and integers of four or more digits,
//     become <n>, also inside a word ("order-4711", "ORD4711"). Integers of
//     one to three digits stay: they are mostly codes (HTTP 404 versus
//     503, a SQL state, an exit status) that tell causes apart, and
//     counts small enough not to split a group much.
//  7. Runs of spaces become one; the result is trimmed and capped at
//     MaxRunes runes (an ellipsis marks the cut).
//
// An empty message (or one that is empty after rule 1) has the signature
// NoMessage.
package signature

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

const (
	// MaxInput is how many bytes of a message are read.
	MaxInput = 4096
	// MaxRunes caps a signature's length.
	MaxRunes = 120
	// NoMessage is the signature of an empty message.
	NoMessage = "(no message)"
)

// masks are the rules 2 to 6, in order: each sees what the previous left.
var masks = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`'[^']*'|"[^"]*"|` + "`[^`]*`"), "<q>"},
	{regexp.MustCompile(`\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?|\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b`), "<time>"},
	{regexp.MustCompile(`(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`), "<uuid>"},
	{regexp.MustCompile(`(?i)\b0x[0-9a-f]+\b|\b[a-f]*\d[0-9a-f]*\b`), ""}, // hex: filtered in hexOrKeep
	{regexp.MustCompile(`\d+[.,]\d+|\d{4,}`), "<n>"},
}

// Of returns the signature of an error message.
func Of(msg string) string {
	if len(msg) > MaxInput {
		msg = msg[:MaxInput]
	}
	msg = strings.ToValidUTF8(msg, "\uFFFD")
	msg = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, msg)
	for i, m := range masks {
		if i == 3 {
			msg = m.re.ReplaceAllStringFunc(msg, hexOrKeep)
			continue
		}
		msg = m.re.ReplaceAllString(msg, m.with)
	}
	msg = strings.Join(strings.Fields(msg), " ")
	if msg == "" {
		return NoMessage
	}
	if utf8.RuneCountInString(msg) > MaxRunes {
		r := []rune(msg)
		msg = strings.TrimSpace(string(r[:MaxRunes-1])) + "…"
	}
	return msg
}

// hexOrKeep masks a hex id (rule 5): 0x-prefixed, or 8 or more hex digits
// with a letter among them. Shorter runs, and runs of decimal digits only,
// are left for the number rule.
func hexOrKeep(s string) string {
	if strings.HasPrefix(strings.ToLower(s), "0x") || (len(s) >= 8 && strings.ContainsAny(strings.ToLower(s), "abcdef")) {
		return "<hex>"
	}
	return s
}
