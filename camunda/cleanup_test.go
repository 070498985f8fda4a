package camunda

import (
	"encoding/json"
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
