package camundatest

// PruneStale exposes pruneStale to the package's external tests.
var PruneStale = pruneStale
