package tables_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/test/harness/collectortest"
)

type idemRow struct {
	scope, key, status string
	updated            float64
	errorCode          string
	duplicates         int
}

func (d *testDB) upsertIdem(rows ...idemRow) {
	d.T.Helper()
	for _, r := range rows {
		var code any
		if r.errorCode != "" {
			code = r.errorCode
		}
		d.Exec(`INSERT INTO workflow_idempotency_record (scope, idempotency_key, business_entity_id, status, error_code, updated_at, created_at, duplicate_count)
			VALUES ($1, $2, 'order-1', $3, $4, $5, $5, $6)
			ON CONFLICT (scope, idempotency_key) DO UPDATE SET status = EXCLUDED.status, error_code = EXCLUDED.error_code,
				updated_at = EXCLUDED.updated_at, duplicate_count = EXCLUDED.duplicate_count`,
			r.scope, r.key, r.status, code, collectortest.At(r.updated), r.duplicates)
	}
}

// gauge is count, oldest age and stale count of one scope and status.
type gauge struct{ count, oldest, stale float64 }

type idemScope struct {
	gauges      map[string]gauge   // open status -> values; absent means zero
	transitions map[string]float64 // status -> count; absent means zero
	conflicts   float64
	duplicates  float64
	unmapped    bool
}

var allIdemStatuses = []string{"COMPLETED", "FAILED_FINAL", "FAILED_RETRYABLE", "RECONCILED", "SIDE_EFFECT_SUBMITTED", "STARTED", "UNKNOWN_OUTCOME"}

