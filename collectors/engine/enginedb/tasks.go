package enginedb

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/workflow-exporter/workflow-exporter/collectors/engine/capability"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine/reading"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// ReadTasks reads the "camunda" collector's aspects in one read-only
// transaction: the topics' counts, the in-flight tasks, the history log and
// its BPMN error evidence, the incidents.
func (r *Reader) ReadTasks(ctx context.Context, rq reading.TasksRequest) (*reading.TasksRead, error) {
	out := &reading.TasksRead{}
	err := r.readNow(ctx, vocab.CollectorCamunda, func(ctx context.Context, tx pgx.Tx, now time.Time) error {
		out.Now = now
		nowWall := r.wall(now)
		admitted, everyTopic, undated, err := r.counts(ctx, tx, rq, nowWall, out)
		if err != nil {
			return err
		}
		if err := r.inflight(ctx, tx, rq, nowWall, admitted, everyTopic, out); err != nil {
			return err
		}
		if err := r.undated(ctx, tx, rq, nowWall, undated, out); err != nil {
			return err
		}
		switch {
		case rq.Level.ReadsTaskLog():
			if out.History, err = r.history(ctx, tx, rq.History); err != nil {
				return err
			}
			if out.BPMN, err = r.bpmnEvidence(ctx, tx, reading.NewDeletions(out.History.Entries, rq.History), rq.History.Max); err != nil {
				return err
			}
		case rq.Level.ReadsActivities():
			if out.Activities, err = r.activities(ctx, tx, rq); err != nil {
				return err
			}
		}
		if out.Incidents, err = r.incidents(ctx, tx); err != nil {
			return err
		}
		if rq.IncidentMessages {
			if err := r.incidentMessages(ctx, tx, rq.Budget, &out.Incidents); err != nil {
				return err
			}
		}
		return r.incidentTopics(ctx, tx, out)
	})
	return out, err
}

// countsSQL reads every topic's counts by state group, the creation of its
// oldest fetchable task (%[2]s: the date expression, dateOf) and how many of
// its fetchable tasks have none, by the engine's own filters (Reader).
const countsSQL = `SELECT topic_name_,
  count(*),
  count(*) FILTER (WHERE suspension_state_ = 2),
  count(*) FILTER (WHERE suspension_state_ = 1 AND retries_ = 0),
  count(*) FILTER (WHERE suspension_state_ = 1 AND (retries_ IS NULL OR retries_ > 0) AND lock_exp_time_ > $1::timestamp),
  count(*) FILTER (WHERE suspension_state_ = 1 AND (retries_ IS NULL OR retries_ > 0) AND lock_exp_time_ < $1::timestamp),
  min(created),
  count(*) FILTER (WHERE fetchable AND created IS NULL)
FROM (SELECT t.*, ` + fetchableSQL + ` AS fetchable, CASE WHEN ` + fetchableSQL + ` THEN %[2]s END AS created
      FROM %[1]sact_ru_ext_task t) t
GROUP BY topic_name_
ORDER BY topic_name_ COLLATE "C"`

// fetchableSQL is the engine's fetchable filter on ACT_RU_EXT_TASK t: active,
// retries left or null, not locked (never locked, or lapsed by $1).
const fetchableSQL = `(t.suspension_state_ = 1 AND (t.retries_ IS NULL OR t.retries_ > 0) AND (t.lock_exp_time_ IS NULL OR t.lock_exp_time_ < $1::timestamp))`

// dateOf is the expression that dates a task t of ACT_RU_EXT_TASK, and
// where that date comes from (capability/waitingage.go): CREATE_TIME_ where
// the engine has it (7.21 on), else, and for NULLs (tasks created before an
// upgrade to 7.21), the start of its historic activity instance by primary
// key (capability.ActivityStartSQL), which exists from history level
// activity on; at level none nothing dates a task without CREATE_TIME_, and
// the collector dates it by its first sighting (Undated).
func (r *Reader) dateOf(level capability.Level) (string, capability.AgeSource) {
	return dateOf(r.prefix, r.createTime, level)
}

