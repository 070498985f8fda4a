package camunda

import (
	"encoding/json"
	"net/url"
	"testing"
)

func TestHistoryCleanupConfigurationEnabled(t *testing.T) {
	for _, tc := range []struct {
		body string
		want string
	}{
		{`{"batchWindowStartTime":null,"batchWindowEndTime":null,"enabled":true}`, "true"},
		{`{"batchWindowStartTime":"2017-09-11T23:59:00.000+0200","batchWindowEndTime":"2017-09-12T02:00:00.000+0200","enabled":"false"}`, "false"},
		{`{"batchWindowStartTime":null,"batchWindowEndTime":null}`, "unknown"},
	} {
		var c HistoryCleanupConfiguration
		if err := json.Unmarshal([]byte(tc.body), &c); err != nil {
			t.Fatalf("%s: %v", tc.body, err)
		}
		got := "unknown"
		if c.Enabled != nil {
			got = map[bool]string{true: "true", false: "false"}[*c.Enabled]
		}
		if got != tc.want {
			t.Errorf("%s: enabled %s, want %s", tc.body, got, tc.want)
		}
	}
	var c HistoryCleanupConfiguration
	if err := json.Unmarshal([]byte(`{"batchWindowStartTime":"2017-09-11T23:59:00.000+0200"}`), &c); err != nil || c.BatchWindowStartTime == nil {
		t.Fatalf("window start not read: %v %+v", err, c)
	}
}

func TestCleanableProcessInstanceReport(t *testing.T) {
	got := servePage(t, "/history/process-definition/cleanable-process-instance-report",
		`[{"processDefinitionId":"p:1:x","processDefinitionKey":"p","historyTimeToLive":null,"finishedProcessInstanceCount":3,"cleanableProcessInstanceCount":0,"tenantId":null}]`,
		func(c *Client) ([]CleanableReportEntry, error) {
			return c.CleanableProcessInstanceReport(ctxT(t), Page{MaxResults: 50})
		},
		url.Values{"compact": {"true"}, "firstResult": {"0"}, "maxResults": {"50"}})
	if len(got) != 1 || got[0].ProcessDefinitionKey != "p" || got[0].HistoryTimeToLive != nil || got[0].FinishedCount != 3 {
		t.Fatalf("decoded %+v", got)
	}
}
