package camunda

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// registerAll answers every endpoint the client calls with its fixture.
func registerAll(t *testing.T, f *fakeEngine, prefix string) {
	t.Helper()
	for path, file := range map[string]string{
		"/version":                         "version.json",
		"/telemetry/data":                  "telemetry_data.json",
		"/external-task":                   "external_task_list.json",
		"/external-task/count":             "external_task_count.json",
		"/external-task/topic-names":       "topic_names.json",
		"/incident":                        "incident_list.json",
		"/incident/count":                  "incident_count.json",
		"/job":                             "job_list.json",
		"/job/count":                       "job_count.json",
		"/history/external-task-log/count": "history_external_task_log_count.json",
		"/process-definition":              "process_definition_list.json",
	} {
		f.fixture(t, prefix+path, file)
	}
}

// counted and listed make a Count* or List* method, given as a method
// expression such as (*Client).CountJobs, and its arguments into a call of
// TestQueryEncoding's table.
func counted[Q any](count func(*Client, context.Context, Q) (int64, error), q Q) func(context.Context, *Client) error {
	return func(ctx context.Context, c *Client) error {
		_, err := count(c, ctx, q)
		return err
	}
}

func listed[Q, T any](list func(*Client, context.Context, Q, Page) ([]T, error), q Q, p Page) func(context.Context, *Client) error {
	return func(ctx context.Context, c *Client) error {
		_, err := list(c, ctx, q, p)
		return err
	}
}

