package testkit

import "time"

// Epoch is the instant the unit tests' fixed clocks stand at: a fixed
// date, so the times a test builds, prints and compares are the same in
// every run.
func Epoch() time.Time { return time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC) }

// At is Epoch plus sec seconds (before it when negative), as a pointer:
// the form the status lists' items hold their times in.
func At(sec float64) *time.Time {
	t := Epoch().Add(time.Duration(sec * float64(time.Second)))
	return &t
}