func dateOf(prefix string, createTime bool, level capability.Level) (string, capability.AgeSource) {
	lookup := "(" + fmt.Sprintf(capability.ActivityStartSQL, prefix, "t.act_inst_id_") + ")"
	switch {
	case createTime && level == capability.LevelNone:
		return "t." + capability.CreateTimeColumn, capability.AgeFromCreateTime
	case createTime:
		return "coalesce(t." + capability.CreateTimeColumn + ", " + lookup + ")", capability.AgeFromCreateTime
	case level == capability.LevelNone:
		return "NULL::timestamp", capability.AgeFromFirstSeen
	}
	return lookup, capability.AgeFromActivityInstance
}

// CountsSQL is the counts query as the reader runs it without tenant_label,
// for tables qualified by prefix, an engine with or without CREATE_TIME_, at
// a history level ($1: the engine's now as a local time). Exported for the
// plan test of the oldest waiting age on a large history
// (collectors/engine).
func CountsSQL(prefix string, createTime bool, level capability.Level) string {
	date, _ := dateOf(prefix, createTime, level)
	return fmt.Sprintf(countsSQL, prefix, date)
}

// topicRow is a row of countsSQL.
type topicRow struct {
	Topic                                       *string
	Total, Suspended, Exhausted, Locked, Lapsed int64
	Oldest                                      *time.Time
	Undated                                     int64
}

// counts reads every topic's counts and oldest fetchable task in one GROUP BY,
// in topic name order (the order topics are admitted in), and chooses the
// reported topics (reading.TopicChoice). It returns the reported topics that
// hold tasks, whether they are every topic that holds tasks (none folded
// now), and how many undated fetchable tasks each has.
func (r *Reader) counts(ctx context.Context, tx pgx.Tx, rq reading.TasksRequest, nowWall string, out *reading.TasksRead) ([]string, bool, map[string]int64, error) {
	date, age := r.dateOf(rq.Level)
	out.Age = age
	rows, err := collectRows(ctx, tx, r, "reading act_ru_ext_task", pgx.RowToStructByPos[topicRow], r.keyed(fmt.Sprintf(countsSQL, r.prefix, date)), nowWall)
	if err != nil {
		return nil, false, nil, err
	}
	names := make([]string, len(rows))
	for i, t := range rows {
		if t.Topic != nil {
			names[i] = *t.Topic
		}
	}
	ch := rq.Topics.Choose(names)
	out.Topics, out.Folded = ch.Read, ch.Folded
	undated := map[string]int64{}
	for i, t := range rows {
		c := reading.TopicCounts{Total: t.Total, Suspended: t.Suspended, Exhausted: t.Exhausted, Locked: t.Locked, Lapsed: t.Lapsed}
		out.All.Add(c)
		tr := out.Topics[names[i]]
		if tr == nil {
			continue // folded into "other"
		}
		tr.Counts = c
		if t.Oldest != nil {
			tr.Oldest = r.instant(*t.Oldest)
		}
		if t.Undated > 0 {
			undated[names[i]] = t.Undated
		}
	}
	return ch.Present, len(ch.Present) == len(names), undated, nil
}

// undatedSQL lists the fetchable tasks of the topics $2 that nothing dates
// (%[2]s: dateOf's expression), in topic and id order, at most $3.
const undatedSQL = `SELECT t.id_, t.topic_name_
FROM %[1]sact_ru_ext_task t
WHERE ` + fetchableSQL + ` AND %[2]s IS NULL AND t.topic_name_ = ANY($2)
ORDER BY t.topic_name_ COLLATE "C", t.id_
LIMIT $3`

