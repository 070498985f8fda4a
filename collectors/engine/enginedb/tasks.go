package enginedb

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

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
		admitted, err := r.counts(ctx, tx, rq, nowWall, out)
		if err != nil {
			return err
		}
		if err := r.inflight(ctx, tx, rq, nowWall, admitted, out); err != nil {
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

// countsSQL reads every topic's counts by state group and the create time
// of its oldest fetchable task, by the engine's own filters (Reader).
const countsSQL = `SELECT topic_name_,
  count(*),
  count(*) FILTER (WHERE suspension_state_ = 2),
  count(*) FILTER (WHERE suspension_state_ = 1 AND retries_ = 0),
  count(*) FILTER (WHERE suspension_state_ = 1 AND (retries_ IS NULL OR retries_ > 0) AND lock_exp_time_ > $1::timestamp),
  count(*) FILTER (WHERE suspension_state_ = 1 AND (retries_ IS NULL OR retries_ > 0) AND lock_exp_time_ < $1::timestamp),
  min(create_time_) FILTER (WHERE suspension_state_ = 1 AND (retries_ IS NULL OR retries_ > 0)
                              AND (lock_exp_time_ IS NULL OR lock_exp_time_ < $1::timestamp))
FROM %sact_ru_ext_task
GROUP BY topic_name_
ORDER BY topic_name_ COLLATE "C"`

// topicRow is a row of countsSQL.
type topicRow struct {
	Topic                                       *string
	Total, Suspended, Exhausted, Locked, Lapsed int64
	Oldest                                      *time.Time
}

// counts reads every topic's counts and oldest fetchable task in one GROUP BY,
// in topic name order (the order topics are admitted in), and chooses the
// reported topics (reading.TopicChoice). It returns the reported topics that
// hold tasks.
func (r *Reader) counts(ctx context.Context, tx pgx.Tx, rq reading.TasksRequest, nowWall string, out *reading.TasksRead) ([]string, error) {
	rows, err := collectRows(ctx, tx, r, "reading act_ru_ext_task", pgx.RowToStructByPos[topicRow], r.keyed(fmt.Sprintf(countsSQL, r.prefix)), nowWall)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(rows))
	for i, t := range rows {
		if t.Topic != nil {
			names[i] = *t.Topic
		}
	}
	ch := rq.Topics.Choose(names)
	out.Topics, out.Folded = ch.Read, ch.Folded
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
	}
	return ch.Present, nil
}

// inflightSQL lists the locked and lapsed tasks of the topics $2 with their
// process instance's business key, in the order the REST reader spends
// max_listed_tasks in.
const inflightSQL = `SELECT t.id_, t.topic_name_, coalesce(t.worker_id_, ''), t.lock_exp_time_, t.retries_,
  coalesce(t.error_msg_, ''), coalesce(t.proc_inst_id_, ''), coalesce(t.act_id_, ''), t.lock_exp_time_ > $1::timestamp,
  coalesce(pi.business_key_, ''), coalesce(t.act_inst_id_, ''), coalesce(t.proc_def_id_, '')
FROM %[1]sact_ru_ext_task t LEFT JOIN %[1]sact_ru_execution pi ON pi.id_ = t.proc_inst_id_
WHERE t.suspension_state_ = 1 AND (t.retries_ IS NULL OR t.retries_ > 0)
  AND t.lock_exp_time_ IS NOT NULL AND t.lock_exp_time_ <> $1::timestamp AND t.topic_name_ = ANY($2)
ORDER BY t.topic_name_ COLLATE "C", t.lock_exp_time_ > $1::timestamp DESC, t.id_
LIMIT $3`

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

// inflight lists the locked and lapsed tasks of the reported topics: topic
// by topic in name order, locked before lapsed, each by id, at most
// max_listed_tasks, the order the REST reader spends its budget in.
func (r *Reader) inflight(ctx context.Context, tx pgx.Tx, rq reading.TasksRequest, nowWall string, topics []string, out *reading.TasksRead) error {
	var want int64
	for _, t := range topics {
		want += out.Topics[t].Counts.Locked + out.Topics[t].Counts.Lapsed
	}
	if want == 0 {
		return nil
	}
	rows, err := collectRows(ctx, tx, r, "listing act_ru_ext_task", pgx.RowToStructByPos[inflightRow],
		r.keyed(fmt.Sprintf(inflightSQL, r.prefix)), nowWall, topics, rq.Budget)
	if err != nil {
		return err
	}
	for _, t := range rows {
		o := reading.TaskObs{ID: t.ID, Topic: t.Topic, Worker: t.Worker, Exp: r.instant(t.Expiration), ErrMsg: t.ErrMsg,
			PI: t.PI, Activity: t.Act, BusinessKey: t.BusinessKey, ActInst: t.ActInst, DefID: t.Def}
		if t.Retries != nil {
			n := int(*t.Retries)
			o.Retries = &n
		}
		tr := out.Topics[o.Topic]
		if t.Locked {
			tr.Locked = append(tr.Locked, o)
		} else {
			tr.Lapsed = append(tr.Lapsed, o)
		}
	}
	if listed := int64(len(rows)); listed < want {
		out.Truncated = true
		out.Unwatched = want - listed
	}
	return nil
}