func idemExpect(scopes map[string]idemScope) string {
	names := make([]string, 0, len(scopes))
	for n := range scopes {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	series := func(metric string, value func(scope string, s idemScope, status string) (float64, bool), statuses func(s idemScope) []string) {
		b.WriteString(collectortest.HelpHeader(metric))
		for _, n := range names {
			s := scopes[n]
			for _, st := range statuses(s) {
				if v, ok := value(n, s, st); ok {
					fmt.Fprintf(&b, "%s{database=\"orders\",scope=%q,status=%q} %v\n", metric, n, st, v)
				}
			}
		}
	}
	open := func(s idemScope) []string {
		o := []string{"STARTED", "SIDE_EFFECT_SUBMITTED", "FAILED_RETRYABLE", "UNKNOWN_OUTCOME"}
		if s.unmapped {
			o = append(o, "unmapped")
		}
		return o
	}
	all := func(s idemScope) []string {
		if s.unmapped {
			return append(append([]string(nil), allIdemStatuses...), "unmapped")
		}
		return allIdemStatuses
	}
	series(catalog.IdempotencyRecords, func(_ string, s idemScope, st string) (float64, bool) { return s.gauges[st].count, true }, open)
	series(catalog.IdempotencyOldestRecordAge, func(_ string, s idemScope, st string) (float64, bool) { return s.gauges[st].oldest, true }, open)
	series(catalog.IdempotencyStaleRecords, func(_ string, s idemScope, st string) (float64, bool) { return s.gauges[st].stale, true }, open)
	series(catalog.IdempotencyTransitions, func(_ string, s idemScope, st string) (float64, bool) { return s.transitions[st], true }, all)
	b.WriteString(collectortest.HelpHeader(catalog.IdempotencyConflicts))
	for _, n := range names {
		fmt.Fprintf(&b, "%s{database=\"orders\",scope=%q} %v\n", catalog.IdempotencyConflicts, n, scopes[n].conflicts)
	}
	b.WriteString(collectortest.HelpHeader(catalog.IdempotencyDuplicatesPrevented))
	for _, n := range names {
		fmt.Fprintf(&b, "%s{database=\"orders\",scope=%q} %v\n", catalog.IdempotencyDuplicatesPrevented, n, scopes[n].duplicates)
	}
	return b.String()
}

var idemNames = []string{catalog.IdempotencyRecords, catalog.IdempotencyOldestRecordAge, catalog.IdempotencyStaleRecords,
	catalog.IdempotencyTransitions, catalog.IdempotencyConflicts, catalog.IdempotencyDuplicatesPrevented}

const (
	scopeA = "ORDER_FULFILLMENT_SUBMISSION"
	scopeB = "QUOTE_APPROVAL_DECISION"
	scopeC = "BILLING_PRECHECK"
)

func TestIdempotencyExactValues(t *testing.T) {
	d := newTestDB(t, true)
	d.upsertIdem(
		idemRow{scopeA, "k1", "STARTED", -1200, "", 0}, // stale: 20 min without update
		idemRow{scopeA, "k2", "STARTED", -60, "", 0},
		idemRow{scopeA, "k3", "SIDE_EFFECT_SUBMITTED", -30, "", 0},
		idemRow{scopeA, "k4", "UNKNOWN_OUTCOME", -3600, "", 0},
		idemRow{scopeA, "k5", "COMPLETED", -7200, "", 0},
		idemRow{scopeB, "k6", "FAILED_RETRYABLE", -100, "", 2},
		idemRow{scopeB, "k7", "PENDING_REVIEW", -10, "", 0}, // a value no mapping names
		idemRow{scopeB, "k8", "COMPLETED", -20, "IDEMPOTENCY_CONFLICT", 0},
	)
	e := d.newExporter(collectortest.BaseConfig)
	e.Collect()
	e.Expect(idemExpect(map[string]idemScope{
		scopeA: {gauges: map[string]gauge{"STARTED": {2, 1200, 1}, "SIDE_EFFECT_SUBMITTED": {1, 30, 0}, "UNKNOWN_OUTCOME": {1, 3600, 1}}},
		scopeB: {gauges: map[string]gauge{"FAILED_RETRYABLE": {1, 100, 0}, "unmapped": {1, 10, 0}}, unmapped: true},
	}), idemNames...)
	if !strings.Contains(e.Logs.String(), `value=PENDING_REVIEW`) || !strings.Contains(e.Logs.String(), "column=status") {
		t.Errorf("unmapped status not logged with table, column and value:\n%s", e.Logs.String())
	}

	d.SetClock(30 * time.Second)
	d.upsertIdem(
		idemRow{scopeA, "k2", "COMPLETED", 20, "", 0},
		idemRow{scopeA, "k3", "UNKNOWN_OUTCOME", 25, "", 0},
		idemRow{scopeB, "k6", "FAILED_RETRYABLE", 15, "", 5}, // three more duplicates absorbed
		idemRow{scopeB, "k9", "STARTED", 5, "IDEMPOTENCY_CONFLICT", 0},
		idemRow{scopeC, "k10", "RECONCILED", 28, "", 0},
	)
	e.Collect()
	after := map[string]idemScope{
		scopeA: {gauges: map[string]gauge{"STARTED": {1, 1230, 1}, "UNKNOWN_OUTCOME": {2, 3630, 1}},
			transitions: map[string]float64{"COMPLETED": 1, "UNKNOWN_OUTCOME": 1}},
		scopeB: {gauges: map[string]gauge{"STARTED": {1, 25, 0}, "FAILED_RETRYABLE": {1, 15, 0}, "unmapped": {1, 40, 0}}, unmapped: true,
			transitions: map[string]float64{"STARTED": 1, "FAILED_RETRYABLE": 1}, conflicts: 1, duplicates: 3},
		scopeC: {transitions: map[string]float64{"RECONCILED": 1}},
	}
	e.Expect(idemExpect(after), idemNames...)

	// Re-reading the same window changes no counter; retention deleting
	// finished records changes none either.
	d.SetClock(50 * time.Second)
	d.Exec(`DELETE FROM workflow_idempotency_record WHERE status IN ('COMPLETED', 'RECONCILED')`)
	e.Collect()
	a := after[scopeA]
	a.gauges = map[string]gauge{"STARTED": {1, 1250, 1}, "UNKNOWN_OUTCOME": {2, 3650, 1}}
	after[scopeA] = a
	b := after[scopeB]
	b.gauges = map[string]gauge{"STARTED": {1, 45, 0}, "FAILED_RETRYABLE": {1, 35, 0}, "unmapped": {1, 60, 0}}
	after[scopeB] = b
	e.Expect(idemExpect(after), idemNames...)
}

func TestIdempotencyWithoutDuplicateColumnOmitsThatMetric(t *testing.T) {
	_, e := oneStartedRecord(t)
	if err := e.Compare("", catalog.IdempotencyDuplicatesPrevented); err != nil {
		t.Fatal(err)
	}
}

// oneStartedRecord is a database without the duplicate_count extension
// holding one STARTED record of scope A, and its exporter after a first
// collection that saw it.
func oneStartedRecord(t *testing.T) (*testDB, *exporter) {
	t.Helper()
	d := newTestDB(t, false)
	d.upsertIdemNoDup(scopeA, "k1", "STARTED", -5)
	e := d.newExporter(collectortest.BaseConfig)
	e.Collect()
	if got := e.Value(catalog.IdempotencyRecords, map[string]string{"scope": scopeA, "status": "STARTED"}); got != 1 {
		t.Fatalf("records = %v, want 1", got)
	}
	return d, e
}

func (d *testDB) upsertIdemNoDup(scope, key, status string, updated float64) {
	d.T.Helper()
	d.Exec(`INSERT INTO workflow_idempotency_record (scope, idempotency_key, business_entity_id, status, updated_at) VALUES ($1, $2, 'e', $3, $4)`,
		scope, key, status, collectortest.At(updated))
}
