package sim

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// failed says whether err is an error, and logs it as one of what unless
// the simulator is stopping (ctx done: the error is the stop's).
func (s *Simulator) failed(ctx context.Context, l Lane, what string, err error) bool {
	if err != nil && ctx.Err() == nil {
		s.logf(l, "%s: %v", what, err)
	}
	return err != nil
}

// publish is the lane's outbox publisher: it marks the lane's pending
// events published (as a publisher does after the broker confirmed them),
// unless publisher-stopped is on. A delivering lane's broker then carries
// them to the consumer's inbox (receive).
func (s *Simulator) publish(ctx context.Context, l Lane, db *pgxpool.Pool) {
	for ctx.Err() == nil {
		sleep(ctx, 500*time.Millisecond)
		if s.laneFaults(l.Name).on(FaultPublisherStopped) {
			continue
		}
		rows, err := db.Query(ctx, `UPDATE event_outbox SET status = 'PUBLISHED', published_at = now()
WHERE published_at IS NULL AND status = 'PENDING' AND aggregate_type = $1 RETURNING event_id::text`, l.AggregateType())
		if s.failed(ctx, l, "outbox publisher", err) {
			continue
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if s.failed(ctx, l, "outbox publisher", err) {
			continue
		}
		s.add(l, "published", len(ids))
		if l.Consumer != "" && len(ids) > 0 {
			s.receive(ctx, l, ids)
		}
	}
}

// receive is a delivering lane's broker: it writes each published event
// into the consumer database's inbox as RECEIVED under the event id, unless
// messages-lost is on (then they are dropped between publish and receive).
func (s *Simulator) receive(ctx context.Context, l Lane, ids []string) {
	if s.laneFaults(l.Name).on(FaultMessagesLost) {
		s.add(l, "dropped", len(ids))
		return
	}
	tag, err := s.pools[l.Consumer].Exec(ctx, `INSERT INTO message_inbox (source_system, message_id, message_type, correlation_key, processing_status)
SELECT $1, id, $2, id, 'RECEIVED' FROM unnest($3::text[]) id ON CONFLICT DO NOTHING`, l.DeliverySourceSystem(), l.DeliveredMessageType(), ids)
	if s.failed(ctx, l, "broker (delivery)", err) {
		return
	}
	s.add(l, "delivered", int(tag.RowsAffected()))
}

// deliver is the broker: a message of the lane's type per interval, twice
// (the second time under a new message id) while duplicate-delivery is on.
func (s *Simulator) deliver(ctx context.Context, l Lane, db *pgxpool.Pool) {
	for n := 1; ctx.Err() == nil; n++ {
		sleep(ctx, s.cfg.Interval)
		copies := 1
		if s.laneFaults(l.Name).on(FaultDuplicateDelivery) {
			copies = 2
		}
		for i := 0; i < copies; i++ {
			_, err := db.Exec(ctx, `INSERT INTO message_inbox (source_system, message_id, message_type, correlation_key, processing_status)
VALUES ($1, gen_random_uuid()::text, $2, $3, 'RECEIVED')`, SourceSystem, l.MessageType(), fmt.Sprintf("%s-msg-%d", l.Name, n))
			s.failed(ctx, l, "broker", err)
		}
	}
}

// consume is the lane's inbox consumer of one message type and source
// system: RECEIVED -> PROCESSING -> PROCESSED in short transactions, or
// IGNORED_DUPLICATE for a message whose correlation key was already
// processed. It pauses while consumer-stopped is on.
func (s *Simulator) consume(ctx context.Context, l Lane, db *pgxpool.Pool, messageType, sourceSystem string) {
	for ctx.Err() == nil {
		sleep(ctx, 300*time.Millisecond)
		if s.laneFaults(l.Name).on(FaultConsumerStopped) {
			continue
		}
		// Claim: RECEIVED -> PROCESSING.
		rows, err := db.Query(ctx, `UPDATE message_inbox SET processing_status = 'PROCESSING'
WHERE (source_system, message_id) IN (
  SELECT source_system, message_id FROM message_inbox
  WHERE message_type = $1 AND processing_status = 'RECEIVED'
  ORDER BY received_at LIMIT 20 FOR UPDATE SKIP LOCKED)
RETURNING message_id, correlation_key`, messageType)
		if s.failed(ctx, l, "inbox consumer", err) {
			continue
		}
		type msg struct{ id, corr string }
		var claimed []msg
		for rows.Next() {
			var m msg
			if err := rows.Scan(&m.id, &m.corr); err == nil {
				claimed = append(claimed, m)
			}
		}
		rows.Close()
		for _, m := range claimed {
			// Process: a message whose correlation key was processed
			// already is a duplicate delivery, recorded as such.
			tag, err := db.Exec(ctx, `UPDATE message_inbox SET
  processing_status = CASE WHEN EXISTS (
      SELECT 1 FROM message_inbox o WHERE o.message_type = $2 AND o.correlation_key = $3
        AND o.message_id <> $1 AND o.processing_status = 'PROCESSED') THEN 'IGNORED_DUPLICATE' ELSE 'PROCESSED' END,
  processed_at = now()
WHERE source_system = $4 AND message_id = $1`, m.id, messageType, m.corr, sourceSystem)
			if s.failed(ctx, l, "inbox consumer", err) {
				continue
			}
			s.add(l, "messages", int(tag.RowsAffected()))
		}
	}
}

// reconcile resolves the lane's UNKNOWN_OUTCOME records by asking the
// downstream service for the command's outcome, as a reconciliation job
// does; while unknown-outcome is on the lookup fails and they stay.
func (s *Simulator) reconcile(ctx context.Context, l Lane, db *pgxpool.Pool) {
	for ctx.Err() == nil {
		sleep(ctx, 5*time.Second)
		rows, err := db.Query(ctx, `SELECT idempotency_key FROM workflow_idempotency_record WHERE scope = $1 AND status = 'UNKNOWN_OUTCOME' LIMIT 50`, l.Scope())
		if err != nil {
			continue
		}
		var keys []string
		for rows.Next() {
			var k string
			if rows.Scan(&k) == nil {
				keys = append(keys, k)
			}
		}
		rows.Close()
		for _, k := range keys {
			res, err := s.down.find(ctx, l.Name, k)
			if err != nil {
				continue
			}
			// The side effect happened: record it and emit its event, as
			// the worker would have (the task completes from the record
			// when its retry backoff ends).
			err = pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
				var entity string
				if err := tx.QueryRow(ctx, `UPDATE workflow_idempotency_record SET status = 'RECONCILED',
  result_payload = jsonb_build_object('result', $3::text), completed_at = now(), updated_at = now()
WHERE scope = $1 AND idempotency_key = $2 AND status = 'UNKNOWN_OUTCOME' RETURNING business_entity_id`, l.Scope(), k, res).Scan(&entity); err != nil {
					return err
				}
				return s.writeEvent(ctx, tx, l, entity, k, res)
			})
			if err == nil {
				s.add(l, "reconciled", 1)
			}
		}
	}
}
