package camunda

import (
	"net/http"
	"net/url"
	"testing"
	"time"
)

// servePage answers GET path with body, makes the list call and checks the
// query it sent; it returns what the call decoded.
func servePage[T any](t *testing.T, path, body string, call func(*Client) ([]T, error), want url.Values) []T {
	t.Helper()
	f := newFakeEngine(t)
	var query url.Values
	f.handle(path, func(w http.ResponseWriter, r *http.Request) {
		query = r.URL.Query()
		_, _ = w.Write([]byte(body))
	})
	got, err := call(newTestClient(t, f.url(), nil))
	if err != nil {
		t.Fatal(err)
	}
	if query.Encode() != want.Encode() {
		t.Fatalf("query %s, want %s", query.Encode(), want.Encode())
	}
	return got
}

func TestListExternalTaskLog(t *testing.T) {
	got := servePage(t, "/history/external-task-log",
		`[{"id":"l1","timestamp":"2026-12-02T13:04:05.120+0100","externalTaskId":"t1","topicName":"a",
"workerId":"w1","retries":2,"errorMessage":"boom","creationLog":false,"failureLog":true,"successLog":false,"deletionLog":false}]`,
		func(c *Client) ([]ExternalTaskLogEntry, error) {
			return c.ListExternalTaskLog(ctxT(t), HistoryLogQuery{TopicName: "a", Log: LogFailure},
				Page{MaxResults: 5, Sort: Sort{By: ExternalTaskLogSortTimestamp, Order: Descending}})
		},
		url.Values{"topicName": {"a"}, "failureLog": {"true"}, "firstResult": {"0"}, "maxResults": {"5"},
			"sortBy": {"timestamp"}, "sortOrder": {"desc"}})
	if len(got) != 1 || got[0].ExternalTaskID != "t1" || !got[0].FailureLog || got[0].Retries == nil || *got[0].Retries != 2 ||
		got[0].Timestamp.UTC().Format("15:04:05.000") != "12:04:05.120" {
		t.Fatalf("decoded %+v", got)
	}
}

func TestListJobLog(t *testing.T) {
	got := servePage(t, "/history/job-log",
		`[{"id":"l1","timestamp":"2026-12-02T13:04:05.120+0100","jobId":"j1","processDefinitionKey":"order",
"activityId":"bad","creationLog":false,"failureLog":true,"successLog":false,"deletionLog":false}]`,
		func(c *Client) ([]JobLogEntry, error) {
			return c.ListJobLog(ctxT(t), Page{MaxResults: 5, Sort: Sort{By: JobLogSortTimestamp, Order: Descending}})
		},
		url.Values{"firstResult": {"0"}, "maxResults": {"5"}, "sortBy": {"timestamp"}, "sortOrder": {"desc"}})
	if len(got) != 1 || got[0].JobID != "j1" || !got[0].FailureLog || got[0].ProcessDefinitionKey != "order" ||
		got[0].Timestamp.UTC().Format("15:04:05.000") != "12:04:05.120" {
		t.Fatalf("decoded %+v", got)
	}
}

func TestListHistoricActivityInstances(t *testing.T) {
	after := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	got := servePage(t, "/history/activity-instance",
		`[{"id":"caught:1","activityId":"caught","activityType":"boundaryError","rootProcessInstanceId":"p1",
"startTime":"2026-12-02T13:04:05.120+0100","endTime":null,"canceled":false,"completeScope":false}]`,
		func(c *Client) ([]HistoricActivityInstance, error) {
			return c.ListHistoricActivityInstances(ctxT(t),
				HistoricActivityInstanceQuery{ActivityID: "task_1", ActivityType: "boundaryError", CompleteScope: true, StartedAfter: after, FinishedAfter: after},
				Page{MaxResults: 5, Sort: Sort{By: ActivityInstanceSortStartTime}})
		},
		url.Values{"activityId": {"task_1"}, "activityType": {"boundaryError"}, "completeScope": {"true"},
			"startedAfter": {"2026-12-02T12:00:00.000+0000"}, "finishedAfter": {"2026-12-02T12:00:00.000+0000"},
			"firstResult": {"0"}, "maxResults": {"5"}, "sortBy": {"startTime"}, "sortOrder": {"asc"}})
	if len(got) != 1 || got[0].ActivityType != "boundaryError" || got[0].RootProcessInstanceID != "p1" || got[0].EndTime != nil ||
		got[0].StartTime.UTC().Format("15:04:05.000") != "12:04:05.120" {
		t.Fatalf("decoded %+v", got)
	}
}
