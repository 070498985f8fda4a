// Package vocab is the domain vocabulary every layer shares: the canonical
// statuses of the worker tables, the states of a Camunda external task, the
// kinds of tables, sources and problems, and the names of the collectors.
// It is the bottom layer (docs/design.md, "Layers"): it imports nothing of
// the project, so the configuration, the catalog, the collectors, the alert
// rules, the dashboards and the status page all spell a status or a state
// the same way, from one definition.
package vocab
