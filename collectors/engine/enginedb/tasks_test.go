package enginedb

import (
	"strings"
	"testing"
)

// TestInflightSQLAsksOnlyWhatTheReadingNeeds: the in-flight query joins the
// process instances only for the status page's business keys, filters by
// topic only when topics are folded, and sorts only when max_listed_tasks
// cuts the list (then in the order the REST reader spends it in).
func TestInflightSQLAsksOnlyWhatTheReadingNeeds(t *testing.T) {
	for _, tc := range []struct {
		keys, everyTopic, cut bool
		has, lacks            []string
	}{
		{false, true, false, []string{"LIMIT $2", "topic_name_ IS NOT NULL"}, []string{"act_ru_execution", "ORDER BY", "$3"}},
		{true, true, false, []string{"LEFT JOIN p_act_ru_execution pi", "pi.business_key_"}, []string{"ORDER BY", "$3"}},
		{false, false, false, []string{"t.topic_name_ = ANY($3)"}, []string{"ORDER BY", "act_ru_execution"}},
		{false, true, true, []string{`ORDER BY t.topic_name_ COLLATE "C", t.lock_exp_time_ > $1::timestamp DESC, t.id_`, "LIMIT $2"}, []string{"$3"}},
		{true, false, true, []string{"ORDER BY", "ANY($3)", "pi.business_key_"}, nil},
	} {
		sql := InflightSQL("p_", tc.keys, tc.everyTopic, tc.cut)
		for _, s := range tc.has {
			if !strings.Contains(sql, s) {
				t.Errorf("keys=%v everyTopic=%v cut=%v: the query lacks %q:\n%s", tc.keys, tc.everyTopic, tc.cut, s, sql)
			}
		}
		for _, s := range tc.lacks {
			if strings.Contains(sql, s) {
				t.Errorf("keys=%v everyTopic=%v cut=%v: the query has %q:\n%s", tc.keys, tc.everyTopic, tc.cut, s, sql)
			}
		}
		if strings.Index(sql, "ORDER BY") > strings.Index(sql, "LIMIT") {
			t.Errorf("LIMIT before ORDER BY:\n%s", sql)
		}
	}
}
