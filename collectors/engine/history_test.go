package engine

import (
	"cmp"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/collectors/engine/enginedb"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine/reading"
)

// zonelessLog is an engine's history log as engine-database mode sees it:
// entries stamped with the local time of the engine's zone, without the
// zone (a timestamp column), read the way enginedb's readLogRange reads
// them.
type zonelessLog struct {
	loc  *time.Location
	rows []zonelessRow
}

type zonelessRow struct {
	id   string
	wall time.Time // the local time, as a zone-less value (UTC)
}

// write appends an entry written at instant at.
func (l *zonelessLog) write(id string, at time.Time) {
	w := at.In(l.loc)
	l.rows = append(l.rows, zonelessRow{id, time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), w.Nanosecond(), time.UTC)})
}

// read answers a reading.HistoryRequest as capability.ExternalTaskLogSQL
// does: the bounds rendered as enginedb's readLogRange renders them
// (enginedb.FaceRange), the rows newest first (ties by id), max+1 at most,
// each row's time read back by enginedb.Instant.
func (l *zonelessLog) read(hr reading.HistoryRequest) reading.HistoryRead {
	parse := func(s string) time.Time {
		t, err := time.Parse("2006-01-02 15:04:05.999999", s)
		if err != nil {
			panic(err)
		}
		return t
	}
	f, t := enginedb.FaceRange(l.loc, hr)
	from, to := parse(f), parse(t)
	var rows []zonelessRow
	for _, row := range l.rows {
		if !row.wall.Before(from) && row.wall.Before(to) {
			rows = append(rows, row)
		}
	}
	slices.SortFunc(rows, func(a, b zonelessRow) int {
		if c := b.wall.Compare(a.wall); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	var rd reading.HistoryRead
	if len(rows) > hr.Max {
		rows, rd.Cut = rows[:hr.Max], true
	}
	for _, row := range rows {
		rd.Entries = append(rd.Entries, reading.HistoryEntry{ID: row.id, TS: enginedb.Instant(l.loc, row.wall), Kind: reading.LogSuccess})
	}
	return rd
}

// TestHistoryAcrossDaylightSavingTime: the engine writes zone-less local
// times, so in the autumn an hour of them comes twice (in Europe/Berlin
// 02:00-03:00 CEST, then CET), and an entry of the first pass reads as the
// later instant. Every entry counts exactly once
// across both changes of the year, with max_history_entries roomy and with
// it at three windows' worth of entries (the second pass's new entries must
// not land behind the first pass's, newest first), and no reading counts
// as cut.
func TestHistoryAcrossDaylightSavingTime(t *testing.T) {
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skipf("no tz database: %v", err)
	}
	const interval, every, window = 15 * time.Second, 2 * time.Second, time.Minute
	for _, tc := range []struct {
		name  string
		start time.Time
		max   int
	}{
		{"fall back", time.Date(2026, 10, 24, 23, 30, 0, 0, time.UTC), 1_000_000},
		{"fall back, tight max_history_entries", time.Date(2026, 10, 24, 23, 30, 0, 0, time.UTC), 3 * int(window/every)},
		{"spring forward", time.Date(2026, 3, 29, 0, 30, 0, 0, time.UTC), 3 * int(window/every)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := &zonelessLog{loc: loc}
			var cur historyCursor
			counted := map[string]int{}
			written, cuts := 0, 0
			next := tc.start
			for now := tc.start; now.Before(tc.start.Add(3 * time.Hour)); now = now.Add(interval) {
				for ; next.Before(now); next = next.Add(every) {
					written++
					log.write(fmt.Sprintf("e%06d", written), next)
				}
				var fresh []reading.HistoryEntry
				var lost bool
				cur, fresh, lost = cur.advance(log.read(cur.request(now, window, tc.max)), now, window)
				if lost {
					cuts++
				}
				for _, e := range fresh {
					counted[e.ID]++
				}
			}
			twice := 0
			for _, n := range counted {
				if n > 1 {
					twice++
				}
			}
			if twice > 0 || len(counted) != written || cuts > 0 {
				t.Fatalf("%d entries written, %d counted, %d of them more than once, %d readings cut",
					written, len(counted), twice, cuts)
			}
		})
	}
}
