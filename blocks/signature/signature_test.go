package signature

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestSameCause: messages that differ only in what rule 2 to 6 mask share a
// signature. These vectors are the ones docs/failure-groups.md shows.
func TestSameCause(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b string
		want string
	}{
		{"ids and long numbers", "order 4711 timed out after 30012 ms", "order 4712 timed out after 30007 ms", "order <n> timed out after <n> ms"},
		{"uuids", "no payment for process instance 2f1e7c4a-9b3d-11ef-8c1a-0242ac120002",
			"no payment for process instance 7d9c0b12-0e4f-4a5b-9c8d-1e2f3a4b5c6d", "no payment for process instance <uuid>"},
		{"quoted values", `customer "ACME Corp" not found in table 'customers_eu'`, `customer "Globex" not found in table 'customers_us'`,
			"customer <q> not found in table <q>"},
		{"timestamps", "lock expired at 2026-12-03T14:02:11.123Z", "lock expired at 2026-12-04T01:59:59+01:00", "lock expired at <time>"},
		{"hex ids", "object 0x7f3a2b not in cache, trace 4bf92f3577b34da6a3ce929d0e0e4736", "object 0x11 not in cache, trace 00f067aa0ba902b7ffff",
			"object <hex> not in cache, trace <hex>"},
		{"id inside a word", "ORD4711 rejected by order-98231", "ORD4712 rejected by order-10002", "ORD<n> rejected by order-<n>"},
		{"decimals", "amount 12.50 exceeds limit 10.00", "amount 99,90 exceeds limit 50,00", "amount <n> exceeds limit <n>"},
		{"whitespace and newlines", "timeout\n\tat Worker.run(Worker.java:42)", "timeout  at Worker.run(Worker.java:42)",
			"timeout at Worker.run(Worker.java:42)"},
		{"e-mail addresses", "no account for jane.doe@example.com (tenant 42)", "no account for bob+orders@mail.example.co.uk (tenant 42)",
			"no account for <email> (tenant 42)"},
		{"tokens", "401 from payments: api key sk_live_51HxYz8Qa2b3C4d5E6f7G8h9 revoked", "401 from payments: api key sk_live_99AbCdEf1234GhIjKlMnOpQr revoked",
			"401 from payments: api key <token> revoked"},
		{"a JWT's parts", "bad token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
			"bad token eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiI5ODc2NTQzMjEwIn0.Xb3kq9T_2mNpQ7rStUvWxYz0aBcDeFgHiJkLmNoPqRs", "bad token <token>.<token>.<token>"},
		{"empty", "", " \n ", NoMessage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sa, sb := Of(tc.a), Of(tc.b)
			if sa != tc.want || sb != tc.want {
				t.Fatalf("Of(%q) = %q, Of(%q) = %q; want both %q", tc.a, sa, tc.b, sb, tc.want)
			}
		})
	}
}

// TestDifferentCause: what tells causes apart survives.
func TestDifferentCause(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b string
	}{
		{"different words", "connection timed out", "connection refused"},
		{"HTTP status codes (short numbers stay)", "payment service answered HTTP 503", "payment service answered HTTP 404"},
		{"SQL states", "SQL state 23505 duplicate key", "SQL state 40001 serialization failure"},
		{"words of hex letters", "bad facade", "bad decade"},
		{"a code among masked ids", "order 4711: exit status 1", "order 4711: exit status 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if sa, sb := Of(tc.a), Of(tc.b); sa == sb {
				t.Fatalf("Of(%q) = Of(%q) = %q; want them apart", tc.a, tc.b, sa)
			}
		})
	}
}

// TestKept: what tells a cause, or is no secret, stays as it is: long
// names without digits (Java classes, scopes, topics), paths, short codes.
func TestKept(t *testing.T) {
	for _, msg := range []string{
		"org.springframework.web.client.ResourceAccessException: I/O error on POST request",
		"scope ORDER_FULFILLMENT_SUBMISSION: duplicate key",
		"topic fulfillment.submit-command: worker gave up after 3 attempts",
		"GET /api/v2/orders answered 503",
		"mail server said 550 mailbox unavailable",
	} {
		if got := Of(msg); got != msg {
			t.Errorf("Of(%q) = %q, want it unchanged", msg, got)
		}
	}
}

// TestBadInput: megabytes, invalid UTF-8 and control characters give a
// short, valid signature.
func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		msg  string
	}{
		{"megabytes", strings.Repeat("stack frame at com.example.Worker.run ", 50000)},
		{"invalid utf-8", "bad byte \xff\xfe in payload \xc3"},
		{"control characters", "a\x00b\x1bc\rd"},
		{"one long word", strings.Repeat("x", 10000)},
		{"multibyte at the cut", strings.Repeat("ä", 500)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Of(tc.msg)
			if !utf8.ValidString(s) {
				t.Fatalf("invalid UTF-8: %q", s)
			}
			if n := utf8.RuneCountInString(s); n > MaxRunes {
				t.Fatalf("%d runes, more than %d", n, MaxRunes)
			}
			for _, r := range s {
				if r < 0x20 || r == 0x7f {
					t.Fatalf("control character %U in %q", r, s)
				}
			}
		})
	}
	if s := Of(strings.Repeat("y", 500)); !strings.HasSuffix(s, "…") {
		t.Errorf("a cut signature must end with an ellipsis: %q", s)
	}
}

func FuzzOf(f *testing.F) {
	f.Add("order 4711 timed out after 30012 ms")
	f.Add("\xff'unterminated")
	f.Add("mail to a.b@c.example failed, key AKIAIOSFODNN7EXAMPLE12")
	f.Fuzz(func(t *testing.T, msg string) {
		s := Of(msg)
		if !utf8.ValidString(s) || utf8.RuneCountInString(s) > MaxRunes || s == "" {
			t.Fatalf("Of(%q) = %q", msg, s)
		}
		if Of(msg) != s {
			t.Fatalf("Of(%q) is not stable: %q, then %q", msg, s, Of(msg))
		}
		// No e-mail address and no token survives.
		if e := masks[1].re.FindString(s); e != "" {
			t.Fatalf("Of(%q) = %q keeps an e-mail address: %q", msg, s, e)
		}
		for _, tok := range masks[5].re.FindAllString(s, -1) {
			if !notToken(tok) {
				t.Fatalf("Of(%q) = %q keeps a token: %q", msg, s, tok)
			}
		}
	})
}
