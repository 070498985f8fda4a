package benchkit

import (
	"os"
	"strings"
	"testing"
)

// TestScanRows sums a plan as EXPLAIN (FORMAT JSON) gives it: a bitmap
// heap scan over a bitmap index scan under a parallel gather, with the
// two pickers the benchmarks use.
func TestScanRows(t *testing.T) {
	plan := map[string]any{
		"Node Type": "Gather", "Actual Rows": 1000.0, "Actual Loops": 1.0,
		"Plans": []any{map[string]any{
			"Node Type": "Bitmap Heap Scan", "Relation Name": "t", "Actual Rows": 300.0, "Rows Removed by Filter": 20.0,
			"Rows Removed by Index Recheck": 5.0, "Actual Loops": 3.0,
			"Plans": []any{map[string]any{
				"Node Type": "Bitmap Index Scan", "Index Name": "t_idx", "Actual Rows": 975.0, "Actual Loops": 1.0,
			}},
		}, map[string]any{
			// A CTE scan reads no table; no loops given counts as one.
			"Node Type": "CTE Scan", "Actual Rows": 7.0,
		}},
	}
	tests := []struct {
		name   string
		counts func(map[string]any) bool
		want   float64
	}{
		{"every node", func(map[string]any) bool { return true }, 1000 + (300+20+5)*3 + 975 + 7},
		{"scans but bitmap index scans", func(n map[string]any) bool {
			return strings.Contains(NodeType(n), "Scan") && NodeType(n) != "Bitmap Index Scan"
		}, (300+20+5)*3 + 7},
		{"on a table", func(n map[string]any) bool { _, ok := n["Relation Name"]; return ok }, (300 + 20 + 5) * 3},
		{"none", func(map[string]any) bool { return false }, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ScanRows(plan, tc.counts); got != tc.want {
				t.Errorf("ScanRows = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestResidentMemory(t *testing.T) {
	rss, hwm, err := ResidentMemory(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if rss <= 0 || hwm < rss {
		t.Errorf("this process: RSS %v MiB, peak %v MiB; want 0 < RSS <= peak", rss, hwm)
	}
	if _, _, err := ResidentMemory(-1); err == nil {
		t.Error("ResidentMemory(-1): no error")
	}
}
