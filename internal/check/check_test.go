package check

import (
	"strings"
	"testing"
)

// The REST mode line says which history the collectors read at each level
// (and only the external task log's index advice where that log is read).
func TestRESTHistoryReading(t *testing.T) {
	for _, tc := range []struct{ level, want, not string }{
		{"full", "act_hi_ext_task_log (timestamp_)", "activity instance"},
		{"", "act_hi_ext_task_log (timestamp_)", "activity instance"},
		{"audit", "activity instance history by end time", "act_hi_ext_task_log"},
		{"activity", "activity instance history by end time", "act_hi_ext_task_log"},
		{"none", "no history is read at level none", "act_hi_ext_task_log"},
		{"unknown", "set camunda[0].history_level", "act_hi_ext_task_log"},
	} {
		got := restHistoryReading(tc.level, "camunda[0]")
		if !strings.Contains(got, tc.want) || strings.Contains(got, tc.not) {
			t.Errorf("level %q: %q, want it to say %q and not %q", tc.level, got, tc.want, tc.not)
		}
	}
}
