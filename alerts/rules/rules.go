package rules

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/workflow-exporter/workflow-exporter/alerts/rulefile"
	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// File is a Prometheus rule file of alerting rules.
type File = rulefile.File[Rule]

// Group is a rule group.
type Group = rulefile.Group[Rule]

// Rule is one alerting rule. Field order is the order in the YAML.
type Rule struct {
	Alert string `yaml:"alert"`
	Expr  string `yaml:"expr"`
	For   string `yaml:"for,omitempty"`
	// KeepFiringFor keeps an alert firing that long after its expression
	// stops returning it (Prometheus 2.42+).
	KeepFiringFor string            `yaml:"keep_firing_for,omitempty"`
	Labels        map[string]string `yaml:"labels"`
	Annotations   map[string]string `yaml:"annotations"`
}

// RepositoryConfig is the alerts config the repository's committed rule
// files are rendered from, relative to the repository root.
const RepositoryConfig = "alerts/config.yml"

// header starts every generated file; source names the alerts config (as
// given on the command line; "" for the defaults) and command the command
// that wrote it.
func header(command, source string) string {
	from := "the default alerts config"
	if source != "" {
		from = source
	}
	change := []string{"Change thresholds or the job selector in the alerts config and render again."}
	if source == RepositoryConfig {
		change = []string{"Change thresholds or the job selector in " + RepositoryConfig + " and run `make generate` (go generate ./...);",
			"elsewhere render your own: workflow-exporter render rules --alerts-config my-alerts.yml."}
	}
	return rulefile.Header(command, from, append(change, "Reasoning for every threshold: docs/alerts.md. Runbooks: docs/runbooks/<AlertName>.md.")...)
}

// builder holds the config while the rules are written, and the matchers
// of a selector of the alerts config that every metric selector gets too.
type builder struct {
	c     Config
	extra []string
}

// targetUp is the series Prometheus itself writes for every scrape target;
// it is not the exporter's, so it is not in the catalog.
const targetUp = "up"

// sel returns a selector for metric with the configured job selector and the
// extra matchers. metric is a catalog constant (or targetUp): a name the
// exporter does not serve is a programming error, and panics.
func (b builder) sel(metric string, matchers ...string) string {
	if !catalog.KnownSeries(metric) && !catalog.StandardSeries(metric) {
		panic(fmt.Sprintf("alerts/rules: series %q is not in the catalog", metric))
	}
	ms := make([]string, 0, len(matchers)+len(b.extra)+1)
	if s := b.c.Selector.String(); s != "" {
		ms = append(ms, s)
	}
	ms = append(ms, matchers...)
	ms = append(ms, b.extra...)
	if len(ms) == 0 {
		return metric
	}
	return metric + "{" + strings.Join(ms, ", ") + "}"
}

// ReplicaLabels are the labels that tell copies of one exporter apart:
// instance (the address Prometheus scrapes, which changes when a pod is
// rescheduled unless the scrape config makes it stable) and pod (which
// tells two replicas apart where instance is stable, as the chart and the
// manifests make it). Every rule aggregates them away with max, so that a
// rescheduled exporter continues its predecessor's alerts (its for:, its
// offset and range reads) and two replicas raise one alert with one set of
// labels, which Alertmanager deduplicates. Everything else a target carries
// (job, namespace, a cluster or site label) stays: exporters that watch
// different sources stay apart by it and by their sources' names.
func ReplicaLabels() []string { return []string{"instance", "pod"} }

// one merges the replicas of an exporter in expr's result: the series
// that differ only in ReplicaLabels become one, the highest. Two replicas
// read the same sources a few seconds apart, so their gauges agree and
// each counter's increase counts the same events: max is the reading, not
// their sum (which would double it). Over a reschedule the predecessor's
// series and the successor's meet in one: a range read sees both, and the
// larger part of a window counts (a window split by a restart undercounts,
// as a restart's reset does).
func one(expr string) string {
	return "max without (" + strings.Join(ReplicaLabels(), ", ") + ") (" + expr + ")"
}

// lookback is how far back a read at an offset looks for the last sample:
// Prometheus's default lookback delta. An instant selector at an offset
// stops at a series' staleness marker, which a pod that went away writes,
// so a reschedule's gap a day ago would blind a day-over-day comparison for
// the length of the gap; last_over_time over the lookback bridges it.
const lookback = "5m"

// ago reads sel (a selector) as it was d ago, bridging a gap of up to the
// lookback there (see lookback): per series, so wrap it in one().
func ago(sel string, d model.Duration) string {
	return "last_over_time(" + sel + "[" + lookback + "] offset " + dur(d) + ")"
}

// step is the step of the rules' subqueries over a long baseline: 10 polls
// of exporter.min_interval (5m at 30s), so that each step's rate holds
// several samples.
func (b builder) step() model.Duration { return 10 * b.c.Exporter.MinInterval }

func dur(v model.Duration) string { return v.String() }

