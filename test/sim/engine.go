package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// engine is the few Camunda 7 REST calls a worker makes: deploy, start,
// fetchAndLock, complete, failure, bpmnError. Unlike the exporter's client
// (package camunda) it writes: it is the workload, not the observer.
type engine struct {
	base string
	hc   *http.Client
}

func newEngine(base string) *engine {
	return &engine{base: strings.TrimRight(base, "/"), hc: &http.Client{Timeout: 30 * time.Second}}
}

// engineError is an answer other than 2xx.
type engineError struct {
	Method, Path string
	Status       int
	Message      string
}

func (e *engineError) Error() string {
	return fmt.Sprintf("%s %s: HTTP %d: %s", e.Method, e.Path, e.Status, e.Message)
}

func (e *engine) do(ctx context.Context, method, path string, body any, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, e.base+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	return e.send(req, method, path, out)
}

func (e *engine) send(req *http.Request, method, path string, out any) error {
	resp, err := e.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		var msg struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(b, &msg)
		if msg.Message == "" {
			msg.Message = strings.TrimSpace(string(b))
		}
		return &engineError{Method: method, Path: path, Status: resp.StatusCode, Message: msg.Message}
	}
	if out != nil && len(b) > 0 {
		return json.Unmarshal(b, out)
	}
	return nil
}

// version answers GET /version: whether the engine is there.
func (e *engine) version(ctx context.Context) (string, error) {
	var v struct {
		Version string `json:"version"`
	}
	err := e.do(ctx, http.MethodGet, "/version", nil, &v)
	return v.Version, err
}

// deploy deploys one BPMN file (duplicate filtering on: an unchanged file
// makes no new version).
func (e *engine) deploy(ctx context.Context, name string, bpmn []byte) error {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for k, v := range map[string]string{"deployment-name": name, "enable-duplicate-filtering": "true", "deploy-changed-only": "true"} {
		if err := mw.WriteField(k, v); err != nil {
			return err
		}
	}
	fw, err := mw.CreateFormFile(name+".bpmn", name+".bpmn")
	if err != nil {
		return err
	}
	if _, err := fw.Write(bpmn); err != nil {
		return err
	}
	if err := mw.Close(); err != nil {
		return err
	}
	const path = "/deployment/create"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.base+path, &buf)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return e.send(req, http.MethodPost, path, nil)
}

// start starts the latest version of a process with a business key.
func (e *engine) start(ctx context.Context, key, businessKey string) error {
	return e.do(ctx, http.MethodPost, "/process-definition/key/"+url.PathEscape(key)+"/start",
		map[string]any{"businessKey": businessKey}, nil)
}

// task is a fetched external task (the fields a worker uses).
type task struct {
	ID                string  `json:"id"`
	TopicName         string  `json:"topicName"`
	BusinessKey       *string `json:"businessKey"`
	ProcessInstanceID string  `json:"processInstanceId"`
	ActivityID        string  `json:"activityId"`
	Retries           *int    `json:"retries"`
}

func (e *engine) fetchAndLock(ctx context.Context, worker, topic string, lock time.Duration, max int) ([]task, error) {
	var out []task
	// Long polling: the engine holds the request up to 2 s until a task
	// arrives, so idle workers cost the engine little.
	err := e.do(ctx, http.MethodPost, "/external-task/fetchAndLock", map[string]any{
		"workerId": worker, "maxTasks": max, "asyncResponseTimeout": 2000,
		"topics": []map[string]any{{"topicName": topic, "lockDuration": lock.Milliseconds()}},
	}, &out)
	return out, err
}

func taskPath(id, action string) string { return "/external-task/" + url.PathEscape(id) + "/" + action }

func (e *engine) complete(ctx context.Context, worker, id string, vars map[string]any) error {
	v := map[string]any{}
	for k, val := range vars {
		v[k] = map[string]any{"value": val}
	}
	return e.do(ctx, http.MethodPost, taskPath(id, "complete"), map[string]any{"workerId": worker, "variables": v}, nil)
}

func (e *engine) failure(ctx context.Context, worker, id string, retries int, timeout time.Duration, msg string) error {
	return e.do(ctx, http.MethodPost, taskPath(id, "failure"), map[string]any{
		"workerId": worker, "errorMessage": msg, "errorDetails": "workflow-sim: " + msg,
		"retries": retries, "retryTimeout": timeout.Milliseconds(),
	}, nil)
}

func (e *engine) bpmnError(ctx context.Context, worker, id, code, msg string) error {
	return e.do(ctx, http.MethodPost, taskPath(id, "bpmnError"),
		map[string]any{"workerId": worker, "errorCode": code, "errorMessage": msg}, nil)
}
