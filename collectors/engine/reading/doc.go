// Package reading is the contract between a Camunda engine's collectors
// (collectors/engine) and the two ways of reading the engine: the Reader
// interface, with a request and a result type per aspect, and the few rules
// both readers and the collectors apply alike (topic keys under
// tenant_label, the choice of topics, the margins of the lock and BPMN
// error evidence).
//
// A Reader reads a Camunda engine for the engine's collectors. There are
// two, chosen once per engine (engine.New): collectors/engine/rest asks the
// REST API, and collectors/engine/enginedb reads the engine's own tables
// (camunda[].database). Both return the same raw facts with the same
// meaning (per topic, per history entry, per group), and neither admits a
// label: the topics a reading reports are chosen by TopicChoice, which both
// call as soon as they know the topics the engine holds, and every other
// label limit is applied after the read (the REST reader only marks the
// groups beyond a list it had to cut as folded). So every rule (topic
// admission, the state partition, the lock tracking, the counters, the
// label limits) is one piece of code in collectors/engine whichever way the
// engine was read.
//
// Every request carries the probe of its collection (Probe): the engine's
// clock, which is the reference time of every reading of that collection,
// the engine version, and the history level the collection reads at.
package reading
