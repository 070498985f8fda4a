package engineclient

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"strings"
)

// The BPMN models the tests, the benchmarks and the workload simulator
// deploy. Chain builds the common shape (start, service tasks in a row,
// end); the others are the few shapes a test needs beyond it. Every model
// sets camunda:historyTimeToLive="P1D", which 7.20+ need. Keys, topics and
// ids should come from UniqueName (valid XML ids).

// Task is one service task of a process Chain builds.
type Task struct {
	// ID is the activity id; default "task_<n>", n its 1-based position.
	ID string
	// Topic makes it an external task on this topic.
	Topic string
	// Name defaults to the topic.
	Name string
	// Expression, without a Topic, makes it a task that evaluates this
	// expression in the engine (e.g. "${true}", or a missing bean's method
	// to fail).
	Expression string
	// Async (camunda:asyncBefore) makes the process wait before the task as
	// a job, until a job executor (or POST /job/{id}/execute) runs it.
	Async bool
	// Instances > 0 makes it a parallel multi-instance task of that many
	// instances: one process start creates that many external tasks.
	Instances int
	// CatchErrors adds an error boundary event that catches every BPMN error
	// the task reports and ends the process at an end event of its own.
	CatchErrors bool
}

// Chain returns BPMN 2.0 XML for an executable process `key` that runs the
// tasks in order: start -> tasks[0] -> tasks[1] ... -> end.
func Chain(key string, tasks ...Task) []byte {
	if len(tasks) == 0 {
		panic("camundatest: Chain needs at least one task")
	}
	var b strings.Builder
	b.WriteString("    <bpmn:startEvent id=\"start\"/>\n")
	prev := "start"
	for i, t := range tasks {
		if t.ID == "" {
			t.ID = fmt.Sprintf("task_%d", i+1)
		}
		if t.Name == "" {
			t.Name = t.Topic
		}
		id := xmlEscape(t.ID)
		attrs := fmt.Sprintf(` id="%s"`, id)
		if t.Name != "" {
			attrs += fmt.Sprintf(` name="%s"`, xmlEscape(t.Name))
		}
		if t.Async {
			attrs += ` camunda:asyncBefore="true"`
		}
		if t.Topic != "" {
			attrs += fmt.Sprintf(` camunda:type="external" camunda:topic="%s"`, xmlEscape(t.Topic))
		} else {
			attrs += fmt.Sprintf(` camunda:expression="%s"`, xmlEscape(t.Expression))
		}
		fmt.Fprintf(&b, "    <bpmn:sequenceFlow id=\"flow_%[1]s\" sourceRef=\"%[1]s\" targetRef=\"%[2]s\"/>\n", prev, id)
		if t.Instances > 0 {
			fmt.Fprintf(&b, "    <bpmn:serviceTask%s>\n      <bpmn:multiInstanceLoopCharacteristics>\n"+
				"        <bpmn:loopCardinality>%d</bpmn:loopCardinality>\n      </bpmn:multiInstanceLoopCharacteristics>\n    </bpmn:serviceTask>\n",
				attrs, t.Instances)
		} else {
			fmt.Fprintf(&b, "    <bpmn:serviceTask%s/>\n", attrs)
		}
		if t.CatchErrors {
			fmt.Fprintf(&b, "    <bpmn:boundaryEvent id=\"%[1]s_error\" attachedToRef=\"%[1]s\"><bpmn:errorEventDefinition/></bpmn:boundaryEvent>\n"+
				"    <bpmn:sequenceFlow id=\"flow_%[1]s_error\" sourceRef=\"%[1]s_error\" targetRef=\"%[1]s_error_end\"/>\n"+
				"    <bpmn:endEvent id=\"%[1]s_error_end\"/>\n", id)
		}
		prev = id
	}
	fmt.Fprintf(&b, "    <bpmn:sequenceFlow id=\"flow_%s\" sourceRef=\"%s\" targetRef=\"end\"/>\n    <bpmn:endEvent id=\"end\"/>\n", prev, prev)
	return definitions(key, "", b.String())
}

// ExternalTaskProcess returns BPMN 2.0 XML for an executable process `key` that runs one external
// service task per topic, in order: start -> task_1(topics[0]) -> task_2(topics[1]) ... -> end.
// Activity ids are task_1, task_2, ...
func ExternalTaskProcess(key string, topics ...string) []byte {
	tasks := make([]Task, len(topics))
	for i, topic := range topics {
		tasks[i] = Task{Topic: topic}
	}
	return Chain(key, tasks...)
}

