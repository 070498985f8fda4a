package engine

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Process models. Below history level full the exporter finds the external
// tasks' outcomes in the activity instance history (activities.go), which
// does not say which activity instances are external tasks, nor their topic:
// the BPMN 2.0 XML of the process definition does. It is read once per
// definition id (GET /process-definition/{id}/xml, in both modes: the
// engine's act_ge_bytearray also holds serialized variables, which the
// exporter's database role should not read), parsed, and kept: a
// definition never changes.

// Activity types, as the activity instance history names them, of the BPMN
// elements that can be external tasks (camunda:type="external").
const (
	actServiceTask      = "serviceTask"
	actSendTask         = "sendTask"
	actBusinessRuleTask = "businessRuleTask"
	actMessageThrow     = "intermediateMessageThrowEvent"
	actMessageEnd       = "messageEndEvent"
)

// externalElement is one external task element of a process model.
type externalElement struct {
	// typ is its activity type in the history.
	typ string
	// topic is its camunda:topic; "" when that is an expression (the topic
	// is then known only from a task a collection listed).
	topic string
	// endsScope: a normal completion completes the scope too (an inner
	// instance of a multi-instance activity, or an activity without an
	// outgoing sequence flow, measured on both engines), so completeScope
	// does not tell an uncaught BPMN error from a completion.
	endsScope bool
}

// processModel is what the exporter knows of one process definition: its
// external task elements by activity id (ids are unique in a BPMN file).
type processModel struct {
	external map[string]externalElement
}

// Namespaces of the camunda: extension attributes (Operaton parses both).
var extensionNamespaces = []string{"http://camunda.org/schema/1.0/bpmn", "http://operaton.org/schema/1.0/bpmn"}

const bpmnNamespace = "http://www.omg.org/spec/BPMN/20100524/MODEL"

// parseModel reads the external task elements of a BPMN 2.0 file: service,
// send and business rule tasks with camunda:type="external", and message
// throw and end events whose message event definition has it.
func parseModel(doc []byte) (*processModel, error) {
	d := xml.NewDecoder(bytes.NewReader(doc))
	ext := func(se xml.StartElement, name string) string {
		for _, a := range se.Attr {
			for _, ns := range extensionNamespaces {
				if a.Name.Space == ns && a.Name.Local == name {
					return a.Value
				}
			}
		}
		return ""
	}
	attr := func(se xml.StartElement, name string) string {
		for _, a := range se.Attr {
			if a.Name.Space == "" && a.Name.Local == name {
				return a.Value
			}
		}
		return ""
	}
	m := &processModel{external: map[string]externalElement{}}
	multi := map[string]bool{}
	outgoing := map[string]bool{}
	// open are the enclosing elements (id and history type) of the
	// current one, for the children that qualify them.
	type open struct{ id, typ string }
	var stack []open
	for {
		tok, err := d.Token()
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("parsing BPMN: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			parent := open{}
			if len(stack) > 0 {
				parent = stack[len(stack)-1]
			}
			cur := open{id: attr(t, "id")}
			if t.Name.Space != bpmnNamespace {
				stack = append(stack, cur)
				continue
			}
			switch t.Name.Local {
			case "serviceTask", "sendTask", "businessRuleTask":
				cur.typ = t.Name.Local
				if ext(t, "type") == "external" {
					m.external[cur.id] = externalElement{typ: t.Name.Local, topic: literalTopic(ext(t, "topic"))}
				}
			case "intermediateThrowEvent":
				cur.typ = actMessageThrow
			case "endEvent":
				cur.typ = actMessageEnd
			case "messageEventDefinition":
				if parent.id != "" && parent.typ != "" && ext(t, "type") == "external" {
					m.external[parent.id] = externalElement{typ: parent.typ, topic: literalTopic(ext(t, "topic"))}
				}
			case "multiInstanceLoopCharacteristics":
				multi[parent.id] = true
			case "sequenceFlow":
				outgoing[attr(t, "sourceRef")] = true
			}
			stack = append(stack, cur)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		}
	}
	for id, el := range m.external {
		el.endsScope = multi[id] || !outgoing[id]
		m.external[id] = el
	}
	return m, nil
}

// literalTopic is a camunda:topic that names a topic; "" for an expression.
func literalTopic(t string) string {
	if strings.Contains(t, "${") || strings.Contains(t, "#{") {
		return ""
	}
	return t
}

// maxModels bounds the process models kept, as the REST client bounds its
// definition key cache: a working set beyond it only costs more reads.
const maxModels = 1024

// models are the process models read so far, by definition id, with FIFO
// eviction. Only the collector that owns it uses it, one collection at a
// time.
type models struct {
	byID  map[string]*processModel
	order []string
	next  int
}

func newModels() *models { return &models{byID: map[string]*processModel{}} }

// ensure reads the models of the definition ids not known yet, one
// request each (read), and returns the models of ids. A definition the
// engine no longer has (deleted since its activity instances ended) has
// no external element.
func (ms *models) ensure(ctx context.Context, ids []string, read func(context.Context, string) ([]byte, bool, error)) (map[string]*processModel, error) {
	out := make(map[string]*processModel, len(ids))
	for _, id := range ids {
		if m, ok := ms.byID[id]; ok {
			out[id] = m
			continue
		}
		doc, exists, err := read(ctx, id)
		if err != nil {
			return nil, err
		}
		m := &processModel{external: map[string]externalElement{}}
		if exists {
			if m, err = parseModel(doc); err != nil {
				return nil, fmt.Errorf("process definition %s: %w", id, err)
			}
		}
		ms.put(id, m)
		out[id] = m
	}
	return out, nil
}

func (ms *models) put(id string, m *processModel) {
	if len(ms.order) < maxModels {
		ms.order = append(ms.order, id)
	} else {
		delete(ms.byID, ms.order[ms.next])
		ms.order[ms.next] = id
		ms.next = (ms.next + 1) % maxModels
	}
	ms.byID[id] = m
}

// activityTypes are the history activity types to read: serviceTask (the
// usual external task) and the types of every external element of the
// models known.
func (ms *models) activityTypes() []string {
	set := map[string]bool{actServiceTask: true}
	for _, m := range ms.byID {
		for _, el := range m.external {
			set[el.typ] = true
		}
	}
	out := make([]string, 0, len(set))
	for t := range set {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}
