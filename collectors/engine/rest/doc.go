// Package rest is the REST reader of a Camunda engine: it implements
// reading.Reader over the engine's REST API (the default mode), one file
// per aspect (tasks.go with tenants.go, history.go, activities.go,
// incidents.go, jobs.go, processes.go, cleanup.go, levels.go). What it asks,
// and why each request costs what it costs, is in docs/camunda-states.md
// ("The cost of a collection"); Reader sums it up.
package rest
