// Package engineclient drives a Camunda 7 engine (or a fork) over its REST
// API the way workers and operators do: deploy BPMN models (bpmn.go builds
// the shapes the simulator and the tests deploy), start process instances,
// fetch and lock external tasks, complete them, report failures and BPMN
// errors, extend and release locks (worker.go). The workload simulator runs
// its workers with it, and the tests drive real engines with it
// (test/harness/camundatest starts them). It uses net/http only; errors name
// the endpoint and the HTTP status and carry the response body. The
// exporter itself never links it: it only reads (package camunda).
package engineclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"sort"
	"time"
)

// DateLayout is the engine's date format (yyyy-MM-dd'T'HH:mm:ss.SSSZ) in Go notation. In query
// parameters the '+' of a positive offset must be URL-encoded; url.Values.Encode does that.
const DateLayout = "2006-01-02T15:04:05.000-0700"

// FormatTime formats t for the engine.
func FormatTime(t time.Time) string { return t.Format(DateLayout) }

// ParseTime parses a date from an engine response.
func ParseTime(s string) (time.Time, error) { return time.Parse(DateLayout, s) }

// Client calls the REST API of one engine with net/http. The zero HTTP uses a client with a
// 30 s timeout.
type Client struct {
	BaseURL            string // …/engine-rest
	Username, Password string // basic auth when Username is set
	HTTP               *http.Client
}

// WithCredentials returns a copy of c using other credentials ("" turns auth off).
func (c *Client) WithCredentials(username, password string) *Client {
	cp := *c
	cp.Username, cp.Password = username, password
	return &cp
}

// Response is a raw REST answer.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// APIError is a REST call that answered outside 2xx, or could not be made or decoded.
type APIError struct {
	Method, Endpoint string // Endpoint is the path below /engine-rest, with its query
	Status           int    // 0 when there was no HTTP answer
	Body             string
	Err              error
}

func (e *APIError) Error() string {
	if e.Status == 0 {
		return fmt.Sprintf("engine REST %s %s: %v", e.Method, e.Endpoint, e.Err)
	}
	if e.Err != nil {
		return fmt.Sprintf("engine REST %s %s: HTTP %d: %v; body: %s", e.Method, e.Endpoint, e.Status, e.Err, e.Body)
	}
	return fmt.Sprintf("engine REST %s %s: HTTP %d; body: %s", e.Method, e.Endpoint, e.Status, e.Body)
}

func (e *APIError) Unwrap() error { return e.Err }

func (c *Client) httpClient() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return &http.Client{Timeout: 30 * time.Second}
}

// Raw sends a request to endpoint (a path below /engine-rest, with its query string already
// encoded) and returns the answer whatever its status. body is JSON-encoded unless it is nil,
// a []byte (sent as is with contentType) or an io.Reader.
func (c *Client) Raw(ctx context.Context, method, endpoint string, body any, contentType string) (*Response, error) {
	return c.RawAccept(ctx, method, endpoint, body, contentType, "application/json")
}

