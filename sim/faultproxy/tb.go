package faultproxy

// TB is the part of testing.TB that Start and StartTCP use: a test's own
// proxy, closed when the test ends. It is declared here so that the
// simulator, which links this package, does not link package testing.
type TB interface {
	Helper()
	Fatal(args ...any)
	Cleanup(func())
}
