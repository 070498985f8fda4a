package camundatest

import (
	"bytes"
	"encoding/xml"
	"fmt"
)

// ExternalTaskProcess returns BPMN 2.0 XML for an executable process `key` that runs one external
// service task per topic, in order: start -> task_1(topics[0]) -> task_2(topics[1]) ... -> end.
// Activity ids are task_1, task_2, ... It sets camunda:historyTimeToLive="P1D", which 7.20+ need.
// key and topics should come from UniqueName (valid XML ids).
func ExternalTaskProcess(key string, topics ...string) []byte {
	if len(topics) == 0 {
		panic("camundatest: ExternalTaskProcess needs at least one topic")
	}
	esc := func(s string) string {
		var b bytes.Buffer
		_ = xml.EscapeText(&b, []byte(s))
		return b.String()
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL"
    xmlns:camunda="http://camunda.org/schema/1.0/bpmn"
    id="defs_%[1]s" targetNamespace="https://github.com/workflow-exporter/camundatest">
  <bpmn:process id="%[1]s" name="%[1]s" isExecutable="true" camunda:historyTimeToLive="P1D">
    <bpmn:startEvent id="start"/>
`, esc(key))
	prev := "start"
	for i, topic := range topics {
		id := fmt.Sprintf("task_%d", i+1)
		fmt.Fprintf(&b, `    <bpmn:sequenceFlow id="flow_%[1]s" sourceRef="%[1]s" targetRef="%[2]s"/>
    <bpmn:serviceTask id="%[2]s" name="%[3]s" camunda:type="external" camunda:topic="%[3]s"/>
`, prev, id, esc(topic))
		prev = id
	}
	fmt.Fprintf(&b, `    <bpmn:sequenceFlow id="flow_%[1]s" sourceRef="%[1]s" targetRef="end"/>
    <bpmn:endEvent id="end"/>
  </bpmn:process>
</bpmn:definitions>
`, prev)
	return b.Bytes()
}

// TimerProcess returns BPMN 2.0 XML for an executable process `key` that
// waits on a one-hour timer: its job never runs by itself within a test, so
// tests can set its retries and see it as a job without retries left.
func TimerProcess(key string) []byte {
	return []byte(fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL"
    xmlns:camunda="http://camunda.org/schema/1.0/bpmn" id="defs_%[1]s" targetNamespace="https://github.com/workflow-exporter/camundatest">
  <bpmn:process id="%[1]s" isExecutable="true" camunda:historyTimeToLive="P1D">
    <bpmn:startEvent id="start"/>
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="wait"/>
    <bpmn:intermediateCatchEvent id="wait">
      <bpmn:timerEventDefinition><bpmn:timeDuration>PT1H</bpmn:timeDuration></bpmn:timerEventDefinition>
    </bpmn:intermediateCatchEvent>
    <bpmn:sequenceFlow id="f2" sourceRef="wait" targetRef="end"/>
    <bpmn:endEvent id="end"/>
  </bpmn:process>
</bpmn:definitions>`, key))
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
	return []byte(fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL"
    xmlns:camunda="http://camunda.org/schema/1.0/bpmn" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
    id="defs_%[1]s" targetNamespace="https://github.com/workflow-exporter/camundatest">
  <bpmn:process id="%[1]s" isExecutable="true" camunda:historyTimeToLive="P1D">
    <bpmn:startEvent id="start"/>
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
  </bpmn:process>
</bpmn:definitions>`, key))
}
