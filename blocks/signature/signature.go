// Package signature reduces an error message to its signature: the
// message with what differs from one occurrence of the same failure to the
// next (ids, long numbers, UUIDs, quoted values, timestamps, e-mail
// addresses, tokens) masked, so that the failures of one cause group
// together, and so that a signature, which is a label value and shown on
// the status page, carries no person's address and no credential.
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
//  3. E-mail addresses become <email>: a customer's or an employee's
//     address varies by occurrence, and is personal data that a label
//     value (stored by Prometheus, shown on dashboards) must not hold.
//  4. Timestamps (ISO 8601 dates with or without a time, and times of
//     day) become <time>.
//  5. UUIDs become <uuid> (Camunda's own ids, and most business ids).
//  6. Hex ids become <hex>: 0x-prefixed numbers, and runs of 8 or more hex
//     digits that hold at least one digit and one letter (so that English
//     words made of the letters a to f stay, and decimal numbers are left
//     to rule 8).
//  7. Tokens become <token>: runs of 20 or more letters, digits, "_" and
//     "-" with at least two digits and two letters (API keys, access
//     tokens, a JWT's parts, session ids). A worker that puts its
//     credentials into an error message must not put them into a label.
//     Long words without digits (class names such as
//     ResourceAccessException, ORDER_FULFILLMENT_SUBMISSION) stay.
//  8. Numbers with a fraction, and integers of four or more digits,
//     become <n>, also inside a word ("order-4711", "ORD4711"). Integers of
//     one to three digits stay: they are mostly codes (HTTP 404 versus
//     503, a SQL state, an exit status) that tell causes apart, and
//     counts small enough not to split a group much.
//  9. Runs of spaces become one; the result is trimmed and capped at
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

// masks are the rules 2 to 8, in order: each sees what the previous left.
// A mask with keep set replaces only the matches keep does not keep.
var masks = []struct {
	re   *regexp.Regexp
	with string
	keep func(string) bool
}{
	{re: regexp.MustCompile(`'[^']*'|"[^"]*"|` + "`[^`]*`"), with: "<q>"},
	{re: regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}`), with: "<email>"},
	{re: regexp.MustCompile(`\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?|\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b`), with: "<time>"},
	{re: regexp.MustCompile(`(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`), with: "<uuid>"},
	{re: regexp.MustCompile(`(?i)\b0x[0-9a-f]+\b|\b[a-f]*\d[0-9a-f]*\b`), with: "<hex>", keep: notHexID},
	{re: regexp.MustCompile(`[A-Za-z0-9_-]{20,}`), with: "<token>", keep: notToken},
	{re: regexp.MustCompile(`\d+[.,]\d+|\d{4,}`), with: "<n>"},
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
	for _, m := range masks {
		if m.keep == nil {
			msg = m.re.ReplaceAllString(msg, m.with)
			continue
		}
		msg = m.re.ReplaceAllStringFunc(msg, func(s string) string {
			if m.keep(s) {
				return s
			}
			return m.with
		})
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

// notHexID keeps what rule 6 must not mask: a hex id is 0x-prefixed, or 8
// or more hex digits with a letter among them. Shorter runs, and runs of
// decimal digits only, are left for the number rule.
func notHexID(s string) bool {
	return !strings.HasPrefix(strings.ToLower(s), "0x") && (len(s) < 8 || !strings.ContainsAny(strings.ToLower(s), "abcdef"))
}

// notToken keeps what rule 7 must not mask: a token has at least two
// digits and two letters among its 20 or more characters.
func notToken(s string) bool {
	digits, letters := 0, 0
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case unicode.IsLetter(r):
			letters++
		}
	}
	return digits < 2 || letters < 2
}
