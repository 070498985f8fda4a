package camunda

import (
	"encoding/json"
	"net/url"
	"testing"
	"time"
)

func TestFormatTime(t *testing.T) {
	tests := []struct {
		in   time.Time
		want string
	}{
		{time.Date(2026, 1, 25, 13, 33, 42, 165_000_000, time.FixedZone("", 3600)), "2026-01-25T13:33:42.165+0100"},
		{time.Date(2026, 1, 25, 7, 0, 0, 0, time.FixedZone("", -5*3600)), "2026-01-25T07:00:00.000-0500"},
		{time.Date(2026, 1, 25, 12, 0, 0, 999_999_999, time.UTC), "2026-01-25T12:00:00.999+0000"},
		{time.Date(2026, 7, 1, 0, 0, 0, 0, time.FixedZone("", 5*3600+1800)), "2026-07-01T00:00:00.000+0530"},
	}
	for _, tt := range tests {
		if got := FormatTime(tt.in); got != tt.want {
			t.Errorf("FormatTime(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// The '+' of a positive offset must reach the engine as %2B; a raw '+'
// would be decoded as a space and the date rejected.
func TestFormatTimeQueryEncoding(t *testing.T) {
	v := url.Values{}
	v.Set("lockExpirationBefore", FormatTime(time.Date(2026, 1, 25, 13, 33, 42, 165_000_000, time.FixedZone("", 3600))))
	if got, want := v.Encode(), "lockExpirationBefore=2026-01-25T13%3A33%3A42.165%2B0100"; got != want {
		t.Errorf("encoded = %q, want %q", got, want)
	}
	back, err := url.ParseQuery(v.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParseTime(back.Get("lockExpirationBefore")); err != nil {
		t.Errorf("round trip through the query string: %v", err)
	}
}

func TestParseTime(t *testing.T) {
	want := time.Date(2026, 1, 25, 12, 33, 42, 165_000_000, time.UTC)
	tests := []struct {
		in         string
		wantOffset int // seconds east of UTC
		wantErr    bool
	}{
		{in: "2026-01-25T13:33:42.165+0100", wantOffset: 3600},
		{in: "2026-01-25T07:33:42.165-0500", wantOffset: -5 * 3600},
		{in: "2026-01-25T12:33:42.165+0000"},
		{in: "2026-01-25T13:33:42.165+01:00", wantOffset: 3600},
		{in: "2026-01-25T12:33:42.165Z"},
		{in: "2026-01-25T12:33:42.165000Z"},
		{in: "2026-01-25T13:33:42.165000+0100", wantOffset: 3600},
		{in: "2026-01-25 12:33:42", wantErr: true},
		{in: "2026-01-25T12:33:42.165", wantErr: true}, // no offset: ambiguous, refuse
		{in: "", wantErr: true},
	}
	for _, tt := range tests {
		got, err := ParseTime(tt.in)
		if tt.wantErr {
			if err == nil {
				t.Errorf("ParseTime(%q) = %v, want error", tt.in, got)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseTime(%q): %v", tt.in, err)
			continue
		}
		if !got.Equal(want) {
			t.Errorf("ParseTime(%q) = %v, want instant %v", tt.in, got, want)
		}
		if _, off := got.Zone(); off != tt.wantOffset {
			t.Errorf("ParseTime(%q) offset = %d, want %d (the engine's offset is kept)", tt.in, off, tt.wantOffset)
		}
	}
}

func TestTimeJSON(t *testing.T) {
	var v struct {
		A Time  `json:"a"`
		B *Time `json:"b"`
		C *Time `json:"c"`
		D Time  `json:"d"`
	}
	in := `{"a":"2026-01-25T13:33:42.165+0100","b":null,"c":"2026-01-25T12:33:42Z","d":null}`
	if err := json.Unmarshal([]byte(in), &v); err != nil {
		t.Fatal(err)
	}
	if got := v.A.String(); got != "2026-01-25T13:33:42.165+0100" {
		t.Errorf("a = %s", got)
	}
	if v.B != nil {
		t.Errorf("b = %v, want nil for JSON null", v.B)
	}
	if v.C == nil || !v.C.Equal(time.Date(2026, 1, 25, 12, 33, 42, 0, time.UTC)) {
		t.Errorf("c = %v", v.C)
	}
	if !v.D.IsZero() {
		t.Errorf("d = %v, want zero for null", v.D)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"a":"2026-01-25T13:33:42.165+0100","b":null,"c":"2026-01-25T12:33:42.000+0000","d":null}`; string(out) != want {
		t.Errorf("marshal = %s, want %s", out, want)
	}
	for _, bad := range []string{`{"a":"yesterday"}`, `{"a":12}`} {
		if err := json.Unmarshal([]byte(bad), &v); err == nil {
			t.Errorf("unmarshal %s: want error", bad)
		}
	}
}

// TestTimeUnmarshalFastPath: a date read without encoding/json (a string
// without escapes, as the engine writes every date) and one that needs it
// (escaped characters) give the same instant, and what is not a string,
// or not a whole one, is still refused.
func TestTimeUnmarshalFastPath(t *testing.T) {
	want := time.Date(2026, 1, 25, 12, 33, 42, 165e6, time.UTC)
	for _, tc := range []struct {
		name, in string
		fast     bool
		err      bool
	}{
		{name: "the engine's format", in: `"2026-01-25T13:33:42.165+0100"`, fast: true},
		{name: "an escaped plus", in: `"2026-01-25T13:33:42.165\u002b0100"`},
		{name: "an escaped solidus before the date", in: `"\/2026-01-25T13:33:42.165+0100"`, err: true},
		{name: "empty", in: `""`, fast: true},
		{name: "a number", in: `12`, err: true},
		{name: "unterminated", in: `"2026-01-25T13:33:42.165+0100`, err: true},
		{name: "a lone quote", in: `"`, err: true},
		{name: "a raw control character", in: "\"2026-01-25T13:33:42.165+0100\t\"", err: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, fast := plainString([]byte(tc.in)); fast != tc.fast {
				t.Errorf("read without encoding/json: %v, want %v", fast, tc.fast)
			}
			var tm Time
			err := tm.UnmarshalJSON([]byte(tc.in))
			switch {
			case tc.err:
				if err == nil {
					t.Errorf("%s read as %v, want an error", tc.in, tm.Time)
				}
			case err != nil:
				t.Errorf("%s: %v", tc.in, err)
			case tc.in == `""`:
				if !tm.IsZero() {
					t.Errorf(`"" read as %v, want the zero time`, tm.Time)
				}
			case !tm.Equal(want):
				t.Errorf("%s read as %v, want %v", tc.in, tm.Time, want)
			}
		})
	}
}
