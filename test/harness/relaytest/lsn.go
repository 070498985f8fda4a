package relaytest

import (
	"fmt"
	"strconv"
	"strings"
)

// LSN is a PostgreSQL log sequence number, a byte position in the WAL.
type LSN uint64

// ParseLSN parses PostgreSQL's text form of an LSN ("16/B374D848", hex, as pg_lsn prints it).
func ParseLSN(s string) (LSN, error) {
	hi, lo, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return 0, fmt.Errorf("relaytest: LSN %q: want X/X", s)
	}
	h, err := strconv.ParseUint(hi, 16, 32)
	if err != nil {
		return 0, fmt.Errorf("relaytest: LSN %q: %w", s, err)
	}
	l, err := strconv.ParseUint(lo, 16, 32)
	if err != nil {
		return 0, fmt.Errorf("relaytest: LSN %q: %w", s, err)
	}
	return LSN(h<<32 | l), nil
}

// String returns the LSN as PostgreSQL prints it.
func (l LSN) String() string { return fmt.Sprintf("%X/%X", uint64(l)>>32, uint64(l)&0xFFFFFFFF) }
