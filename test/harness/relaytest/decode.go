package relaytest

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// The pg_recvlogical decoders turn the output plugin's messages into events the way the Debezium
// relay's outbox event router does: an INSERT into the outbox table is an event, its DELETE in the
// same transaction is not. Events are published when their transaction's COMMIT arrives.

// outboxRow turns the outbox table's columns into an event.
func outboxRow(cols map[string]*string) Event {
	get := func(k string) string {
		if v := cols[k]; v != nil {
			return *v
		}
		return ""
	}
	e := Event{Kind: KindEvent, ID: get("id"), AggregateType: get("aggregatetype"), AggregateID: get("aggregateid"), Type: get("type")}
	if p := cols["payload"]; p != nil && json.Valid([]byte(*p)) {
		e.Payload = json.RawMessage(*p)
	}
	return e
}

// decodePgoutput decodes pgoutput's protocol version 1 as pg_recvlogical writes it: each message
// followed by a newline (which the binary messages may contain too, so the stream is parsed by
// the messages' structure, not split at newlines).
func decodePgoutput(table string) decoder {
	return func(out io.Reader, emit func(Event), log io.Writer) {
		d := pgoutputDecoder{table: table, rels: map[uint32]pgRelation{}}
		w := &wire{r: bufio.NewReader(out)}
		for {
			err := d.message(w, emit)
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				fmt.Fprintf(log, "relaytest: decoding pgoutput: %v\n", err)
				_, _ = io.Copy(io.Discard, out)
				return
			}
		}
	}
}

type pgRelation struct {
	name string // namespace.relname
	cols []string
}

type pgoutputDecoder struct {
	table   string
	rels    map[uint32]pgRelation
	xid     uint32
	pending []Event
}

