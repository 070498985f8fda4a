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

// History lists whose first entry tells the engine's history level apart
// (see HistoryHasEntries): the engine writes activity instances from level
// activity on, variable instances from audit on, the external task log
// only at full.
const (
	HistoryActivityInstances = "/history/activity-instance"
	HistoryVariableInstances = "/history/variable-instance"
	HistoryExternalTaskLog   = "/history/external-task-log"
)

// HistoryHasEntries reports whether the history list at path (one of the
// History* lists) holds any entry the user may read: one request for at
// most one entry. With authorization enabled, a user without READ_HISTORY
// sees none.
func (c *Client) HistoryHasEntries(ctx context.Context, path string) (bool, error) {
	v := newParams()
	if err := (Page{MaxResults: 1}).encode(v, c.limit()); err != nil {
		return false, c.refuse(path, err)
	}
	var res []historyItem
	if err := c.get(ctx, path, v.Values, &res); err != nil {
		return false, err
	}
	return len(res) > 0, nil
}

// historyItem is any history list's entry, of which only the id matters.
type historyItem struct {
	ID string `json:"id"`
}

func (h historyItem) checkShape() error { return needID(h.ID) }
