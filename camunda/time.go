package camunda

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// DateLayout is the engine's default date format, yyyy-MM-dd'T'HH:mm:ss.SSSZ,
// written as a Go layout. The engine uses it both for query parameters and for
// dates in response bodies (in the JVM's own offset).
const DateLayout = "2006-01-02T15:04:05.000-0700"

// parseLayouts are tried in order. The first is what Camunda 7 emits by
// default; the others cover engines configured with a different Jackson date
// format (RFC 3339 offsets such as +01:00 or Z) or without milliseconds. They
// cost nothing when the first layout matches.
// time.Parse accepts fractional seconds after the seconds field even when the
// layout has none, so the last two layouts also take any number of digits.
var parseLayouts = [...]string{
	DateLayout,
	"2006-01-02T15:04:05Z0700", // +0100 or Z, any fraction
	time.RFC3339,               // +01:00 or Z, any fraction
}

// FormatTime renders t in the engine's query-parameter format, keeping t's
// offset. The result contains a '+' for positive offsets, so it must go
// through url.Values.Encode (which turns '+' into %2B); a raw '+' in a query
// string would be read back by the engine as a space.
func FormatTime(t time.Time) string {
	return t.Format(DateLayout)
}

// ParseTime parses a date as the engine returns it.
func ParseTime(s string) (time.Time, error) {
	var firstErr error
	for _, layout := range parseLayouts {
		t, err := time.Parse(layout, s)
		if err == nil {
			return t, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return time.Time{}, fmt.Errorf("camunda: cannot parse date %q (want %s): %w", s, DateLayout, firstErr)
}

// Time is a date in an engine response. It unmarshals from the engine's date
// format and marshals back to it. The engine's offset is kept, so comparisons
// between engine dates and the engine's clock stay exact. JSON null leaves the
// zero value; use *Time for fields the engine may return as null when the
// difference matters.
type Time struct {
	time.Time
}

// UnmarshalJSON implements json.Unmarshaler.
func (t *Time) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	s, ok := plainString(b)
	if !ok {
		if err := json.Unmarshal(b, &s); err != nil {
			return fmt.Errorf("camunda: date is not a JSON string: %s", truncate(string(b), 64))
		}
	}
	if s == "" {
		t.Time = time.Time{}
		return nil
	}
	parsed, err := ParseTime(s)
	if err != nil {
		return err
	}
	t.Time = parsed
	return nil
}

// plainString is the content of a JSON string without escapes, as every
// date the engine writes is: the common case, read without a second pass of
// encoding/json over the value (a REST collection at 200 topics decodes
// about 12,000 tasks, each with two or three dates). Anything else
// (escapes, not a string) is left to encoding/json, which reports it.
func plainString(b []byte) (string, bool) {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return "", false
	}
	in := b[1 : len(b)-1]
	for _, c := range in {
		if c == '\\' || c == '"' || c < 0x20 {
			return "", false
		}
	}
	return string(in), true
}

// MarshalJSON implements json.Marshaler. The zero Time marshals as null.
func (t Time) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	return json.Marshal(FormatTime(t.Time))
}

// String renders the time in the engine's format.
func (t Time) String() string {
	return FormatTime(t.Time)
}