// message reads one message and the newline after it.
func (d *pgoutputDecoder) message(w *wire, emit func(Event)) error {
	typ := w.u8()
	if w.err != nil {
		return w.err
	}
	switch typ {
	case 'B': // begin: final LSN, commit time, xid
		w.u64()
		w.u64()
		d.xid = w.u32()
		d.pending = nil
	case 'C': // commit: flags, commit LSN, end LSN, commit time
		w.u8()
		w.u64()
		end := LSN(w.u64())
		w.u64()
		if nl := w.u8(); w.err != nil || nl != '\n' {
			if w.err == nil {
				w.err = fmt.Errorf("commit not followed by pg_recvlogical's newline (%q)", nl)
			}
			break
		}
		for _, e := range d.pending {
			e.CommitLSN = end.String()
			e.TxID = int64(d.xid)
			emit(e)
		}
		d.pending = nil
		return nil
	case 'O': // origin
		w.u64()
		w.str()
	case 'R': // relation
		id := w.u32()
		ns, name := w.str(), w.str()
		w.u8() // replica identity
		n := int(w.u16())
		rel := pgRelation{name: ns + "." + name}
		for i := 0; i < n && w.err == nil; i++ {
			w.u8() // flags
			rel.cols = append(rel.cols, w.str())
			w.u32() // type
			w.u32() // typmod
		}
		d.rels[id] = rel
	case 'Y': // type
		w.u32()
		w.str()
		w.str()
	case 'I': // insert: relation, 'N', new tuple
		rel := d.rels[w.u32()]
		w.u8()
		vals := w.tuple()
		if w.err == nil && rel.name == d.table {
			cols := map[string]*string{}
			for i, c := range rel.cols {
				if i < len(vals) {
					cols[c] = vals[i]
				}
			}
			d.pending = append(d.pending, outboxRow(cols))
		}
	case 'U': // update: relation, optional 'K' or 'O' old tuple, 'N' new tuple
		w.u32()
		if k := w.u8(); k == 'K' || k == 'O' {
			w.tuple()
			w.u8()
		}
		w.tuple()
	case 'D': // delete: relation, 'K' or 'O', old tuple
		w.u32()
		w.u8()
		w.tuple()
	case 'T': // truncate: relation count, options, relations
		n := int(w.u32())
		w.u8()
		for i := 0; i < n && w.err == nil; i++ {
			w.u32()
		}
	case 'M': // logical decoding message (option messages=true): flags, LSN, prefix, content
		w.u8()
		w.u64()
		w.str()
		w.n(int(w.u32()))
	default:
		return fmt.Errorf("unknown message type %q", typ)
	}
	if nl := w.u8(); w.err == nil && nl != '\n' {
		return fmt.Errorf("message %q not followed by pg_recvlogical's newline (%q)", typ, nl)
	}
	if errors.Is(w.err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return w.err
}

// wire reads the protocol's big-endian integers and strings, keeping the first error.
type wire struct {
	r   *bufio.Reader
	err error
}

func (w *wire) n(k int) []byte {
	if w.err != nil || k < 0 {
		return nil
	}
	b := make([]byte, k)
	_, w.err = io.ReadFull(w.r, b)
	return b
}

func (w *wire) u8() byte {
	if w.err != nil {
		return 0
	}
	var b byte
	b, w.err = w.r.ReadByte()
	return b
}

func (w *wire) u16() uint16 {
	if b := w.n(2); b != nil {
		return binary.BigEndian.Uint16(b)
	}
	return 0
}

func (w *wire) u32() uint32 {
	if b := w.n(4); b != nil {
		return binary.BigEndian.Uint32(b)
	}
	return 0
}

func (w *wire) u64() uint64 {
	if b := w.n(8); b != nil {
		return binary.BigEndian.Uint64(b)
	}
	return 0
}

// str reads a NUL-terminated string.
func (w *wire) str() string {
	if w.err != nil {
		return ""
	}
	s, err := w.r.ReadString(0)
	w.err = err
	return strings.TrimSuffix(s, "\x00")
}

// tuple reads TupleData: a value per column, nil for NULL and unchanged TOAST values.
func (w *wire) tuple() []*string {
	n := int(w.u16())
	var vals []*string
	for i := 0; i < n && w.err == nil; i++ {
		switch kind := w.u8(); kind {
		case 't', 'b':
			s := string(w.n(int(w.u32())))
			vals = append(vals, &s)
		case 'n', 'u':
			vals = append(vals, nil)
		default:
			if w.err == nil {
				w.err = fmt.Errorf("unknown tuple value kind %q", kind)
			}
		}
	}
	return vals
}

// decodeTestDecoding decodes test_decoding's text lines:
//
//	BEGIN 733
//	table public.event_outbox: INSERT: id[uuid]:'63ca…' aggregatetype[character varying]:'order' … payload[jsonb]:'{"c": 3}'
//	table public.event_outbox: DELETE: id[uuid]:'63ca…'
//	COMMIT 733
func decodeTestDecoding(table string) decoder {
	prefix := "table " + table + ": INSERT: "
	return func(out io.Reader, emit func(Event), log io.Writer) {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
		var xid int64
		var pending []Event
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "BEGIN"):
				xid, _ = strconv.ParseInt(strings.Fields(line + " 0")[1], 10, 64)
				pending = nil
			case strings.HasPrefix(line, "COMMIT"):
				for _, e := range pending {
					e.TxID = xid
					emit(e)
				}
				pending = nil
			case strings.HasPrefix(line, prefix):
				cols, err := testDecodingColumns(strings.TrimPrefix(line, prefix))
				if err != nil {
					fmt.Fprintf(log, "relaytest: decoding test_decoding line %q: %v\n", line, err)
					continue
				}
				pending = append(pending, outboxRow(cols))
			}
		}
	}
}

// testDecodingColumns parses `name[type]:value ...`, where a value is 'quoted' (quotes doubled
// inside), null, or a bare word.
func testDecodingColumns(s string) (map[string]*string, error) {
	cols := map[string]*string{}
	for s = strings.TrimLeft(s, " "); s != ""; s = strings.TrimLeft(s, " ") {
		open := strings.IndexByte(s, '[')
		sep := strings.Index(s, "]:")
		if open <= 0 || sep < open {
			return nil, fmt.Errorf("no name[type]: at %q", s)
		}
		name := s[:open]
		s = s[sep+2:]
		if strings.HasPrefix(s, "'") {
			var b strings.Builder
			i := 1
			for ; i < len(s); i++ {
				if s[i] == '\'' {
					if i+1 < len(s) && s[i+1] == '\'' {
						b.WriteByte('\'')
						i++
						continue
					}
					break
				}
				b.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, fmt.Errorf("unterminated value of %s", name)
			}
			v := b.String()
			cols[name] = &v
			s = s[i+1:]
			continue
		}
		end := strings.IndexByte(s, ' ')
		if end < 0 {
			end = len(s)
		}
		if v := s[:end]; v != "null" {
			cols[name] = &v
		} else {
			cols[name] = nil
		}
		s = s[end:]
	}
	return cols, nil
}