// undated lists the fetchable tasks nothing dates (level none without
// CREATE_TIME_, or with tasks created before an upgrade to 7.21) for the
// collector's first sightings, within what max_listed_tasks leaves after
// the in-flight lists, topic by topic in name order.
func (r *Reader) undated(ctx context.Context, tx pgx.Tx, rq reading.TasksRequest, nowWall string, counts map[string]int64, out *reading.TasksRead) error {
	if len(counts) == 0 {
		return nil
	}
	topics := sortedKeys(counts)
	budget := rq.Budget - out.Listed()
	if budget > 0 {
		date, _ := r.dateOf(rq.Level)
		type row struct{ ID, Topic string }
		rows, err := collectRows(ctx, tx, r, "listing act_ru_ext_task", pgx.RowToStructByPos[row],
			r.keyed(fmt.Sprintf(undatedSQL, r.prefix, date)), nowWall, topics, budget)
		if err != nil {
			return err
		}
		for _, t := range rows {
			tr := out.Topics[t.Topic]
			tr.Undated = append(tr.Undated, t.ID)
		}
	}
	for _, t := range topics {
		tr := out.Topics[t]
		tr.UndatedCut = int64(len(tr.Undated)) < counts[t]
	}
	return nil
}

// inflightSQL lists the locked and lapsed tasks (%[1]s: the table prefix)
// with, when the status page asks for them, their process instance's
// business key (%[2]s and %[3]s: the column and the join).
// Only what the reading needs is asked of the database: the topics $3
// (%[4]s) only when topics are folded, and the order the REST reader spends
// max_listed_tasks ($2) in (%[5]s) only when the budget cuts the list.
// Sorting every in-flight task cost more than reading them: EXPLAIN
// ANALYZE with 9,310 in-flight tasks of 50,000 on Camunda 7.24's DDL,
// 35 ms sorted and filtered with the join against 5 ms without all three
// (docs/benchmarks.md).
const inflightSQL = `SELECT t.id_, t.topic_name_, coalesce(t.worker_id_, ''), t.lock_exp_time_, t.retries_,
  coalesce(t.error_msg_, ''), coalesce(t.proc_inst_id_, ''), coalesce(t.act_id_, ''), t.lock_exp_time_ > $1::timestamp,
  %[2]s, coalesce(t.act_inst_id_, ''), coalesce(t.proc_def_id_, '')
FROM %[1]sact_ru_ext_task t%[3]s
WHERE t.suspension_state_ = 1 AND (t.retries_ IS NULL OR t.retries_ > 0)
  AND t.lock_exp_time_ IS NOT NULL AND t.lock_exp_time_ <> $1::timestamp AND %[4]s%[5]s
LIMIT $2`

// The variable parts of inflightSQL.
const (
	inflightKeyColumn = "coalesce(pi.business_key_, '')"
	inflightKeyJoin   = " LEFT JOIN %sact_ru_execution pi ON pi.id_ = t.proc_inst_id_"
	inflightNoKey     = "''"
	inflightTopics    = "t.topic_name_ = ANY($3)"
	inflightAnyTopic  = "t.topic_name_ IS NOT NULL"
	inflightBudget    = `
ORDER BY t.topic_name_ COLLATE "C", t.lock_exp_time_ > $1::timestamp DESC, t.id_`
)

// InflightSQL is the in-flight query for tables qualified by prefix: with
// the business keys or not, every topic or those of $3, sorted for a
// budget that cuts the list or not.
func InflightSQL(prefix string, keys, everyTopic, cut bool) string {
	column, join, topics, tail := inflightNoKey, "", inflightTopics, ""
	if keys {
		column, join = inflightKeyColumn, fmt.Sprintf(inflightKeyJoin, prefix)
	}
	if everyTopic {
		topics = inflightAnyTopic
	}
	if cut {
		tail = inflightBudget
	}
	return fmt.Sprintf(inflightSQL, prefix, column, join, topics, tail)
}

// inflightRow is a row of inflightSQL.
type inflightRow struct {
	ID, Topic, Worker string
	Expiration        time.Time
	Retries           *int32
	ErrMsg, PI, Act   string
	Locked            bool
	BusinessKey       string
	ActInst, Def      string
}