func secs(v model.Duration) string {
	return strconv.FormatFloat(time.Duration(v).Seconds(), 'f', -1, 64)
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// rule returns the rule of the named alert; its severity and summary come
// from Alerts(), its links from the config.
func (b builder) rule(name string, forDur model.Duration, expr, description string) Rule {
	a := mustLookup(name)
	r := Rule{
		Alert:  name,
		Expr:   strings.TrimSpace(expr),
		Labels: map[string]string{"severity": a.Severity},
		Annotations: map[string]string{
			"summary":     a.Summary,
			"description": description,
			"runbook_url": RunbookURL(b.c.RunbookBaseURL, name),
		},
	}
	if u := b.dashboardURL(a); u != "" {
		r.Annotations["dashboard_url"] = u
	}
	if b.c.StatusPageURL != "" && a.Severity != rulefile.None {
		r.Annotations["status_page_url"] = b.c.StatusPageURL
	}
	if forDur > 0 {
		r.For = dur(forDur)
	}
	if k := b.c.Exporter.PagesKeepFiringFor; k > 0 && a.Severity == rulefile.Critical && a.Group != GroupExporter {
		r.KeepFiringFor = dur(k)
	}
	return r
}

// bridged is a page's series (sel, a selector) over a gap: its last value
// within exporter.pages_keep_firing_for. A failed poll (or a source down
// for less than source_down_for) drops the series; without the bridge the
// page's for: would start over when they come back.
func (b builder) bridged(sel string) string {
	k := b.c.Exporter.PagesKeepFiringFor
	if k <= 0 {
		return sel
	}
	return fmt.Sprintf("last_over_time(%s[%s])", sel, dur(k))
}

// dashboardURL is the alert's dashboard in Grafana with the variables set
// from the alert's labels: job, instance, those of its lane the dashboard
// has, and the tenant where the series carry one (camunda[].tenant_label;
// it is no lane label, so that an alert on a table, which has no tenant,
// still inhibits the engine's alerts of its topic) ("" without a dashboard
// or dashboard_base_url).
func (b builder) dashboardURL(a Alert) string {
	if a.Dashboard == "" || b.c.DashboardBaseURL == "" {
		return ""
	}
	vars := []string{"job", "instance"}
	for _, v := range DashboardVariables(a.Dashboard) {
		if slices.Contains(a.Lane, v) || v == catalog.TenantLabel && tenanted(a.Lane) {
			vars = append(vars, v)
		}
	}
	var q strings.Builder
	for i, v := range vars {
		sep := "&"
		if i == 0 {
			sep = ""
		}
		fmt.Fprintf(&q, "{{ with $labels.%[1]s }}%[2]svar-%[1]s={{ . | urlquery }}{{ end }}", v, sep)
	}
	return strings.TrimRight(b.c.DashboardBaseURL, "/") + "/d/" + a.Dashboard + "?" + q.String()
}

// tenanted: an alert of the lane is about series a tenant breaks down (a
// topic's, a process definition key's), which carry the tenant label with
// camunda[].tenant_label.
func tenanted(lane []string) bool {
	return slices.Contains(lane, "topic") || slices.Contains(lane, "process_definition_key")
}

// all returns the rule of every alert of Alerts(), by name. A listed alert
// without a rule, or a rule of an alert not listed, is a programming error
// and panics.
func (b builder) all() map[string]Rule {
	built := map[string]Rule{}
	for _, r := range slices.Concat(b.outbox(), b.relay(), b.inbox(), b.delivery(), b.idempotency(), b.deduplication(), b.camunda(), b.camundaJobs(), b.camundaHistory(), b.exporter()) {
		if _, dup := built[r.Alert]; dup {
			panic(fmt.Sprintf("alerts/rules: two rules for alert %s", r.Alert))
		}
		if _, ok := Lookup(r.Alert); !ok {
			panic(fmt.Sprintf("alerts/rules: rule %s is not in Alerts()", r.Alert))
		}
		built[r.Alert] = r
	}
	for _, a := range Alerts() {
		if _, ok := built[a.Name]; !ok {
			panic(fmt.Sprintf("alerts/rules: alert %s has no rule", a.Name))
		}
	}
	return built
}

// Build returns the rule file for the config: the rules of every alert of
// Alerts() the config leaves on, in its order and rule group, tuned by the
// alerts: section. The config must be valid (Validate).
func Build(c Config) File {
	base := builder{c: c}.all()
	var f File
	for _, a := range Alerts() {
		ac := c.Alerts[a.Name]
		if ac.Enabled != nil && !*ac.Enabled {
			continue
		}
		if n := len(f.Groups); n == 0 || f.Groups[n-1].Name != a.Group {
			f.Groups = append(f.Groups, Group{Name: a.Group})
		}
		g := &f.Groups[len(f.Groups)-1]
		g.Rules = append(g.Rules, c.tuned(base[a.Name], ac)...)
	}
	return f
}

// tuned applies an alert's config to its rule: the alert's severity and
// labels, and one rule more per selector, built with the selector's
// thresholds and its matchers on every series. A series belongs to the
// first selector that matches it; the alert's own rule keeps the series no
// selector matches (`unless on (<the selector's labels>) <series>{<selector>}`
// over the first series of its expression).
func (c Config) tuned(r Rule, ac AlertConfig) []Rule {
	anchor := anchorOf(r.Expr)
	var out []Rule
	var earlier []string
	for _, s := range ac.Selectors {
		t, err := c.selectorThresholds(s)
		if err != nil {
			panic(fmt.Sprintf("alerts/rules: %s: a selector's set: %v (Validate first)", r.Alert, err))
		}
		cs := c
		cs.Thresholds = t
		sr := builder{c: cs, extra: []string{s.Match.String()}}.all()[r.Alert]
		sr.Expr = unlessAny(sr.Expr, earlier)
		out = append(out, relabel(relabel(sr, ac.Severity, ac.Labels), s.Severity, s.Labels))
		earlier = append(earlier, "on ("+strings.Join(s.Match.Labels(), ", ")+") "+builder{c: c}.sel(anchor, s.Match.String()))
	}
	r.Expr = unlessAny(r.Expr, earlier)
	return append([]Rule{relabel(r, ac.Severity, ac.Labels)}, out...)
}

// unlessAny removes from expr the series of any of the clauses.
func unlessAny(expr string, clauses []string) string {
	if len(clauses) == 0 {
		return expr
	}
	return "(\n" + expr + "\n)\nunless " + strings.Join(clauses, "\nunless ")
}

// relabel returns r with the severity (if set) and the labels added.
func relabel(r Rule, severity string, labels map[string]string) Rule {
	ls := maps.Clone(r.Labels)
	maps.Copy(ls, labels)
	if severity != "" {
		ls["severity"] = severity
	}
	r.Labels = ls
	return r
}

// Render returns the rule file of the repository's config: RenderFrom with
// RepositoryConfig as the source.
func Render(c Config) ([]byte, error) { return RenderFrom(c, RepositoryConfig) }

// RenderFrom returns the Prometheus rule file for the config read from
// source (named in the header; "" for the defaults). `workflow-exporter
// render rules` writes it, for the committed alerts/workflow-alerts.yml too.
func RenderFrom(c Config, source string) ([]byte, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return rulefile.Encode(header("render rules", source), Build(c))
}

// ObjectMeta names a PrometheusRule.
type ObjectMeta = rulefile.ObjectMeta

// RenderPrometheusRule returns the rules as a PrometheusRule manifest for
// the Prometheus Operator: the same groups as RenderFrom, under spec.
func RenderPrometheusRule(c Config, source string, m ObjectMeta) ([]byte, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return rulefile.EncodePrometheusRule(header("render rules --format prometheusrule", source), m, Build(c))
}

// increase is the increase of a counter (sel, a selector) over window,
// replicas merged: one(increase(sel[window])).
func increase(sel string, window model.Duration) string {
	return one("increase(" + sel + "[" + dur(window) + "])")
}

// rate is increase's per-second twin.
func rate(sel string, window model.Duration) string {
	return one("rate(" + sel + "[" + dur(window) + "])")
}

// stalled is the expression of a stalled backlog (the outbox's, the
// inbox's): work waits, the oldest longer than window, and none was done
// within it (done: the count of work done over window).
func stalled(waiting, oldest string, window model.Duration, done string) string {
	return fmt.Sprintf(`
%[1]s > 0
and %[2]s > %[3]s
unless %[4]s > 0
`, waiting, oldest, secs(window), done)
}

func (b builder) outbox() []Rule {
	o := b.c.Outbox
	pendingSel := b.sel(catalog.OutboxEventsPending)
	pending := one(pendingSel)
	age := one(b.sel(catalog.OutboxOldestPendingAge))
	created := b.sel(catalog.OutboxEventsCreated)
	published := b.sel(catalog.OutboxEventsPublished)
	what := "{{ $labels.aggregate_type }}/{{ $labels.event_type }} in database {{ $labels.database }}"
	return []Rule{
		b.rule(WorkflowOutboxBacklogStalled, o.StalledFor, stalled(pending, age, o.StalledWindow, increase(published, o.StalledWindow)),
			fmt.Sprintf("{{ $value | humanize }} outbox "+pl("event")+" of %s pending; the oldest has waited over %s and no event of this type was published in the last %s. Check the outbox publisher.", what, dur(o.StalledWindow), dur(o.StalledWindow))),

		b.rule(WorkflowOutboxOldestEventTooOld, o.OldestAgeFor, fmt.Sprintf(`
%[1]s > %[2]s
`, age, secs(o.OldestAge)),
			fmt.Sprintf("The oldest pending outbox event of %s has waited {{ $value | humanizeDuration }} (threshold %s). Downstream consumers have not seen it.", what, dur(o.OldestAge))),

		b.rule(WorkflowOutboxEventsFailed, o.FailedFor, fmt.Sprintf(`
%[1]s > 0
`, one(b.sel(catalog.OutboxEventsFailed))),
			fmt.Sprintf("{{ $value | humanize }} outbox "+pl("event")+" of %s "+"{{ if ne $value 1.0 }}are{{ else }}is{{ end }}"+" in a failed or dead status. Consumers will not see them until someone repairs and requeues them.", what)),

		// The growth is the pending count now less the count a window
		// ago, whichever pod read it (a delta() of each replica's series
		// would see only its own part of a window a reschedule split);
		// for a type younger than the window, the delta over its life.
		b.rule(WorkflowOutboxBacklogGrowing, o.GrowingFor, fmt.Sprintf(`
%[1]s
and (%[1]s - %[2]s or %[3]s) > %[4]s
and %[5]s > %[6]s
and %[7]s > 0
`, pending, one(ago(pendingSel, o.GrowingWindow)), one("delta("+pendingSel+"["+dur(o.GrowingWindow)+"])"), num(o.GrowingMinIncrease),
			rate(created, o.GrowingWindow), rate(published, o.GrowingWindow), increase(published, o.StalledWindow)),
			fmt.Sprintf("Outbox events of %s are created faster than they are published over the last %s; {{ $value | humanize }} now pending and the backlog grew by more than %s. The publisher is working (it published within the last %s) but too slow.", what, dur(o.GrowingWindow), num(o.GrowingMinIncrease), dur(o.StalledWindow))),

		b.rule(WorkflowOutboxEventsRetrying, o.RetryingFor, fmt.Sprintf(`
%[1]s > 0
`, one(b.sel(catalog.OutboxEventsRetrying))),
			fmt.Sprintf("{{ $value | humanize }} pending outbox "+pl("event")+" of %s "+"{{ if ne $value 1.0 }}have{{ else }}has{{ end }}"+" been retried at least retrying_after_attempts times (the exporter's setting, default 3) and "+"{{ if ne $value 1.0 }}are{{ else }}is{{ end }}"+" still not published. The publisher fails on "+"{{ if ne $value 1.0 }}them{{ else }}it{{ end }}"+" again and again: the status page groups the last errors by cause.", what)),
	}
}

// relay: an outbox's change-data-capture relay, by the logical replication
// slot it reads.
func (b builder) relay() []Rule {
	r := b.c.Relay
	what := "database {{ $labels.database }} (slot {{ $labels.slot }})"
	return []Rule{
		b.rule(WorkflowOutboxRelayBehind, r.LagFor, fmt.Sprintf(`
%s > %s
`, one(b.bridged(b.sel(catalog.OutboxRelayLagSeconds))), secs(r.Lag)),
			fmt.Sprintf("The oldest outbox write of %s that the relay has not confirmed has waited {{ $value | humanizeDuration }} (threshold %s): consumers have not seen those events. The relay is disconnected (see workflow_outbox_relay_slot_active) or connected and not confirming. A Debezium connector without heartbeats confirms a transaction only when the next one arrives: on a quiet outbox that reads as behind.", what, dur(r.Lag))),

		b.rule(WorkflowOutboxRelayWALAtRisk, r.WALRiskFor, fmt.Sprintf(`
%[1]s == 1
or
%[2]s > %[3]s * %[4]s
`, one(b.bridged(b.sel(catalog.OutboxRelayWALStatus, `status=~"unreserved|lost"`))), one(b.bridged(b.sel(catalog.OutboxRelayRetainedWALBytes))),
			num(r.WALKeepRatio), one(b.bridged(b.sel(catalog.OutboxRelayWALKeepLimitBytes)))),
			fmt.Sprintf("{{ if $labels.status }}The replication slot of %[1]s has wal_status {{ $labels.status }}: {{ if eq $labels.status \"lost\" }}PostgreSQL removed WAL the relay needs, and it cannot resume from the slot; the events in that WAL were never published.{{ else }}WAL the relay needs is due for removal at the next checkpoint.{{ end }}{{ else }}The replication slot of %[1]s retains {{ $value | humanize1024 }}B of WAL, over %[2]s of max_slot_wal_keep_size: past it PostgreSQL invalidates the slot and the relay loses the events it has not read.{{ end }} Get the relay to read (or raise max_slot_wal_keep_size) now.", what, pct(r.WALKeepRatio))),
	}
}

func (b builder) inbox() []Rule {
	in := b.c.Inbox
	// Messages waiting to be processed, and those processed, per source
	// and type (the status label differs between the two, so both sides
	// sum it away).
	waitingStatus := `status=~"RECEIVED|PROCESSING|FAILED_RETRYABLE"`
	waiting := one("sum without (status) (" + b.sel(catalog.InboxMessages, waitingStatus) + ")")
	waitingBefore := one("sum without (status) (" + ago(b.sel(catalog.InboxMessages, waitingStatus), in.GrowingWindow) + ")")
	oldest := one("max without (status) (" + b.sel(catalog.InboxOldestMessageAge, waitingStatus) + ")")
	processed := func(window model.Duration) string {
		return one("sum without (status) (increase(" + b.sel(catalog.InboxMessagesProcessed) + "[" + dur(window) + "]))")
	}
	what := "{{ $labels.source_system }}/{{ $labels.message_type }} in database {{ $labels.database }}"
	return []Rule{
		b.rule(WorkflowInboxBacklogStalled, in.StalledFor, stalled(waiting, oldest, in.StalledWindow, processed(in.StalledWindow)),
			fmt.Sprintf("{{ $value | humanize }} inbox "+pl("message")+" of %s waiting; the oldest has waited over %s and no message of this type was processed in the last %s. Check the consumer.", what, dur(in.StalledWindow), dur(in.StalledWindow))),

		b.rule(WorkflowInboxBacklogGrowing, in.GrowingFor, fmt.Sprintf(`
%[1]s
and %[1]s - %[2]s > %[3]s
and %[4]s > 0
`, waiting, waitingBefore, num(in.GrowingMinIncrease), processed(in.StalledWindow)),
			fmt.Sprintf("{{ $value | humanize }} inbox "+pl("message")+" of %s waiting, more than %s more than %s ago. The consumer is working (it processed messages within the last %s) but too slow.", what, num(in.GrowingMinIncrease), dur(in.GrowingWindow), dur(in.StalledWindow))),

		b.rule(WorkflowInboxBacklogOld, in.For, fmt.Sprintf(`
%s > %s
`, one(b.bridged(b.sel(catalog.InboxOldestMessageAge, `status!="`+vocab.StatusUnknownOutcome+`"`))), secs(in.OldestAge)),
			fmt.Sprintf("The oldest inbox message from {{ $labels.source_system }} of type {{ $labels.message_type }} in status {{ $labels.status }} in database {{ $labels.database }} is {{ $value | humanizeDuration }} old (threshold %s).", dur(in.OldestAge))),

		b.rule(WorkflowInboxMessagesRetrying, in.RetryingFor, fmt.Sprintf(`
%[1]s > 0
`, one(b.sel(catalog.InboxMessagesRetrying))),
			fmt.Sprintf("{{ $value | humanize }} inbox "+pl("message")+" of %s "+"{{ if ne $value 1.0 }}have{{ else }}has{{ end }}"+" been attempted at least retrying_after_attempts times (the exporter's setting, default 3) and "+"{{ if ne $value 1.0 }}are{{ else }}is{{ end }}"+" still not processed. The consumer fails on "+"{{ if ne $value 1.0 }}them{{ else }}it{{ end }}"+" again and again: the status page groups the last errors by cause.", what)),

		b.rule(WorkflowInboxMessagesFailed, in.FailedFor, fmt.Sprintf(`
%[1]s > 0
`, one(b.sel(catalog.InboxMessagesFailed))),
			fmt.Sprintf("{{ $value | humanize }} "+pl("message")+" of %s "+"{{ if ne $value 1.0 }}wait{{ else }}waits{{ end }}"+" in the dead-letter table: the consumer gave up on "+"{{ if ne $value 1.0 }}them{{ else }}it{{ end }}"+". Nothing processes "+"{{ if ne $value 1.0 }}them{{ else }}it{{ end }}"+" until someone fixes the cause and replays "+"{{ if ne $value 1.0 }}them{{ else }}it{{ end }}"+".", what)),
	}
}

// delivery: the delivery ledger (deliveries[] of the exporter config). The
// lost page reads the gauge itself, not bridged over a gap: its series go
// away only while the delivery or one of its databases cannot be read, and
// each of those pages by itself (WorkflowExporterSourceDown); the gauge
// stays above 0 for as long as a lost event stays in the window (an hour
// by default), so a failed poll costs the page lost_for at most.
func (b builder) delivery() []Rule {
	dl := b.c.Delivery
	lost := one(b.sel(catalog.DeliveryLostEvents))
	dups := one(b.sel(catalog.DeliveryDuplicateReceipts))
	what := "delivery {{ $labels.delivery }} (event type {{ $labels.event_type }})"
	return []Rule{
		b.rule(WorkflowDeliveryEventsLost, dl.LostFor, fmt.Sprintf(`
%s > 0
`, lost),
			"{{ $value | humanize }} "+pl("event")+" of "+what+" "+"{{ if ne $value 1.0 }}were{{ else }}was{{ end }}"+" published longer ago than the delivery's deadline and the consumer's inbox does not hold "+"{{ if ne $value 1.0 }}them{{ else }}it{{ end }}"+": published and never received. The status page lists their event ids for the replay."),

		b.rule(WorkflowDeliveryDuplicateReceipts, dl.DuplicatesFor, fmt.Sprintf(`
%[1]s > %[2]s
and %[1]s > %[3]s * %[4]s
`, dups, num(dl.DuplicatesMin), num(dl.DuplicatesRatio), one(b.sel(catalog.DeliveryPublishedEvents))),
			fmt.Sprintf("The consumer's inbox of %s holds {{ $value | humanize }} receipts beyond the first of the events published in the delivery's window: more than %s, and more than %s of those events. The inbox absorbs duplicates; find out why they rise (redeliveries after consumer restarts, a publisher that publishes twice, a replay).", what, num(dl.DuplicatesMin), pct(dl.DuplicatesRatio))),
	}
}

func (b builder) idempotency() []Rule {
	i := b.c.Idempotency
	uo := `status="` + vocab.StatusUnknownOutcome + `"`
	dup := b.sel(catalog.IdempotencyDuplicatesPrevented)
	return []Rule{
		b.rule(WorkflowUnknownOutcomeRecords, i.UnknownOutcomeFor, fmt.Sprintf(`
(
  %[1]s > 0
  and %[2]s > %[5]s
)
or
(
  %[3]s > 0
  and %[4]s > %[5]s
)
`, one(b.sel(catalog.IdempotencyRecords, uo)), one(b.sel(catalog.IdempotencyOldestRecordAge, uo)),
			one(b.sel(catalog.InboxMessages, uo)), one(b.sel(catalog.InboxOldestMessageAge, uo)), secs(i.UnknownOutcomeAge)),
			fmt.Sprintf("{{ $value | humanize }} "+pl("record")+" in database {{ $labels.database }} ({{ if $labels.scope }}idempotency scope {{ $labels.scope }}{{ else }}inbox {{ $labels.source_system }}/{{ $labels.message_type }}{{ end }}) in UNKNOWN_OUTCOME; the oldest {{ if $labels.scope }}was not updated for{{ else }}was received{{ end }} over %s{{ if not $labels.scope }} ago (the inbox keeps no update time){{ end }}. Reconcile them with the external system; never retry them blindly.", dur(i.UnknownOutcomeAge))),

		b.rule(WorkflowIdempotencyStaleInProgress, i.StaleFor, fmt.Sprintf(`
%s > 0
`, one(b.sel(catalog.IdempotencyStaleRecords, `status=~"`+strings.Join(vocab.IdempotencyInProgressStatuses(), "|")+`"`))),
			"{{ $value | humanize }} idempotency "+pl("record")+" of scope {{ $labels.scope }} in database {{ $labels.database }} stuck in {{ $labels.status }} without an update for longer than the exporter's stale threshold. A worker may have crashed mid-operation."),

		b.rule(WorkflowIdempotencyConflicts, 0, fmt.Sprintf(`
round(%s) > %s
`, increase(b.sel(catalog.IdempotencyConflicts), i.ConflictsWindow), num(i.ConflictsMax)),
			fmt.Sprintf("{{ $value | printf \"%%.0f\" }} idempotency conflicts (same key, different request) in scope {{ $labels.scope }} of database {{ $labels.database }} in the last %s (threshold %s). The key is probably not deterministic or the request changed between retries.", dur(i.ConflictsWindow), num(i.ConflictsMax))),

		b.rule(WorkflowCompletedSideEffectTaskOpen, i.CompletedTaskOpenFor, fmt.Sprintf(`
%s > 0
`, one(b.bridged(b.sel(catalog.IdempotencyCompletedTaskOpen)))),
			"{{ $value | humanize }} idempotency "+pl("record")+" of scope {{ $labels.scope }} in database {{ $labels.database }} COMPLETED while the external task on topic {{ $labels.topic }} of engine {{ $labels.engine }} is still open: the completion was lost. Complete the task with the stored result; do not redo the side effect."),

		b.rule(WorkflowIdempotencyInDoubt, i.InDoubtFor, fmt.Sprintf(`
%s > 0
`, one(b.bridged(b.sel(catalog.IdempotencyInDoubt)))),
			"{{ $value | humanize }} idempotency "+pl("record")+" of scope {{ $labels.scope }} in database {{ $labels.database }} "+strings.Join(vocab.IdempotencyInProgressStatuses(), " or ")+" while the lock of the external task on topic {{ $labels.topic }} of engine {{ $labels.engine }} lapsed or moved to another worker. Reconcile before any retry."),

		b.rule(WorkflowProcessedJobTaskOpen, i.ProcessedJobTaskOpenFor, fmt.Sprintf(`
%s > 0
`, one(b.bridged(b.sel(catalog.ProcessedJobTaskOpen)))),
			"{{ $value | humanize }} processed-job "+pl("row")+" for activity {{ $labels.activity_id }} in database {{ $labels.database }} while the external task on topic {{ $labels.topic }} of engine {{ $labels.engine }} is still open: the completion was lost. Complete the task with the stored result; do not process the job again."),

		// The baseline is the average over the baseline of the replicas'
		// merged rate, taken every step (10 polls) over two steps (so that
		// each holds two samples even at a scrape interval as long as a
		// step), not each series' rate over the whole baseline: a series a
		// reschedule ended (or began) within the baseline would read as a
		// fraction of it, and summing the series instead would double it
		// with two replicas. The gate asks for a reading a whole baseline
		// and window ago, from whichever pod made it.
		b.rule(WorkflowDuplicatePreventionSpike, i.DuplicatesFor, fmt.Sprintf(`
round(%[1]s) > %[2]s
and %[3]s > %[4]s * avg_over_time(%[5]s[%[6]s:%[7]s] offset %[8]s)
and %[9]s
`, increase(dup, i.DuplicatesWindow), num(i.DuplicatesMin), rate(dup, i.DuplicatesWindow), num(i.DuplicatesFactor),
			rate(dup, 2*b.step()), dur(i.DuplicatesBaseline), dur(b.step()), dur(i.DuplicatesWindow),
			one(ago(dup, i.DuplicatesBaseline+i.DuplicatesWindow))),
			fmt.Sprintf("{{ $value | printf \"%%.0f\" }} duplicate attempts were absorbed in scope {{ $labels.scope }} of database {{ $labels.database }} in the last %s, more than %s times the average of the previous %s. The protection works; find out why duplicates are rising.", dur(i.DuplicatesWindow), num(i.DuplicatesFactor), dur(i.DuplicatesBaseline))),
	}
}

func (b builder) camunda() []Rule {
	c := b.c.Camunda
	failures := b.sel(catalog.CamundaExternalTaskFailures)
	completions := b.sel(catalog.CamundaExternalTaskCompletions)
	ended := b.sel(catalog.CamundaExternalTasksEnded)
	what := "topic {{ $labels.topic }} of engine {{ $labels.engine }}"
	return []Rule{
		b.rule(CamundaExternalTaskRetriesExhausted, c.RetriesExhaustedFor, fmt.Sprintf(`
%s > 0
`, one(b.sel(catalog.CamundaExternalTasks, `state="`+vocab.StateRetriesExhausted+`"`))),
			fmt.Sprintf("{{ $value | humanize }} external "+pl("task")+" on %s with no retries left (an incident each). The process instances wait for an operator.", what)),

		b.rule(CamundaExternalTaskLockExpirations, c.LockExpirationsFor, fmt.Sprintf(`
round(%s) > %s
`, increase(b.sel(catalog.CamundaExternalTaskLockExpirations), c.LockExpirationsWindow), num(c.LockExpirationsMax)),
			fmt.Sprintf("{{ $value | printf \"%%.0f\" }} external task locks lapsed on %s in the last %s (threshold %s) without complete, failure or extendLock. Another worker may run the same task again.", what, dur(c.LockExpirationsWindow), num(c.LockExpirationsMax))),

		b.rule(CamundaExternalTaskDuplicateExecution, c.DuplicateExecutionFor, fmt.Sprintf(`
round(%s) > %s
`, increase(b.sel(catalog.CamundaExternalTaskRedeliveries), c.DuplicateExecutionWindow), num(c.DuplicateExecutionMax)),
			fmt.Sprintf("{{ $value | printf \"%%.0f\" }} external "+pl("task")+" on %s locked again after a lapsed lock in the last %s: another worker ran the same task while the first may still have run it. Check that the idempotency records absorbed it.", what, dur(c.DuplicateExecutionWindow))),

		// The outcomes other than failures are the completions; at
		// history level none, which has no completions series, the open
		// tasks seen and then gone (ended_total, which exists at every
		// level): failures alone are not a storm.
		b.rule(CamundaExternalTaskRetryStorm, c.RetryStormFor, fmt.Sprintf(`
round(%[1]s) > %[2]s
and
%[1]s
  > %[3]s * (%[1]s + (%[4]s or %[5]s or %[1]s * 0))
`, increase(failures, c.RetryStormWindow), num(c.RetryStormMinFailures), num(c.RetryStormFailureRatio),
			increase(completions, c.RetryStormWindow), increase(ended, c.RetryStormWindow)),
			fmt.Sprintf("Workers reported {{ $value | printf \"%%.0f\" }} failures on %s in the last %s, more than %s of all outcomes. A downstream dependency is probably down and retries amplify the load.", what, dur(c.RetryStormWindow), pct(c.RetryStormFailureRatio))),

		// Progress is any outcome the history level lets the exporter
		// see (completions and BPMN errors from level activity on,
		// failures at any level as a lower bound) or, at every level,
		// open tasks seen and then gone: an absent counter never reads
		// as "nothing moved" while the tasks drain.
		b.rule(CamundaExternalTaskBacklogStalled, c.BacklogStalledFor, fmt.Sprintf(`
%[1]s > %[2]s
and ignoring (state) %[3]s > 0
unless %[4]s > 0
unless %[5]s > 0
unless %[6]s > 0
`, one(b.sel(catalog.CamundaExternalTaskOldestWaitingAge)), secs(c.BacklogStalledAge), one(b.sel(catalog.CamundaExternalTasks, `state=~"`+vocab.StateWaiting+"|"+vocab.StateLockExpired+`"`)),
			increase(completions, c.BacklogStalledWindow), increase(failures, c.BacklogStalledWindow), increase(ended, c.BacklogStalledWindow)),
			fmt.Sprintf("The oldest waiting external task on %s has waited {{ $value | humanizeDuration }} and no task of this topic was completed or failed in the last %s. No worker is fetching this topic.", what, dur(c.BacklogStalledWindow))),

		b.rule(CamundaIncidentsOpen, c.IncidentsFor, fmt.Sprintf(`
%s > 0
`, one(b.sel(catalog.CamundaIncidents, `incident_type!="failedExternalTask"`))),
			"{{ $value | humanize }} open {{ $labels.incident_type }} "+pl("incident")+" on engine {{ $labels.engine }} for activity {{ $labels.activity_id }} of process {{ $labels.process_definition_key }}."),

		b.rule(CamundaExternalTaskLockHeldTooLong, c.LockHeldFor, fmt.Sprintf(`
%s > %s
`, one(b.sel(catalog.CamundaExternalTaskOldestLockAge)), secs(c.LockHeldAge)),
			fmt.Sprintf("The longest lock on %s has been held by the same worker for {{ $value | humanizeDuration }} (threshold %s), extended or not. The worker may hang in a call that never returns while it keeps the task from everyone else.", what, dur(c.LockHeldAge))),

		// The page's input missing while tasks wait: an engine or reading
		// that cannot date them (docs/camunda-states.md, "The oldest
		// waiting age on every version"), so the page is blind, never
		// silently. topic="other" has no age by design (its own ticket:
		// WorkflowExporterLabelValuesFolded).
		b.rule(CamundaExternalTaskWaitingAgeMissing, c.WaitingAgeMissingFor, fmt.Sprintf(`
%s > 0
unless %s
`, one("sum without (state) ("+b.sel(catalog.CamundaExternalTasks, `state=~"`+vocab.StateWaiting+"|"+vocab.StateLockExpired+`"`, `topic!="other"`)+")"), one(b.sel(catalog.CamundaExternalTaskOldestWaitingAge))),
			fmt.Sprintf("{{ $value | humanize }} external "+pl("task")+" wait on %s and the exporter serves no oldest waiting age for the topic: CamundaExternalTaskBacklogStalled cannot fire for it. camunda_engine_capability says what this engine lets the exporter report.", what)),

		b.rule(CamundaExternalTaskWorkerSilent, c.WorkerSilentFor, fmt.Sprintf(`
%s > %s
`, one(b.sel(catalog.CamundaExternalTaskWorkerIdle)), secs(c.WorkerSilentAge)),
			fmt.Sprintf("Worker {{ $labels.worker_id }} holds locks on %s and has completed or failed no task of it for {{ $value | humanizeDuration }} (threshold %s). It has stopped making progress while its locks keep the tasks from other workers.", what, dur(c.WorkerSilentAge))),
	}
}

func (b builder) camundaJobs() []Rule {
	c := b.c.Camunda
	w := c.JobExecutorStalledWindow
	// The counters and the executable jobs carry process_definition_key
	// (and the tenant), the age only the engine: per engine, the keys'
	// series are matched ignoring those labels, so every label of the
	// target (namespace, cluster) still matches.
	perKey := "ignoring (" + catalog.TenantLabel + ", process_definition_key)"
	sumKeys := func(expr string) string {
		return "sum without (" + catalog.TenantLabel + ", process_definition_key) (" + expr + ")"
	}
	perEngine := func(sel string) string {
		return one(sumKeys("increase(" + sel + "[" + dur(w) + "])"))
	}
	// camunda_engine_info of the engines at history level full, as one
	// series per engine.
	full := one("max without (version, flavor, history_level) (" + b.sel(catalog.CamundaEngineInfo, `history_level="full"`) + ")")
	age := b.sel(catalog.CamundaJobOldestExecutableAge)
	executable := b.sel(catalog.CamundaJobsExecutable)
	return []Rule{
		// Progress is a job log entry (history level full only: the
		// counters are absent below it) or, at every level, the runtime
		// moving: the oldest executable job's age fell (it ran, or left)
		// or a key's executable jobs fell within the window.
		// Below history level full there is no job log: the runtime moving
		// (the oldest age or a key's executable jobs falling) stands in for
		// executions. At full the log alone says, as anything else lowers
		// a count too (a cancelled instance, a suspended one).
		b.rule(CamundaJobExecutorStalled, c.JobExecutorStalledFor, fmt.Sprintf(`
%[1]s > %[2]s
unless %[3]s > 0
unless %[4]s > 0
unless (%[1]s < %[5]s unless %[6]s)
unless %[9]s (%[7]s < %[8]s unless %[9]s %[6]s)
`, one(age), secs(c.JobExecutorStalledAge),
			perEngine(b.sel(catalog.CamundaJobSuccesses)), perEngine(b.sel(catalog.CamundaJobFailures)),
			one("max_over_time("+age+"["+dur(w)+"])"), full,
			one(executable), one("max_over_time("+executable+"["+dur(w)+"])"), perKey),
			fmt.Sprintf("The oldest executable async job on engine {{ $labels.engine }} has been due for {{ $value | humanizeDuration }} and no job succeeded or failed in the last %s. The job executor is stopped, disabled, or cannot acquire jobs: process instances wait at their async continuations and timers.", dur(w))),
	}
}

// camundaHistory: history growth. The collector reads at most once per
// history_cleanup.interval (10m), so the windows are hours, not minutes.
func (b builder) camundaHistory() []Rule {
	c := b.c.Camunda
	// The engine's cleanable instances, summed over its definitions (and
	// tenants), replicas merged.
	perEngine := func(expr string) string {
		return one("sum without (" + catalog.TenantLabel + ", process_definition_key) (" + expr + ")")
	}
	cleanable := b.sel(catalog.CamundaHistoryCleanable)
	return []Rule{
		b.rule(CamundaHistoryCleanupFailing, c.HistoryCleanupFailingFor, fmt.Sprintf(`
%s > 0
`, one(b.sel(catalog.CamundaHistoryCleanupJobsFailing))),
			"{{ $value | humanize }} history cleanup "+pl("job")+" of engine {{ $labels.engine }} failed its last run or "+
				"ran out of retries. Finished process instances past their time to live stay in the history, and the engine's database grows."),
		b.rule(CamundaHistoryCleanupBehind, c.HistoryCleanupBehindFor, fmt.Sprintf(`
min_over_time(%[1]s[%[2]s:5m]) > %[3]s
and %[4]s
`, perEngine(cleanable), dur(c.HistoryCleanupBehindWindow), num(c.HistoryCleanupBehindMin),
			// A whole window of readings, not the first hours after the
			// exporter started: a reading a window ago, from whichever
			// pod made it.
			perEngine(ago(cleanable, c.HistoryCleanupBehindWindow))),
			fmt.Sprintf("Engine {{ $labels.engine }} held more than %s cleanable process instances (finished, past their history time to live) at every reading of the last %s (the lowest: {{ $value | humanize }}). History cleanup is off, outside its window, failing, or slower than the engine produces history.", num(c.HistoryCleanupBehindMin), dur(c.HistoryCleanupBehindWindow))),
	}
}

// pl returns word with an "s" appended by the alert template unless the
// alert's value is exactly 1.
func pl(word string) string { return word + "{{ if ne $value 1.0 }}s{{ end }}" }

func pct(r float64) string { return strconv.FormatFloat(r*100, 'f', -1, 64) + "%" }

// CollectorsBehindPages are the collectors whose series a paging alert
// reads (the outbox and inbox tables, the outbox's relay, the two Camunda
// joins, the engine's external tasks and async jobs). One of them failing blinds a page, so
// WorkflowExporterSourceDown (critical) covers it; any other collector
// failing is WorkflowExporterCollectorDown (a ticket). A whole source down
// blinds every page on it and is always WorkflowExporterSourceDown.
func CollectorsBehindPages() []string {
	return []string{vocab.TableOutbox, vocab.CollectorOutboxRelay, vocab.TableInbox, "idempotency_camunda", "processed_jobs_camunda", vocab.CollectorCamunda, vocab.CollectorCamundaJobs}
}

func (b builder) exporter() []Rule {
	e := b.c.Exporter
	// A source or collector is down when every replica that reports it
	// says so (max of the replicas' 0 and 1): while one replica still
	// reads the source, its data alerts are not blind. A replica that
	// Prometheus cannot scrape reports nothing.
	sourceUp := func(src catalog.Source) string {
		return one(b.sel(catalog.ExporterSourceUp, `source="`+string(src)+`"`))
	}
	behindPages := `collector=~"` + strings.Join(CollectorsBehindPages(), "|") + `"`
	notBehindPages := `collector!~"` + strings.Join(CollectorsBehindPages(), "|") + `"`
	collectorUp := func(src catalog.Source, which string) string {
		return one(b.sel(catalog.ExporterCollectorUp, `source="`+string(src)+`"`, which))
	}
	// down: the collectors of both kinds of source that fail, named
	// database or engine like the data alerts of the source.
	down := func(which string) string {
		return fmt.Sprintf(`label_replace(%[1]s == 0 unless ignoring (collector) %[2]s == 0, "database", "$1", "name", "(.*)")
or
label_replace(%[3]s == 0 unless ignoring (collector) %[4]s == 0, "engine", "$1", "name", "(.*)")`,
			collectorUp(catalog.SourceDatabase, which), sourceUp(catalog.SourceDatabase), collectorUp(catalog.SourceCamunda, which), sourceUp(catalog.SourceCamunda))
	}
	// stale: a source whose snapshot still says up, every collector up,
	// while its last fully successful collection is older than
	// stale_after: a collection that hangs (the exporter serves the last
	// snapshot meanwhile), which would otherwise read as all clear.
	stale := func(src catalog.Source, lane string) string {
		return fmt.Sprintf(`label_replace(time() - %[1]s > %[2]s unless %[3]s == 0 unless ignoring (collector) %[4]s == 0, "%[5]s", "$1", "name", "(.*)")`,
			one(b.sel(catalog.ExporterLastSuccessfulCollect, `source="`+string(src)+`"`)), secs(e.StaleAfter),
			sourceUp(src), one(b.sel(catalog.ExporterCollectorUp, `source="`+string(src)+`"`)), lane)
	}
	up := b.sel(targetUp)
	cutWindow, foldWindow := dur(e.HistoryReadsCutWindow), dur(e.LabelValuesFoldedWindow)
	return []Rule{
		b.rule(WorkflowExporterSourceDown, e.SourceDownFor, fmt.Sprintf(`
label_replace(%[1]s == 0, "database", "$1", "name", "(.*)")
or
label_replace(%[2]s == 0, "engine", "$1", "name", "(.*)")
or
label_replace(%[6]s == 0, "delivery", "$1", "name", "(.*)")
or
%[3]s
or
%[4]s
or
%[5]s
or
%[7]s
`, sourceUp(catalog.SourceDatabase), sourceUp(catalog.SourceCamunda), down(behindPages), stale(catalog.SourceDatabase, "database"), stale(catalog.SourceCamunda, "engine"),
			sourceUp(catalog.SourceDelivery), stale(catalog.SourceDelivery, "delivery")),
			"The workflow exporter cannot read {{ $labels.source }} source {{ $labels.name }}{{ if $labels.collector }} (collector {{ $labels.collector }}){{ end }}: its series are absent, or (no collector failing) have not been refreshed for "+dur(e.StaleAfter)+" or more, and the alerts on them, paging ones among them, stay silent. This is not all clear."),

		b.rule(WorkflowExporterCollectorDown, e.CollectorDownFor, fmt.Sprintf(`
%s
`, down(notBehindPages)),
			"The workflow exporter's collector {{ $labels.collector }} of {{ $labels.source }} source {{ $labels.name }} fails: its series are absent and the tickets on them stay silent; no paging alert reads them."),

		// Down when no replica can be scraped: one replica down leaves
		// the other's alerts working (Kubernetes reports the missing
		// replica).
		b.rule(WorkflowExporterDown, e.DownFor, fmt.Sprintf(`
%[1]s == 0 or absent(%[2]s)
`, one(up), up),
			"Prometheus cannot scrape the workflow exporter of job {{ $labels.job }}: {{ if eq $value 0.0 }}no replica answers{{ else }}Prometheus has no target for the job{{ end }}. Outbox, inbox, idempotency and Camunda alerts are all blind until it is back."),

		b.rule(WorkflowExporterTasksUnwatched, e.UnwatchedTasksFor, fmt.Sprintf(`
%s > 0
`, one(b.sel(catalog.ExporterUnwatchedTasks))),
			"{{ $value | humanize }} in-flight external "+pl("task")+" of engine {{ $labels.engine }} "+"{{ if ne $value 1.0 }}were{{ else }}was{{ end }}"+" not listed by the exporter's last poll (beyond max_listed_tasks, or on topics folded into \"other\"): their lapsed locks and redeliveries go uncounted and the database joins do not see them. Raise the engine's max_listed_tasks or label_value_limit."),

		b.rule(WorkflowExporterHistoryReadsCut, 0, fmt.Sprintf(`
round(%[1]s) > 0
or
round(%[2]s) > 0
`, increase(b.sel(catalog.ExporterHistoryReadsCut), e.HistoryReadsCutWindow), increase(b.sel(catalog.ExporterJobHistoryReadsCut), e.HistoryReadsCutWindow)),
			fmt.Sprintf("{{ $value | printf \"%%.0f\" }} collections of engine {{ $labels.engine }} in the last %s found more new history log entries than they may read: failures, completions or job executions of those intervals are undercounted, and the alerts on them may stay silent. Raise the engine's max_history_entries or lower its min_interval.", cutWindow)),

		b.rule(WorkflowExporterLabelValuesFolded, 0, fmt.Sprintf(`
round(%s) > 0
`, increase(b.sel(catalog.ExporterLabelValuesFolded), e.LabelValuesFoldedWindow)),
			fmt.Sprintf("{{ $value | printf \"%%.0f\" }} series of {{ $labels.metric }} were folded into the label value \"other\" in the last %s: the values beyond the label value limit share one series, and an alert per topic, scope or type undercounts them. Raise label_value_limit of the source, or find the label that grows without bound.", foldWindow)),

		b.rule(WorkflowExporterWatchdog, 0, "vector(1)",
			"This alert always fires. Route it to a dead man's switch that raises an alarm when its notifications stop: then Prometheus, the rules or Alertmanager are broken, and no other alert can reach anyone."),
	}
}