func TestQueryEncoding(t *testing.T) {
	cet := time.FixedZone("CET", 3600)
	est := time.FixedZone("EST", -5*3600)
	lockBefore := time.Date(2026, 1, 25, 13, 33, 42, 165_000_000, cet)
	lockAfter := time.Date(2026, 1, 25, 7, 0, 0, 0, est)

	tests := []struct {
		name      string
		call      func(context.Context, *Client) error
		wantPath  string
		wantQuery string
	}{
		{
			name:     "version",
			call:     func(ctx context.Context, c *Client) error { _, err := c.Version(ctx); return err },
			wantPath: "/version",
		},
		{
			name:     "count external tasks, no filter",
			call:     counted((*Client).CountExternalTasks, ExternalTaskQuery{}),
			wantPath: "/external-task/count",
		},
		{
			name:      "count external tasks, locked with retries left, active",
			call:      counted((*Client).CountExternalTasks, ExternalTaskQuery{TopicName: "fulfillment.submit-command", Lock: LockLocked, Retries: RetriesLeft, Suspension: SuspensionActive}),
			wantPath:  "/external-task/count",
			wantQuery: "active=true&locked=true&topicName=fulfillment.submit-command&withRetriesLeft=true",
		},
		{
			name: "count external tasks, the other half of each pair and dates with offsets",
			call: counted((*Client).CountExternalTasks, ExternalTaskQuery{
				WorkerID: "worker a", Lock: LockNotLocked, Retries: RetriesNone, Suspension: SuspensionSuspended,
				LockExpirationBefore: lockBefore, LockExpirationAfter: lockAfter,
			}),
			wantPath: "/external-task/count",
			wantQuery: "lockExpirationAfter=2026-01-25T07%3A00%3A00.000-0500" +
				"&lockExpirationBefore=2026-01-25T13%3A33%3A42.165%2B0100" +
				"&noRetriesLeft=true&notLocked=true&suspended=true&workerId=worker+a",
		},
		{
			name:      "list external tasks, zero page still sends maxResults",
			call:      listed((*Client).ListExternalTasks, ExternalTaskQuery{TopicName: "t"}, Page{}),
			wantPath:  "/external-task",
			wantQuery: "firstResult=0&maxResults=100&topicName=t",
		},
		{
			name: "list external tasks, id lists and sort",
			call: listed((*Client).ListExternalTasks, ExternalTaskQuery{
				ExternalTaskIDIn: []string{"e1", "e2"}, ProcessInstanceIDIn: []string{"p1"}, ActivityIDIn: []string{"A", "B"},
				TenantIDIn: []string{"t1"}, ProcessDefinitionID: "fulfillment:3:x",
			}, Page{FirstResult: 20, MaxResults: 10, Sort: Sort{By: ExternalTaskSortCreateTime, Order: Descending}}),
			wantPath: "/external-task",
			wantQuery: "activityIdIn=A%2CB&externalTaskIdIn=e1%2Ce2&firstResult=20&maxResults=10" +
				"&processDefinitionId=fulfillment%3A3%3Ax&processInstanceIdIn=p1&sortBy=createTime&sortOrder=desc&tenantIdIn=t1",
		},
		{
			name:      "sortBy alone still sends sortOrder",
			call:      listed((*Client).ListExternalTasks, ExternalTaskQuery{}, Page{MaxResults: 5, Sort: Sort{By: ExternalTaskSortID}}),
			wantPath:  "/external-task",
			wantQuery: "firstResult=0&maxResults=5&sortBy=id&sortOrder=asc",
		},
		{
			name:      "sortOrder alone sends neither",
			call:      listed((*Client).ListExternalTasks, ExternalTaskQuery{}, Page{FirstResult: -3, MaxResults: 5, Sort: Sort{Order: Descending}}),
			wantPath:  "/external-task",
			wantQuery: "firstResult=0&maxResults=5",
		},
		{
			name:      "topic names, only true filters",
			call:      func(ctx context.Context, c *Client) error { _, err := c.TopicNames(ctx, true, false, true); return err },
			wantPath:  "/external-task/topic-names",
			wantQuery: "withLockedTasks=true&withRetriesLeft=true",
		},
		{
			name: "topic names, no filter",
			call: func(ctx context.Context, c *Client) error {
				_, err := c.TopicNames(ctx, false, false, false)
				return err
			},
			wantPath: "/external-task/topic-names",
		},
		{
			name: "topic names, unlocked",
			call: func(ctx context.Context, c *Client) error {
				_, err := c.TopicNames(ctx, false, true, false)
				return err
			},
			wantPath:  "/external-task/topic-names",
			wantQuery: "withUnlockedTasks=true",
		},
		{
			name:      "count incidents",
			call:      counted((*Client).CountIncidents, IncidentQuery{IncidentType: IncidentFailedExternalTask, ProcessDefinitionKeyIn: []string{"payment", "fulfillment"}, ActivityID: "CapturePayment"}),
			wantPath:  "/incident/count",
			wantQuery: "activityId=CapturePayment&incidentType=failedExternalTask&processDefinitionKeyIn=payment%2Cfulfillment",
		},
		{
			name:      "list incidents",
			call:      listed((*Client).ListIncidents, IncidentQuery{IncidentType: IncidentFailedJob}, Page{MaxResults: 50, Sort: Sort{By: IncidentSortTimestamp}}),
			wantPath:  "/incident",
			wantQuery: "firstResult=0&incidentType=failedJob&maxResults=50&sortBy=incidentTimestamp&sortOrder=asc",
		},
		{
			name:      "count jobs with no retries left",
			call:      counted((*Client).CountJobs, JobQuery{Retries: RetriesNone, ProcessDefinitionKey: "fulfillment"}),
			wantPath:  "/job/count",
			wantQuery: "noRetriesLeft=true&processDefinitionKey=fulfillment",
		},
		{
			name: "list jobs",
			call: listed((*Client).ListJobs, JobQuery{Executable: true, WithException: true, Timers: true, Retries: RetriesLeft, Suspension: SuspensionActive, ActivityID: "ReserveStock"},
				Page{MaxResults: 25, Sort: Sort{By: JobSortDueDate, Order: Descending}}),
			wantPath: "/job",
			wantQuery: "active=true&activityId=ReserveStock&executable=true&firstResult=0&maxResults=25" +
				"&sortBy=jobDueDate&sortOrder=desc&timers=true&withException=true&withRetriesLeft=true",
		},
		{
			name:      "history log, failures of a topic",
			call:      counted((*Client).CountExternalTaskLog, HistoryLogQuery{TopicName: "payment.capture", Log: LogFailure}),
			wantPath:  "/history/external-task-log/count",
			wantQuery: "failureLog=true&topicName=payment.capture",
		},
		{
			name:      "history log, creation",
			call:      counted((*Client).CountExternalTaskLog, HistoryLogQuery{TopicName: "t", Log: LogCreation}),
			wantPath:  "/history/external-task-log/count",
			wantQuery: "creationLog=true&topicName=t",
		},
		{
			name:      "history log, success",
			call:      counted((*Client).CountExternalTaskLog, HistoryLogQuery{TopicName: "t", Log: LogSuccess}),
			wantPath:  "/history/external-task-log/count",
			wantQuery: "successLog=true&topicName=t",
		},
		{
			name:      "history log, deletion",
			call:      counted((*Client).CountExternalTaskLog, HistoryLogQuery{Log: LogDeletion}),
			wantPath:  "/history/external-task-log/count",
			wantQuery: "deletionLog=true",
		},
		{
			name: "process definition lookup sends maxResults",
			call: func(ctx context.Context, c *Client) error {
				_, err := c.ProcessDefinitionKeys(ctx, []string{"fulfillment:3:5a1b2c3d-f9a0-11f0-9c1e-0242ac120002", "payment:1:4c2d3e4f-f9a0-11f0-9c1e-0242ac120002"})
				return err
			},
			wantPath: "/process-definition",
			wantQuery: "firstResult=0&maxResults=2&processDefinitionIdIn=" +
				"fulfillment%3A3%3A5a1b2c3d-f9a0-11f0-9c1e-0242ac120002%2Cpayment%3A1%3A4c2d3e4f-f9a0-11f0-9c1e-0242ac120002",
		},
	}
	for _, engine := range []struct{ name, prefix string }{{"", ""}, {"second engine", "/engine/second engine"}} {
		for _, tt := range tests {
			t.Run(engine.prefix+tt.name, func(t *testing.T) {
				f := newFakeEngine(t)
				registerAll(t, f, engine.prefix)
				c := newTestClient(t, f.url(), func(cfg *Config) { cfg.Engine = engine.name })
				if err := tt.call(ctxT(t), c); err != nil {
					t.Fatalf("call: %v", err)
				}
				got := f.last(t)
				if got.Method != http.MethodGet {
					t.Errorf("method = %s, want GET (the client only reads)", got.Method)
				}
				if want := "/engine-rest" + engine.prefix + tt.wantPath; got.Path != want {
					t.Errorf("path = %q, want %q", got.Path, want)
				}
				if got.RawQuery != tt.wantQuery {
					t.Errorf("query =\n  %s\nwant\n  %s", got.RawQuery, tt.wantQuery)
				}
				if strings.Contains(got.RawQuery, "=false") {
					t.Errorf("query sends a false filter: %s", got.RawQuery)
				}
				if strings.Contains(got.RawQuery, "+0") {
					t.Errorf("query has an unencoded '+' offset: %s", got.RawQuery)
				}
			})
		}
	}
}

// Every list call must carry maxResults, whatever the caller passes.
func TestListCallsAlwaysSendMaxResults(t *testing.T) {
	f := newFakeEngine(t)
	registerAll(t, f, "")
	c := newTestClient(t, f.url(), nil)
	ctx := ctxT(t)
	for _, p := range []Page{{}, {MaxResults: -1}, {FirstResult: 10}, {MaxResults: 1}} {
		if _, err := c.ListExternalTasks(ctx, ExternalTaskQuery{}, p); err != nil {
			t.Fatal(err)
		}
		if _, err := c.ListIncidents(ctx, IncidentQuery{}, p); err != nil {
			t.Fatal(err)
		}
		if _, err := c.ListJobs(ctx, JobQuery{}, p); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range f.reqs() {
		if !strings.Contains(r.RawQuery, "maxResults=") {
			t.Errorf("%s?%s: no maxResults", r.Path, r.RawQuery)
		}
		if strings.Contains(r.RawQuery, "maxResults=0") || strings.Contains(r.RawQuery, "maxResults=-") {
			t.Errorf("%s?%s: maxResults not positive", r.Path, r.RawQuery)
		}
	}
}
