package engineclient

import (
	"context"
	"net/http"
	"net/url"
	"time"
)

// Worker is an external-task worker for tests: it drives tasks into any state through the REST
// API, exactly as a production worker would.
type Worker struct {
	Client *Client
	ID     string // workerId sent with every call
	// LongPoll, when set, makes FetchAndLock wait up to this long for a
	// task to arrive (asyncResponseTimeout), so an idle worker that polls
	// in a loop costs the engine little. Keep it below the Client's
	// timeout.
	LongPoll time.Duration
}

// NewWorker returns a worker with the given id on client c.
func NewWorker(c *Client, id string) *Worker { return &Worker{Client: c, ID: id} }

func (w *Worker) task(id, action string) string {
	return "/external-task/" + url.PathEscape(id) + "/" + action
}

// FetchAndLock locks up to maxTasks tasks of one topic for lockDuration
// (waiting up to LongPoll for one to arrive).
func (w *Worker) FetchAndLock(ctx context.Context, topic string, lockDuration time.Duration, maxTasks int) ([]ExternalTask, error) {
	body := map[string]any{
		"workerId": w.ID,
		"maxTasks": maxTasks,
		"topics":   []map[string]any{{"topicName": topic, "lockDuration": lockDuration.Milliseconds()}},
	}
	if w.LongPoll > 0 {
		body["asyncResponseTimeout"] = w.LongPoll.Milliseconds()
	}
	var out []ExternalTask
	err := w.Client.Do(ctx, http.MethodPost, "/external-task/fetchAndLock", body, &out)
	return out, err
}

// Complete completes a task this worker holds; vars may be nil.
func (w *Worker) Complete(ctx context.Context, taskID string, vars map[string]any) error {
	return w.Client.Do(ctx, http.MethodPost, w.task(taskID, "complete"),
		map[string]any{"workerId": w.ID, "variables": variables(vars)}, nil)
}

// Failure reports a failure: the task gets retries and is locked for retryTimeout (backoff);
// retries 0 creates a failedExternalTask incident. The error details name the worker.
func (w *Worker) Failure(ctx context.Context, taskID string, retries int, retryTimeout time.Duration, msg string) error {
	return w.Client.Do(ctx, http.MethodPost, w.task(taskID, "failure"), map[string]any{
		"workerId":     w.ID,
		"errorMessage": msg,
		"errorDetails": w.ID + ": " + msg,
		"retries":      retries,
		"retryTimeout": retryTimeout.Milliseconds(),
	}, nil)
}

// ExtendLock sets the task's lock to expire newDuration from now.
func (w *Worker) ExtendLock(ctx context.Context, taskID string, newDuration time.Duration) error {
	return w.Client.Do(ctx, http.MethodPost, w.task(taskID, "extendLock"),
		map[string]any{"workerId": w.ID, "newDuration": newDuration.Milliseconds()}, nil)
}

// Unlock releases the task's lock (any worker's).
func (w *Worker) Unlock(ctx context.Context, taskID string) error {
	return w.Client.Do(ctx, http.MethodPost, w.task(taskID, "unlock"), nil, nil)
}

// Lock locks one task by id for this worker.
func (w *Worker) Lock(ctx context.Context, taskID string, lockDuration time.Duration) error {
	return w.Client.Do(ctx, http.MethodPost, w.task(taskID, "lock"),
		map[string]any{"workerId": w.ID, "lockDuration": lockDuration.Milliseconds()}, nil)
}

// BpmnError reports a business error for a task this worker holds.
func (w *Worker) BpmnError(ctx context.Context, taskID, errorCode, msg string) error {
	return w.Client.Do(ctx, http.MethodPost, w.task(taskID, "bpmnError"),
		map[string]any{"workerId": w.ID, "errorCode": errorCode, "errorMessage": msg}, nil)
}

// SetRetries sets a task's retries (PUT /external-task/{id}/retries); raising them from 0
// resolves the task's incident.
func (w *Worker) SetRetries(ctx context.Context, taskID string, retries int) error {
	return w.Client.Do(ctx, http.MethodPut, w.task(taskID, "retries"), map[string]any{"retries": retries}, nil)
}
