package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// downstream is the external service the workers call, in process on
// 127.0.0.1. It keeps every command it accepted by idempotency key, as a
// well-built API does: the same key with the same request replays the
// first result, the same key with another request is a 409 conflict, and a
// key can be looked up (reconciliation). Faults of a lane make it answer
// 503 (retry-storm), 409 (idempotency-conflict) or too late
// (unknown-outcome: the command is accepted, the answer arrives after the
// caller gave up).
type downstream struct {
	url    string
	srv    *http.Server
	faults func(lane string) *faultSet
	late   time.Duration // how late an unknown-outcome answer comes

	mu         sync.Mutex
	commands   map[string]downstreamCommand
	executions int // side effects performed (first time a key was seen)
	replays    int // repeated requests answered from the stored result
}

type downstreamCommand struct {
	hash, result string
}

// callTimeout is how long a worker waits for the downstream service.
const callTimeout = 2 * time.Second

func startDownstream(faults func(string) *faultSet) (*downstream, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	d := &downstream{url: "http://" + l.Addr().String(), faults: faults, late: callTimeout + time.Second,
		commands: map[string]downstreamCommand{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /commands", d.submit)
	mux.HandleFunc("GET /commands/{key}", d.lookup)
	d.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = d.srv.Serve(l) }()
	return d, nil
}

func (d *downstream) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = d.srv.Shutdown(ctx)
}

type commandRequest struct {
	Lane string `json:"lane"`
	Key  string `json:"key"`
	Hash string `json:"hash"`
}

func (d *downstream) submit(w http.ResponseWriter, r *http.Request) {
	var req commandRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Key == "" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	f := d.faults(req.Lane)
	switch {
	case f.on(FaultRetryStorm):
		http.Error(w, "service unavailable", http.StatusServiceUnavailable)
		return
	case f.on(FaultIdempotencyConflict):
		http.Error(w, "idempotency key reused with a different request", http.StatusConflict)
		return
	}
	d.mu.Lock()
	c, seen := d.commands[req.Key]
	switch {
	case seen && c.hash != req.Hash:
		d.mu.Unlock()
		http.Error(w, "idempotency key reused with a different request", http.StatusConflict)
		return
	case seen:
		d.replays++
	default:
		d.executions++
		c = downstreamCommand{hash: req.Hash, result: fmt.Sprintf("ext-%06d", d.executions)}
		d.commands[req.Key] = c
	}
	d.mu.Unlock()
	if f.on(FaultUnknownOutcome) {
		// Accepted, but the answer comes after the caller's timeout.
		select {
		case <-time.After(d.late):
		case <-r.Context().Done():
			return
		}
	}
	_ = json.NewEncoder(w).Encode(map[string]string{"result": c.result})
}

func (d *downstream) lookup(w http.ResponseWriter, r *http.Request) {
	if d.faults(r.URL.Query().Get("lane")).on(FaultUnknownOutcome) {
		http.Error(w, "lookup unavailable", http.StatusServiceUnavailable)
		return
	}
	d.mu.Lock()
	c, ok := d.commands[r.PathValue("key")]
	d.mu.Unlock()
	if !ok {
		http.Error(w, "no such command", http.StatusNotFound)
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]string{"result": c.result})
}

// Outcomes of a call.
var (
	errConflict    = errors.New("downstream: idempotency conflict (409)")
	errUnavailable = errors.New("downstream: unavailable")
	errNotFound    = errors.New("downstream: no such command")
)

// call submits a command; a timeout is an unknown outcome
// (context.DeadlineExceeded in the error chain).
func (d *downstream) call(ctx context.Context, lane, key, hash string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	body, _ := json.Marshal(commandRequest{Lane: lane, Key: key, Hash: hash})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.url+"/commands", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Idempotency-Key", key)
	req.Header.Set("Content-Type", "application/json")
	return d.result(req)
}

// find looks a command up by key (reconciliation).
func (d *downstream) find(ctx context.Context, lane, key string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.url+"/commands/"+key+"?lane="+lane, nil)
	if err != nil {
		return "", err
	}
	return d.result(req)
}

func (d *downstream) result(req *http.Request) (string, error) {
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
		var out struct {
			Result string `json:"result"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			return "", err
		}
		return out.Result, nil
	case http.StatusConflict:
		return "", errConflict
	case http.StatusNotFound:
		return "", errNotFound
	default:
		return "", fmt.Errorf("%w: HTTP %d", errUnavailable, resp.StatusCode)
	}
}

// stats returns how many side effects ran and how many repeated requests
// were answered from a stored result.
func (d *downstream) stats() (executions, replays int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.executions, d.replays
}
