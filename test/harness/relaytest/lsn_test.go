package relaytest

import "testing"

func TestLSNRoundTrip(t *testing.T) {
	for _, s := range []string{"0/0", "0/1929A30", "16/B374D848", "FFFFFFFF/FFFFFFFF"} {
		l, err := ParseLSN(s)
		if err != nil {
			t.Fatal(err)
		}
		if l.String() != s {
			t.Errorf("ParseLSN(%q).String() = %q", s, l.String())
		}
	}
	if l, _ := ParseLSN("1/0"); l != 1<<32 {
		t.Errorf("1/0 = %d", l)
	}
	for _, bad := range []string{"", "12", "x/1", "1/x", "1/100000000"} {
		if _, err := ParseLSN(bad); err == nil {
			t.Errorf("ParseLSN(%q) accepted", bad)
		}
	}
}
