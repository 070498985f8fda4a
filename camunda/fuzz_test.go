package camunda

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"
)

// FuzzDecode feeds every response decoder arbitrary bodies. Whatever the
// body: no panic; what decodes without error has the shape the collector
// relies on (a count that is there and not negative, a version, items with
// their id, history entries with their timestamp), and every date it holds
// survives being written in the engine's format and read back. Regression
// cases found by fuzzing live in testdata/fuzz/FuzzDecode.
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, file := range files {
		if b, err := os.ReadFile(file); err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{`{"count": 3}`, `{}`, `null`, `[]`, `[{}]`, `{"count": -1}`, `{"count": 1e3}`, `{"version": "7.24.0"}`,
		`[{"id": "1", "timestamp": "2026-01-25T13:33:42.165+0100"}]`, `[{"id": "1", "timestamp": "2026-01-25T13:33:42Z"}]`,
		`[{"id": "t", "lockExpirationTime": "0000-01-01T00:00:00.000+2359"}]`, `["a", "b"]`, `{"count": "3"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var count countResult
		if decode(body, &count) == nil && (count.Count == nil || *count.Count < 0) {
			t.Fatalf("count accepted without a count or negative: %s", body)
		}
		var version versionResult
		if decode(body, &version) == nil && version.Version == "" {
			t.Fatalf("version accepted without a version: %s", body)
		}
		var topics []string
		if decode(body, &topics) == nil && topics == nil {
			t.Fatalf("topic names accepted as nothing: %s", body)
		}
		eachDecoded(body, func(tk ExternalTask) {
			if tk.ID == "" {
				t.Fatalf("task without id accepted: %s", body)
			}
			for _, tm := range []*Time{tk.LockExpirationTime, tk.CreateTime} {
				if tm != nil {
					roundTrip(t, *tm)
				}
			}
		})
		eachDecoded(body, func(e ExternalTaskLogEntry) {
			if e.ID == "" || e.Timestamp.IsZero() {
				t.Fatalf("history entry without id or timestamp accepted: %s", body)
			}
			roundTrip(t, e.Timestamp)
		})
		eachDecoded(body, func(in Incident) {
			if in.ID == "" {
				t.Fatalf("incident without id accepted: %s", body)
			}
			roundTrip(t, in.IncidentTimestamp)
		})
		eachDecoded(body, func(j Job) {
			if j.ID == "" {
				t.Fatalf("job without id accepted: %s", body)
			}
		})
	})
}

// eachDecoded decodes body as a list of T and, if the decoder accepts it,
// checks each item.
func eachDecoded[T any](body []byte, check func(T)) {
	var items []T
	if decode(body, &items) == nil {
		for _, it := range items {
			check(it)
		}
	}
}

// roundTrip checks that a date the decoder accepted is the same instant,
// to the millisecond, when written in the engine's format and read back
// (the collector sends dates it read back to the engine in queries). The
// engine's format has milliseconds, as have the engine's dates (Java's
// Date); a finer date from elsewhere is cut to the millisecond, never
// moved later, so a "timestampAfter" cursor re-reads rather than skips.
func roundTrip(t *testing.T, tm Time) {
	t.Helper()
	if tm.IsZero() {
		return
	}
	b, err := tm.MarshalJSON()
	if err != nil {
		t.Fatalf("date %v does not marshal: %v", tm.Time, err)
	}
	var back Time
	if err := back.UnmarshalJSON(b); err != nil {
		t.Fatalf("date %v written as %s does not read back: %v", tm.Time, b, err)
	}
	if !back.Equal(tm.Time.Truncate(time.Millisecond)) {
		t.Fatalf("date %v written as %s reads back as %v", tm.Time, b, back.Time)
	}
}

// FuzzErrorBody: whatever an engine or a proxy answers with an error
// status, the message the client keeps never holds the configured password
// (one without white space, as passwords are), however it is escaped,
// spaced or cut.
func FuzzErrorBody(f *testing.F) {
	f.Add([]byte(`{"type":"AuthorizationException","message":"bad password s3cret-pw for user"}`), "s3cret-pw")
	f.Add([]byte("<html><body>bad password\ns3cret-pw\nfor user</body></html>"), "s3cret-pw")
	f.Add([]byte(`{"message":"s3cr\u0065t-pw"}`), "s3cret-pw")
	f.Add([]byte(`{"message":"`+strings.Repeat("x", maxErrorMessage-4)+`s3cret-pw"}`), "s3cret-pw")
	f.Add([]byte(`{"type":"s3cret-pw","message":""}`), "s3cret-pw")
	f.Fuzz(func(t *testing.T, body []byte, secret string) {
		if len(secret) < 4 || strings.IndexFunc(secret, unicode.IsSpace) >= 0 || strings.ContainsAny(secret, "*…\ufffd") {
			return
		}
		typ, msg := parseErrorBody(body, secret)
		if strings.Contains(typ, secret) || strings.Contains(msg, secret) {
			t.Fatalf("the secret %q survives in type %q message %q (body %q)", secret, typ, msg, body)
		}
		if len(msg) > maxErrorMessage+len("…") || len(typ) > 128+len("…") {
			t.Fatalf("message of %d bytes, type of %d: the bounds are %d and 128", len(msg), len(typ), maxErrorMessage)
		}
	})
}

// TestTimeRoundTrip pins the dates the fuzzer found hard.
func TestTimeRoundTrip(t *testing.T) {
	for _, s := range []string{"2026-01-25T13:33:42.165+0100", "2026-01-25T13:33:42Z", "2026-01-25T13:33:42.123456789+01:00"} {
		var tm Time
		if err := tm.UnmarshalJSON([]byte(`"` + s + `"`)); err != nil {
			t.Fatal(err)
		}
		roundTrip(t, tm)
	}
}