// definitions wraps a process body (and definitions-level elements such as
// errors and messages, before the process) into an executable process
// `key`.
func definitions(key, defs, body string) []byte {
	return []byte(fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL"
    xmlns:camunda="http://camunda.org/schema/1.0/bpmn" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
    id="defs_%[1]s" targetNamespace="https://github.com/workflow-exporter/camundatest">
%[2]s  <bpmn:process id="%[1]s" name="%[1]s" isExecutable="true" camunda:historyTimeToLive="P1D">
%[3]s  </bpmn:process>
</bpmn:definitions>
`, xmlEscape(key), defs, body))
}

// TimerProcess returns BPMN 2.0 XML for an executable process `key` that
// waits on a one-hour timer: its job never runs by itself within a test, so
// tests can set its retries and see it as a job without retries left.
func TimerProcess(key string) []byte {
	return definitions(key, "", `    <bpmn:startEvent id="start"/>
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="wait"/>
    <bpmn:intermediateCatchEvent id="wait">
      <bpmn:timerEventDefinition><bpmn:timeDuration>PT1H</bpmn:timeDuration></bpmn:timerEventDefinition>
    </bpmn:intermediateCatchEvent>
    <bpmn:sequenceFlow id="f2" sourceRef="wait" targetRef="end"/>
    <bpmn:endEvent id="end"/>
`)
}

// AsyncProcess returns BPMN 2.0 XML for an executable process `key` whose
// one service task runs as an async continuation (camunda:asyncBefore): the
// process waits as a job until a job executor (or POST /job/{id}/execute)
// runs it. The process variable "fail" (boolean) chooses the task: "ok"
// evaluates ${true} and succeeds, "fail" calls a bean that does not exist,
// so each execution fails (retries drop by one, a failure entry in the job
// log). With the engine's job executor disabled (Options.ExtraArgs
// "--<PropertyPrefix>.job-execution.enabled=false") the jobs stay
// executable, as behind a job executor that stopped.
func AsyncProcess(key string) []byte {
	return definitions(key, "", `    <bpmn:startEvent id="start"/>
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="choose"/>
    <bpmn:exclusiveGateway id="choose"/>
    <bpmn:sequenceFlow id="f2" sourceRef="choose" targetRef="ok">
      <bpmn:conditionExpression xsi:type="bpmn:tFormalExpression">${!fail}</bpmn:conditionExpression>
    </bpmn:sequenceFlow>
    <bpmn:sequenceFlow id="f3" sourceRef="choose" targetRef="fail">
      <bpmn:conditionExpression xsi:type="bpmn:tFormalExpression">${fail}</bpmn:conditionExpression>
    </bpmn:sequenceFlow>
    <bpmn:serviceTask id="ok" camunda:asyncBefore="true" camunda:expression="${true}"/>
    <bpmn:serviceTask id="fail" camunda:asyncBefore="true" camunda:expression="${missingBean.run()}"/>
    <bpmn:sequenceFlow id="f4" sourceRef="ok" targetRef="end"/>
    <bpmn:sequenceFlow id="f5" sourceRef="fail" targetRef="end"/>
    <bpmn:endEvent id="end"/>
`)
}

// ErrorProcess returns BPMN 2.0 XML for an executable process `key` whose
// external task task_1 (topic) has two interrupting boundary events: an
// error boundary event "caught" for the error code "CAUGHT", and a message
// boundary event "interrupted" for the message named message. Either leads
// to the user task "after". A BPMN error with another code is not caught:
// it ends the task's scope. So one model shows every way an external task
// can be deleted: a caught and an uncaught BPMN error, an interrupting
// message, a cancellation, a modification.
func ErrorProcess(key, topic, message string) []byte {
	return definitions(key, fmt.Sprintf(`  <bpmn:error id="error_caught" errorCode="CAUGHT"/>
  <bpmn:message id="message_interrupt" name="%s"/>
`, xmlEscape(message)), fmt.Sprintf(`    <bpmn:startEvent id="start"/>
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="task_1"/>
    <bpmn:serviceTask id="task_1" camunda:type="external" camunda:topic="%s"/>
    <bpmn:boundaryEvent id="caught" attachedToRef="task_1"><bpmn:errorEventDefinition errorRef="error_caught"/></bpmn:boundaryEvent>
    <bpmn:boundaryEvent id="interrupted" attachedToRef="task_1"><bpmn:messageEventDefinition messageRef="message_interrupt"/></bpmn:boundaryEvent>
    <bpmn:sequenceFlow id="f2" sourceRef="task_1" targetRef="end"/>
    <bpmn:sequenceFlow id="f3" sourceRef="caught" targetRef="after"/>
    <bpmn:sequenceFlow id="f4" sourceRef="interrupted" targetRef="after"/>
    <bpmn:userTask id="after"/>
    <bpmn:sequenceFlow id="f5" sourceRef="after" targetRef="end_after"/>
    <bpmn:endEvent id="end_after"/>
    <bpmn:endEvent id="end"/>
`, xmlEscape(topic)))
}

// ErrorEventSubprocessProcess returns BPMN 2.0 XML for an executable process
// `key` whose external task task_1 (topic) is followed by the end, and
// whose interrupting event subprocess starts on the error code "ESP" (an
// errorStartEvent) and waits in the user task "handle".
func ErrorEventSubprocessProcess(key, topic string) []byte {
	return definitions(key, `  <bpmn:error id="error_esp" errorCode="ESP"/>
`, fmt.Sprintf(`    <bpmn:startEvent id="start"/>
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="task_1"/>
    <bpmn:serviceTask id="task_1" camunda:type="external" camunda:topic="%s"/>
    <bpmn:sequenceFlow id="f2" sourceRef="task_1" targetRef="end"/>
    <bpmn:endEvent id="end"/>
    <bpmn:subProcess id="on_error" triggeredByEvent="true">
      <bpmn:startEvent id="error_start" isInterrupting="true"><bpmn:errorEventDefinition errorRef="error_esp"/></bpmn:startEvent>
      <bpmn:sequenceFlow id="s1" sourceRef="error_start" targetRef="handle"/>
      <bpmn:userTask id="handle"/>
      <bpmn:sequenceFlow id="s2" sourceRef="handle" targetRef="error_end"/>
      <bpmn:endEvent id="error_end"/>
    </bpmn:subProcess>
`, xmlEscape(topic)))
}

func xmlEscape(s string) string {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}
