package pgschema

import "testing"

func TestMentions(t *testing.T) {
	for _, tc := range []struct {
		cond, column string
		want         bool
	}{
		{`(message_id = ANY ('{a}'::text[]))`, "message_id", true},
		{`("Message Id" = 'x')`, "Message Id", true},
		{`(source_message_id = 'x')`, "message_id", false},
		{`(message_id2 = 'x')`, "message_id", false},
		{`((published_at > $1) AND (message_id = 'x'))`, "published_at", true},
		{``, "message_id", false},
	} {
		if got := mentions(tc.cond, tc.column); got != tc.want {
			t.Errorf("mentions(%q, %q) = %v, want %v", tc.cond, tc.column, got, tc.want)
		}
	}
}
