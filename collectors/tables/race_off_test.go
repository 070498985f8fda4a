//go:build !race

package tables_test

// raceDetector says the tests run under the race detector (go test -race).
const raceDetector = false
