package camunda

import "context"

// LogKind selects one kind of historic external-task log entry.
type LogKind int

// Log kinds. The engine writes one entry when a task is created, and one per
// failure, success or deletion; a lock or a lock expiry writes none.
const (
	LogAny      LogKind = iota // no filter: all entries
	LogCreation                // creationLog=true
	LogFailure                 // failureLog=true
	LogSuccess                 // successLog=true
	LogDeletion                // deletionLog=true
)

// HistoryLogQuery filters GET /history/external-task-log/count. Needs history
// level full (the Spring Boot default). There is no timestamp filter, and
// history cleanup makes counts fall: treat them as gauges and derive
// counters from positive deltas.
type HistoryLogQuery struct {
	TopicName string
	Log       LogKind
}

func (q HistoryLogQuery) encode(v params) {
	v.set("topicName", q.TopicName)
	oneOf(v, q.Log, map[LogKind]string{LogCreation: "creationLog", LogFailure: "failureLog", LogSuccess: "successLog", LogDeletion: "deletionLog"})
}

// CountExternalTaskLog returns the number of historic external-task log
// entries matching q.
func (c *Client) CountExternalTaskLog(ctx context.Context, q HistoryLogQuery) (int64, error) {
	return getCount(ctx, c, "/history/external-task-log/count", q)
}
