package sim

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// A Lane is one independent workload: its own process and external-task
// topic, idempotency scope, outbox aggregate type and inbox message type,
// so a fault injected on one lane shows on that lane's series only and
// faults on different lanes run side by side.
type Lane struct {
	// Name is the lane's name: lower-case letters, digits and '-'.
	Name string
	// Database names the database (Config.Databases) the lane writes to.
	Database string
}

var laneNameRE = regexp.MustCompile(`^[a-z][a-z0-9-]{0,30}$`)

// The identifiers each lane's workers, tables and messages use. They are
// derived from the lane name, so the exporter's labels name the lane.
func (l Lane) Topic() string         { return "sim." + l.Name }
func (l Lane) ProcessKey() string    { return "sim-" + l.Name }
func (l Lane) Scope() string         { return "SIM_" + strings.ToUpper(strings.ReplaceAll(l.Name, "-", "_")) }
func (l Lane) AggregateType() string { return "sim-" + l.Name }
func (l Lane) EventType() string     { return "Submitted" }
func (l Lane) MessageType() string   { return l.Name + ".validated" }
func (l Lane) ActivityID() string    { return "submit-" + l.Name }

// SourceSystem is the inbox source_system of every lane.
const SourceSystem = "sim-broker"

// bpmn is the lane's process: start, the external task on the lane's topic
// with a boundary event for BPMN errors, end.
func (l Lane) bpmn() []byte {
	return []byte(fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL"
    xmlns:camunda="http://camunda.org/schema/1.0/bpmn"
    id="defs_%[1]s" targetNamespace="https://github.com/workflow-exporter/workflow-sim">
  <bpmn:process id="%[1]s" name="%[1]s" isExecutable="true" camunda:historyTimeToLive="P1D">
    <bpmn:startEvent id="start"/>
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="%[3]s"/>
    <bpmn:serviceTask id="%[3]s" name="submit" camunda:type="external" camunda:topic="%[2]s"/>
    <bpmn:boundaryEvent id="rejected" attachedToRef="%[3]s">
      <bpmn:errorEventDefinition/>
    </bpmn:boundaryEvent>
    <bpmn:sequenceFlow id="f2" sourceRef="%[3]s" targetRef="end"/>
    <bpmn:sequenceFlow id="f3" sourceRef="rejected" targetRef="end_rejected"/>
    <bpmn:endEvent id="end"/>
    <bpmn:endEvent id="end_rejected"/>
  </bpmn:process>
</bpmn:definitions>
`, l.ProcessKey(), l.Topic(), l.ActivityID()))
}

// faultSet is the faults active on one lane or target.
type faultSet struct {
	mu     sync.Mutex
	active map[string]bool
}

func (f *faultSet) on(name string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.active[name]
}

func (f *faultSet) set(name string, on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.active == nil {
		f.active = map[string]bool{}
	}
	if on {
		f.active[name] = true
	} else {
		delete(f.active, name)
	}
}

func (f *faultSet) list() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for n := range f.active {
		out = append(out, n)
	}
	return out
}
