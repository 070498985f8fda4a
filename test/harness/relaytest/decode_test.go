package relaytest

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
)

// pgoutputStream builds what pg_recvlogical writes for one transaction that inserts and deletes
// an outbox row: begin, relation, insert, delete, commit, each followed by a newline. The LSNs
// hold 0x0a bytes, as real ones do, so a decoder that split at newlines would fail.
func pgoutputStream() []byte {
	var b bytes.Buffer
	u8 := func(v byte) { b.WriteByte(v) }
	u16 := func(v uint16) { _ = binary.Write(&b, binary.BigEndian, v) }
	u32 := func(v uint32) { _ = binary.Write(&b, binary.BigEndian, v) }
	u64 := func(v uint64) { _ = binary.Write(&b, binary.BigEndian, v) }
	str := func(s string) { b.WriteString(s); b.WriteByte(0) }
	text := func(s string) { u8('t'); u32(uint32(len(s))); b.WriteString(s) }
	nl := func() { b.WriteByte('\n') }

	u8('B')
	u64(0x0a0a0a0a)
	u64(1)
	u32(733)
	nl()
	u8('R')
	u32(16393)
	str("public")
	str("event_outbox")
	u8('d')
	u16(5)
	for _, c := range []string{"id", "aggregatetype", "aggregateid", "type", "payload"} {
		u8(1)
		str(c)
		u32(25)
		u32(0xffffffff)
	}
	nl()
	u8('I')
	u32(16393)
	u8('N')
	u16(5)
	text("63ca5a56-f296-46dd-85e8-c5e42783fb71")
	text("order")
	text("o-3")
	text("OrderPaid")
	text(`{"c": 3}`)
	nl()
	u8('D')
	u32(16393)
	u8('K')
	u16(5)
	text("63ca5a56-f296-46dd-85e8-c5e42783fb71")
	u8('n')
	u8('n')
	u8('n')
	u8('n')
	nl()
	u8('C')
	u8(0)
	u64(0x0a0a0a0a)
	u64(0x1_0a0a0a0b)
	u64(1)
	nl()
	return b.Bytes()
}

func TestDecodePgoutput(t *testing.T) {
	var got []Event
	var log bytes.Buffer
	decodePgoutput(DefaultTable)(bytes.NewReader(pgoutputStream()), func(e Event) { got = append(got, e) }, &log)
	if log.Len() > 0 {
		t.Fatalf("decoder logged: %s", log.String())
	}
	if len(got) != 1 {
		t.Fatalf("got %d events, want 1 (the insert; the delete is no event): %+v", len(got), got)
	}
	e := got[0]
	if e.Kind != KindEvent || e.ID != "63ca5a56-f296-46dd-85e8-c5e42783fb71" || e.AggregateType != "order" || e.AggregateID != "o-3" ||
		e.Type != "OrderPaid" || string(e.Payload) != `{"c": 3}` || e.TxID != 733 || e.CommitLSN != "1/A0A0A0B" {
		t.Errorf("event = %+v", e)
	}
	// Another table's inserts are no events; a cut stream is reported, not hung on.
	got = nil
	decodePgoutput("public.other")(bytes.NewReader(pgoutputStream()), func(e Event) { got = append(got, e) }, &log)
	if len(got) != 0 {
		t.Errorf("events of another table: %+v", got)
	}
	log.Reset()
	got = nil
	s := pgoutputStream()
	decodePgoutput(DefaultTable)(bytes.NewReader(s[:len(s)-10]), func(e Event) { got = append(got, e) }, &log)
	if !strings.Contains(log.String(), "unexpected EOF") || len(got) != 0 {
		t.Errorf("cut stream: events %+v, log %q", got, log.String())
	}
}

func TestDecodeTestDecoding(t *testing.T) {
	out := `BEGIN 733
table public.event_outbox: INSERT: id[uuid]:'63ca5a56-f296-46dd-85e8-c5e42783fb71' aggregatetype[character varying]:'order' aggregateid[character varying]:'o''3' type[character varying]:'OrderPaid' payload[jsonb]:'{"c": "it''s"}'
table public.event_outbox: DELETE: id[uuid]:'63ca5a56-f296-46dd-85e8-c5e42783fb71'
table public.other: INSERT: x[integer]:1 y[text]:null
COMMIT 733
BEGIN 734
table public.event_outbox: INSERT: id[uuid]:'00000000-0000-4000-8000-000000000000' aggregatetype[character varying]:'order' aggregateid[character varying]:'o-4' type[character varying]:'X' payload[jsonb]:null
`
	var got []Event
	var log bytes.Buffer
	decodeTestDecoding(DefaultTable)(strings.NewReader(out), func(e Event) { got = append(got, e) }, &log)
	if log.Len() > 0 {
		t.Fatalf("decoder logged: %s", log.String())
	}
	if len(got) != 1 {
		t.Fatalf("got %d events, want 1 (the uncommitted transaction publishes nothing): %+v", len(got), got)
	}
	e := got[0]
	if e.ID != "63ca5a56-f296-46dd-85e8-c5e42783fb71" || e.AggregateID != "o'3" || string(e.Payload) != `{"c": "it's"}` || e.TxID != 733 {
		t.Errorf("event = %+v", e)
	}
	cols, err := testDecodingColumns("a[integer]:1 b[text]:null c[integer[]]:'{1,2}'")
	if err != nil || *cols["a"] != "1" || cols["b"] != nil || *cols["c"] != "{1,2}" {
		t.Errorf("columns = %v, %v", cols, err)
	}
	if _, err := testDecodingColumns("a[text]:'open"); err == nil {
		t.Error("an unterminated value was accepted")
	}
}
