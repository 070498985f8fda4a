// Package notify reads Alertmanager's webhook notifications: the payload,
// and a receiver that prints each alert (make demo, and `workflow-sim
// webhook`, the compose stack's notifications service).
package notify

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
)

// Message is the part of Alertmanager's webhook payload the receivers
// read.
type Message struct {
	Status      string            `json:"status"`
	GroupLabels map[string]string `json:"groupLabels"`
	Alerts      []struct {
		Status      string            `json:"status"`
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
	} `json:"alerts"`
}

// Decode reads the payload, answering 400 when it is not one.
func Decode(w http.ResponseWriter, req *http.Request) (Message, bool) {
	var msg Message
	if err := json.NewDecoder(req.Body).Decode(&msg); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return msg, false
	}
	return msg, true
}

// Printer is a webhook receiver for Alertmanager that prints every alert
// of every notification to W, a few lines each: time, receiver (the
// webhook's path), status, alert name, severity, the other labels, summary
// and runbook. make demo prints with it, and `workflow-sim webhook` (the
// compose stack's notifications service).
type Printer struct {
	W  io.Writer
	mu sync.Mutex
}

// ServeHTTP implements http.Handler for Alertmanager's webhook payload.
func (p *Printer) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	msg, ok := Decode(w, req)
	if !ok {
		return
	}
	receiver := strings.TrimPrefix(req.URL.Path, "/")
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, a := range msg.Alerts {
		var ls []string
		for k, v := range a.Labels {
			if k != "alertname" && k != "severity" {
				ls = append(ls, k+"="+v)
			}
		}
		sort.Strings(ls)
		fmt.Fprintf(p.W, "[%s] %-6s %-8s %s (%s) %s\n        %s\n        runbook: %s\n", time.Now().Format("15:04:05"),
			receiver, strings.ToUpper(a.Status), a.Labels["alertname"], a.Labels["severity"], strings.Join(ls, " "),
			a.Annotations["summary"], a.Annotations["runbook_url"])
	}
}
