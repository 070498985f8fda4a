package tables

import (
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/blocks/pgsource"
)

// TestDeliveryClockOffset: the consumer's clock minus the producer's, from
// two readings each taken between the exporter's before and after; an
// estimate within the readings' uncertainty is no measurable difference.
func TestDeliveryClockOffset(t *testing.T) {
	a, b := &pgsource.DB{}, &pgsource.DB{}
	base := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return base.Add(time.Duration(ms) * time.Millisecond) }
	// reading: the server's clock read db ms after base, between the
	// exporter's before and after (ms after base by the exporter's clock).
	reading := func(db, before, after int) clockReading {
		return clockReading{clock: at(db), before: at(before), after: at(after)}
	}
	for _, tc := range []struct {
		name       string
		prod, cons clockReading
		same       bool
		want       time.Duration
	}{
		{"clocks agree", reading(1, 0, 2), reading(101, 100, 102), false, 0},
		{"consumer 7 s ahead", reading(1, 0, 2), reading(7101, 100, 102), false, 7 * time.Second},
		{"consumer 3 s behind", reading(1, 0, 2), reading(-2899, 100, 102), false, -3 * time.Second},
		{"within the round trips: no measurable difference", reading(1, 0, 2), reading(102, 100, 102), false, 0},
		{"just past them", reading(1, 0, 2), reading(104, 100, 102), false, 3 * time.Millisecond},
		{"one database at both ends", reading(1, 0, 2), reading(7101, 100, 102), true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Delivery{from: a, to: b}
			if tc.same {
				c.to = a
			}
			if got := c.clockOffset(tc.prod, tc.cons); got != tc.want {
				t.Errorf("offset %v, want %v", got, tc.want)
			}
		})
	}
}