// RawAccept is Raw with an explicit Accept header (Raw sends application/json).
func (c *Client) RawAccept(ctx context.Context, method, endpoint string, body any, contentType, accept string) (*Response, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	case io.Reader:
		rd = b
	default:
		js, err := json.Marshal(b)
		if err != nil {
			return nil, &APIError{Method: method, Endpoint: endpoint, Err: err}
		}
		rd = bytes.NewReader(js)
		contentType = "application/json"
	}
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+endpoint, rd)
	if err != nil {
		return nil, &APIError{Method: method, Endpoint: endpoint, Err: err}
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if c.Username != "" {
		req.SetBasicAuth(c.Username, c.Password)
	}
	resp, err := c.httpClient().Do(req)
	if err != nil {
		return nil, &APIError{Method: method, Endpoint: endpoint, Err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, &APIError{Method: method, Endpoint: endpoint, Status: resp.StatusCode, Err: err}
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: b}, nil
}

// Do sends a JSON request and decodes a 2xx JSON answer into out (when out is not nil). Any other
// status is an *APIError naming the endpoint and status, with the body.
func (c *Client) Do(ctx context.Context, method, endpoint string, body, out any) error {
	resp, err := c.Raw(ctx, method, endpoint, body, "")
	if err != nil {
		return err
	}
	return decode(method, endpoint, resp, out)
}

func decode(method, endpoint string, resp *Response, out any) error {
	if resp.Status < 200 || resp.Status > 299 {
		return &APIError{Method: method, Endpoint: endpoint, Status: resp.Status, Body: truncate(resp.Body, 2000)}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(resp.Body, out); err != nil {
		return &APIError{Method: method, Endpoint: endpoint, Status: resp.Status, Body: truncate(resp.Body, 2000),
			Err: fmt.Errorf("decoding JSON: %w", err)}
	}
	return nil
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}

// WithQuery appends q (encoded by url.Values.Encode, so '+' becomes %2B) to path.
func WithQuery(path string, q url.Values) string {
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}

// Get decodes GET endpoint?query into out.
func (c *Client) Get(ctx context.Context, endpoint string, q url.Values, out any) error {
	return c.Do(ctx, http.MethodGet, WithQuery(endpoint, q), nil, out)
}

// Count calls a …/count endpoint with GET and returns its count.
func (c *Client) Count(ctx context.Context, endpoint string, q url.Values) (int, error) {
	var v struct {
		Count *int `json:"count"`
	}
	if err := c.Get(ctx, endpoint, q, &v); err != nil {
		return 0, err
	}
	if v.Count == nil {
		return 0, &APIError{Method: http.MethodGet, Endpoint: WithQuery(endpoint, q), Status: 200, Err: fmt.Errorf("no count in answer")}
	}
	return *v.Count, nil
}

// Version returns GET /version.
func (c *Client) Version(ctx context.Context) (string, error) {
	var v struct {
		Version string `json:"version"`
	}
	err := c.Get(ctx, "/version", nil, &v)
	return v.Version, err
}

// ExternalTask is an external task as GET /external-task and fetchAndLock return it. Nullable
// fields are pointers.
type ExternalTask struct {
	ID                   string  `json:"id"`
	TopicName            string  `json:"topicName"`
	WorkerID             *string `json:"workerId"`
	LockExpirationTime   *string `json:"lockExpirationTime"`
	CreateTime           *string `json:"createTime"`
	Retries              *int    `json:"retries"`
	ErrorMessage         *string `json:"errorMessage"`
	Suspended            bool    `json:"suspended"`
	Priority             int64   `json:"priority"`
	ActivityID           string  `json:"activityId"`
	ActivityInstanceID   string  `json:"activityInstanceId"`
	ExecutionID          string  `json:"executionId"`
	ProcessInstanceID    string  `json:"processInstanceId"`
	ProcessDefinitionID  string  `json:"processDefinitionId"`
	ProcessDefinitionKey string  `json:"processDefinitionKey"`
	BusinessKey          *string `json:"businessKey"`
	TenantID             *string `json:"tenantId"`
}

// LockExpiration parses LockExpirationTime; ok is false when the task has none.
func (t ExternalTask) LockExpiration() (time.Time, bool, error) {
	if t.LockExpirationTime == nil {
		return time.Time{}, false, nil
	}
	ts, err := ParseTime(*t.LockExpirationTime)
	return ts, err == nil, err
}

// ExternalTasks lists external tasks (GET /external-task) with the given filters.
func (c *Client) ExternalTasks(ctx context.Context, q url.Values) ([]ExternalTask, error) {
	var out []ExternalTask
	err := c.Get(ctx, "/external-task", q, &out)
	return out, err
}

// ExternalTask returns GET /external-task/{id}.
func (c *Client) ExternalTask(ctx context.Context, id string) (ExternalTask, error) {
	var out ExternalTask
	err := c.Get(ctx, "/external-task/"+url.PathEscape(id), nil, &out)
	return out, err
}

// ErrorDetails returns GET /external-task/{id}/errorDetails, the details the last failure sent.
// The endpoint answers text/plain only: with Accept: application/json it answers 406.
func (c *Client) ErrorDetails(ctx context.Context, id string) (string, error) {
	endpoint := "/external-task/" + url.PathEscape(id) + "/errorDetails"
	resp, err := c.RawAccept(ctx, http.MethodGet, endpoint, nil, "", "text/plain")
	if err != nil {
		return "", err
	}
	if err := decode(http.MethodGet, endpoint, resp, nil); err != nil {
		return "", err
	}
	return string(resp.Body), nil
}

// TopicNames returns GET /external-task/topic-names with the given filters, sorted.
func (c *Client) TopicNames(ctx context.Context, q url.Values) ([]string, error) {
	var out []string
	err := c.Get(ctx, "/external-task/topic-names", q, &out)
	sort.Strings(out)
	return out, err
}

// Incident is an open incident as GET /incident returns it.
type Incident struct {
	ID                  string  `json:"id"`
	IncidentType        string  `json:"incidentType"`
	IncidentTimestamp   string  `json:"incidentTimestamp"`
	ActivityID          string  `json:"activityId"`
	FailedActivityID    *string `json:"failedActivityId"`
	ProcessDefinitionID string  `json:"processDefinitionId"`
	ProcessInstanceID   string  `json:"processInstanceId"`
	ExecutionID         string  `json:"executionId"`
	Configuration       string  `json:"configuration"`
	IncidentMessage     *string `json:"incidentMessage"`
}

// Incidents lists open incidents (GET /incident).
func (c *Client) Incidents(ctx context.Context, q url.Values) ([]Incident, error) {
	var out []Incident
	err := c.Get(ctx, "/incident", q, &out)
	return out, err
}

// Deployment is the answer of POST /deployment/create (the fields the tests need).
type Deployment struct {
	ID                         string                       `json:"id"`
	Name                       string                       `json:"name"`
	DeployedProcessDefinitions map[string]ProcessDefinition `json:"deployedProcessDefinitions"`
}

// ProcessDefinition is a deployed process definition.
type ProcessDefinition struct {
	ID      string `json:"id"`
	Key     string `json:"key"`
	Version int    `json:"version"`
}

// Deploy posts the BPMN files (file name -> content) as one deployment with duplicate filtering
// (deploy-changed-only), so deploying the same content again creates no new version.
func (c *Client) Deploy(ctx context.Context, name string, files map[string][]byte) (Deployment, error) {
	return c.DeployForTenant(ctx, name, "", files)
}

// DeployForTenant is Deploy for a tenant: the definitions belong to it
// ("" deploys for no tenant, as Deploy does).
func (c *Client) DeployForTenant(ctx context.Context, name, tenant string, files map[string][]byte) (Deployment, error) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fields := [][2]string{{"deployment-name", name}, {"enable-duplicate-filtering", "true"}, {"deploy-changed-only", "true"}}
	if tenant != "" {
		fields = append(fields, [2]string{"tenant-id", tenant})
	}
	for _, f := range fields {
		if err := mw.WriteField(f[0], f[1]); err != nil {
			return Deployment{}, err
		}
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		w, err := mw.CreateFormFile(n, n)
		if err != nil {
			return Deployment{}, err
		}
		if _, err := w.Write(files[n]); err != nil {
			return Deployment{}, err
		}
	}
	if err := mw.Close(); err != nil {
		return Deployment{}, err
	}
	const endpoint = "/deployment/create"
	resp, err := c.Raw(ctx, http.MethodPost, endpoint, buf.Bytes(), mw.FormDataContentType())
	if err != nil {
		return Deployment{}, err
	}
	var d Deployment
	err = decode(http.MethodPost, endpoint, resp, &d)
	return d, err
}

// ProcessInstance is the answer of starting a process.
type ProcessInstance struct {
	ID           string `json:"id"`
	DefinitionID string `json:"definitionId"`
	BusinessKey  string `json:"businessKey"`
	Ended        bool   `json:"ended"`
	Suspended    bool   `json:"suspended"`
}

// StartProcess starts the latest version of a process definition by key. vars may be nil.
func (c *Client) StartProcess(ctx context.Context, key, businessKey string, vars map[string]any) (ProcessInstance, error) {
	body := map[string]any{"variables": variables(vars)}
	if businessKey != "" {
		body["businessKey"] = businessKey
	}
	var pi ProcessInstance
	err := c.Do(ctx, http.MethodPost, "/process-definition/key/"+url.PathEscape(key)+"/start", body, &pi)
	return pi, err
}

// StartProcessForTenant starts the latest version of the tenant's process
// definition of key ("": of no tenant, as StartProcess). vars may be nil.
func (c *Client) StartProcessForTenant(ctx context.Context, key, tenant string, vars map[string]any) (ProcessInstance, error) {
	if tenant == "" {
		return c.StartProcess(ctx, key, "", vars)
	}
	var pi ProcessInstance
	err := c.Do(ctx, http.MethodPost, "/process-definition/key/"+url.PathEscape(key)+"/tenant-id/"+url.PathEscape(tenant)+"/start",
		map[string]any{"variables": variables(vars)}, &pi)
	return pi, err
}

// SetProcessInstanceSuspended suspends (true) or activates (false) a process instance.
func (c *Client) SetProcessInstanceSuspended(ctx context.Context, id string, suspended bool) error {
	return c.Do(ctx, http.MethodPut, "/process-instance/"+url.PathEscape(id)+"/suspended",
		map[string]any{"suspended": suspended}, nil)
}

// SetProcessDefinitionSuspended suspends or activates every version of a process definition by
// key, with its process instances when includeInstances is set.
func (c *Client) SetProcessDefinitionSuspended(ctx context.Context, key string, suspended, includeInstances bool) error {
	return c.Do(ctx, http.MethodPut, "/process-definition/key/"+url.PathEscape(key)+"/suspended",
		map[string]any{"suspended": suspended, "includeProcessInstances": includeInstances}, nil)
}

// variables turns plain values into the engine's {"name": {"value": v}} form (type inferred).
func variables(vars map[string]any) map[string]any {
	out := make(map[string]any, len(vars))
	for k, v := range vars {
		out[k] = map[string]any{"value": v}
	}
	return out
}