// inflight lists the locked and lapsed tasks of the reported topics, each
// topic's sorted by id, at most max_listed_tasks: when the budget cuts the
// list, topic by topic in name order, locked before lapsed, each by id, the
// order the REST reader spends its budget in. everyTopic: every topic that
// holds tasks is reported (none folded), so the query needs no topic
// filter.
func (r *Reader) inflight(ctx context.Context, tx pgx.Tx, rq reading.TasksRequest, nowWall string, topics []string, everyTopic bool, out *reading.TasksRead) error {
	var want int64
	for _, t := range topics {
		want += out.Topics[t].Counts.Locked + out.Topics[t].Counts.Lapsed
	}
	if want == 0 {
		return nil
	}
	cut := want > int64(rq.Budget)
	args := []any{nowWall, rq.Budget}
	if !everyTopic {
		args = append(args, topics)
	}
	// Scanned field by field: pgx's struct scan, by reflection, cost as
	// much CPU as the rest of the collection's lock tracking.
	rows, err := scanRows(ctx, tx, r, "listing act_ru_ext_task", int(min(want, int64(rq.Budget))), func(rows pgx.Rows, t *inflightRow) error {
		return rows.Scan(&t.ID, &t.Topic, &t.Worker, &t.Expiration, &t.Retries, &t.ErrMsg, &t.PI, &t.Act, &t.Locked, &t.BusinessKey, &t.ActInst, &t.Def)
	}, r.keyed(InflightSQL(r.prefix, rq.BusinessKeys, everyTopic, cut)), args...)
	if err != nil {
		return err
	}
	// Each topic's tasks by id: the database's order when it sorted them,
	// else sorted here, by index (the rows are large to move).
	order := make([]int, len(rows))
	for i := range order {
		order[i] = i
	}
	if !cut {
		slices.SortFunc(order, func(a, b int) int { return strings.Compare(rows[a].ID, rows[b].ID) })
		for _, t := range topics {
			tr := out.Topics[t]
			tr.Locked, tr.Lapsed = make([]reading.TaskObs, 0, tr.Counts.Locked), make([]reading.TaskObs, 0, tr.Counts.Lapsed)
		}
	}
	for _, i := range order {
		t := &rows[i]
		o := reading.TaskObs{ID: t.ID, Topic: t.Topic, Worker: t.Worker, Exp: r.instant(t.Expiration), ErrMsg: t.ErrMsg,
			PI: t.PI, Activity: t.Act, BusinessKey: t.BusinessKey, ActInst: t.ActInst, DefID: t.Def}
		if t.Retries != nil {
			n := int(*t.Retries)
			o.Retries = &n
		}
		tr := out.Topics[o.Topic]
		if tr == nil {
			// Not possible within the transaction's snapshot: every topic
			// that holds tasks is reported when none is filtered.
			continue
		}
		if t.Locked {
			tr.Locked = append(tr.Locked, o)
		} else {
			tr.Lapsed = append(tr.Lapsed, o)
		}
	}
	if listed := int64(out.Listed()); listed < want {
		out.Truncated = true
		out.Unwatched = want - listed
	}
	return nil
}

// WaitingAgeSource implements reading.Reader: where the counts query dates
// the tasks (dateOf), after checking the camunda collector's tables (which
// finds CREATE_TIME_).
func (r *Reader) WaitingAgeSource(ctx context.Context, at reading.Probe) (capability.AgeSource, string, error) {
	if err := r.checkTables(ctx, vocab.CollectorCamunda); err != nil {
		return capability.AgeNone, "", err
	}
	_, src := r.dateOf(at.Level)
	why := "act_ru_ext_task has create_time_"
	if !r.createTime {
		why = "act_ru_ext_task has no create_time_ (Camunda before 7.21)"
	}
	return src, why, nil
}
