package dashboards

import (
	"github.com/workflow-exporter/workflow-exporter/alerts/rules"
	"github.com/workflow-exporter/workflow-exporter/catalog"
)

// whileCompared renders `inner or (0 * sum(window))`: a delivery's
// per-type series exist once an event of the type was seen, so a stat over
// them shows 0 while a delivery whose comparison ran has none, and "No
// data" while none ran (the delivery or one of its databases down: the
// window gauge is absent then too).
func whileCompared(inner string) string {
	return inner + " or (0 * " + sumBy(sel(catalog.DeliveryWindow, mDelivery)) + ")"
}

// deliveryRow: the delivery ledger (docs/delivery-ledger.md). Is what the
// producers publish reaching the consumers' inboxes, once, in time?
func deliveryRow(d *board) {
	d.row("Deliveries")
	d.stat(panel{title: "Lost events", unit: "short",
		desc:     "Events of the selected deliveries published longer ago than the delivery's deadline (by the producer database's clock) that the consumer's inbox does not hold: the page. The status page lists their event ids for the replay. 0 needs every selected delivery compared; No data means none could be (the delivery or one of its databases down).",
		targets:  []target{{expr: whileCompared(sumBy(sel(catalog.DeliveryLostEvents, mDelivery, mEventType)))}},
		steps:    []step{{1, "red"}},
		runbooks: []string{rules.WorkflowDeliveryEventsLost}})
	d.stat(panel{title: "In flight", unit: "short",
		desc:    "Events published within the deadline and not received yet: normal in small numbers; a growing number is a consumer falling behind, or events about to be lost.",
		targets: []target{{expr: whileCompared(sumBy(sel(catalog.DeliveryInFlightEvents, mDelivery, mEventType)))}}})
	d.stat(panel{title: "Duplicate receipts", unit: "short",
		desc:     "Receipts beyond the first of the events published in the deliveries' windows: at-least-once delivery at work, absorbed by the inbox. A ticket when above delivery.duplicates_ratio of the window's events.",
		targets:  []target{{expr: whileCompared(sumBy(sel(catalog.DeliveryDuplicateReceipts, mDelivery, mEventType)))}},
		runbooks: []string{rules.WorkflowDeliveryDuplicateReceipts}})
	d.stat(panel{title: "Delivery latency p95", unit: "s",
		desc:    "95th percentile of first receipt minus creation of the events first found received in the rate interval (received_at in the consumer's inbox, corrected by the clock offset, minus created_at in the producer's outbox).",
		targets: []target{{expr: quantile(0.95, catalog.DeliveryLatency, nil, mDelivery, mEventType)}},
		steps:   []step{{60, "orange"}, {300, "red"}}})
	d.downStat(sel(catalog.ExporterSourceUp, mSourceDelivery), panel{title: "Deliveries down",
		desc:     "Selected deliveries whose last comparison failed (a table or column missing, a timeout): their series are absent. A delivery whose database is down stays up and reports nothing; the database shows under Databases down.",
		runbooks: []string{rules.WorkflowExporterSourceDown}})
	d.stat(panel{title: "Largest clock offset", unit: "s",
		desc:    "The largest difference between a delivery's consumer and producer database clocks, as measured at the last comparison and subtracted from the latencies. Seconds here mean the servers' clocks drift: fix their time synchronisation.",
		targets: []target{{expr: "max(abs(" + sel(catalog.DeliveryClockOffset, mDelivery) + "))"}},
		steps:   []step{{1, "orange"}, {10, "red"}}})

	d.series(panel{title: "Lost and in flight by delivery and type", unit: "short",
		desc: "Per delivery and event type: lost (past the deadline, not received) and in flight (within it). A lost event leaves the count when it arrives late or leaves the window.",
		targets: []target{
			perDeliveryAndType(catalog.DeliveryLostEvents, "lost"),
			perDeliveryAndType(catalog.DeliveryInFlightEvents, "in flight"),
		},
		runbooks: []string{rules.WorkflowDeliveryEventsLost}})
	d.series(panel{title: "Delivery latency", unit: "s",
		desc:    "Quantiles of first receipt minus creation per delivery, over the events first found received in the rate interval.",
		targets: percentiles(catalog.DeliveryLatency, "delivery", []int{50, 95, 99}, mDelivery, mEventType)})
	d.series(panel{title: "Events compared and received twice", unit: "short",
		desc: "Per delivery and event type: the events published within the window (the comparison's population) and the receipts beyond the first among them.",
		targets: []target{
			perDeliveryAndType(catalog.DeliveryPublishedEvents, "published"),
			perDeliveryAndType(catalog.DeliveryDuplicateReceipts, "duplicates"),
		},
		runbooks: []string{rules.WorkflowDeliveryDuplicateReceipts}})
	d.series(panel{title: "Window covered and clock offset", unit: "s",
		desc: "Per delivery: how far back the last comparison reached (the configured window, less when max_events cut it) and the consumer's clock minus the producer's as measured.",
		targets: []target{
			{expr: sel(catalog.DeliveryWindow, mDelivery), legend: "window {{delivery}}"},
			{expr: sel(catalog.DeliveryClockOffset, mDelivery), legend: "clock offset {{delivery}}"},
		}})
}

// perDeliveryAndType is the series of metric per delivery and event type,
// its legend what the series counts.
func perDeliveryAndType(metric, what string) target {
	return target{expr: sumBy(sel(metric, mDelivery, mEventType), "delivery", "event_type"), legend: what + " {{delivery}} {{event_type}}"}
}
