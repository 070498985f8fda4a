// Package sources turns a configuration into the poll sources the exporter
// serves, and replaces them when the configuration is reloaded: a source
// whose settings did not change is kept (the same poll.Source, with its
// snapshot, counters, watermarks and lock tracking), the others are built
// anew and swapped in at once, and the ones that went away are closed.
// Building connects to nothing: a source that is down is reported by its
// collections.
package sources

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/workflow-exporter/workflow-exporter/blocks/correlate"
	"github.com/workflow-exporter/workflow-exporter/blocks/labellimit"
	"github.com/workflow-exporter/workflow-exporter/config"
	"github.com/workflow-exporter/workflow-exporter/internal/poll"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// Manager holds the sources of the running configuration in one poll.Set.
// It is safe for concurrent use; Apply calls are serialised.
type Manager struct {
	folds     *labellimit.Stats
	views     *correlate.Registry
	logger    *slog.Logger
	set       *poll.Set
	statusOff bool

	mu      sync.Mutex
	entries []*entry
	closed  bool
	status  config.Status // of the running configuration
}

// Options configure a Manager.
type Options struct {
	// Folds counts the label values folded by every source, across
	// reloads.
	Folds *labellimit.Stats
	// DisableStatus turns off the reading only the status page needs
	// (--web.disable-status), whatever status.max_items says.
	DisableStatus bool
	Logger        *slog.Logger
}

// entry is one built source and what it was built from.
type entry struct {
	// id is the source's kind and name: what a new configuration's source
	// is compared with.
	id   string
	spec any // the settings it was built from; equal settings keep it
	src  *poll.Source
	// views is the engine whose view the source publishes (Camunda
	// sources), withdrawn when the source goes.
	engine string
	close  func()
}

// Changes says what Apply did, by source ("camunda/main", "database/orders").
type Changes struct {
	Kept, Added, Replaced, Removed []string
}

// New returns a manager without sources.
func New(o Options) *Manager {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Folds == nil {
		o.Folds = labellimit.NewStats()
	}
	return &Manager{folds: o.Folds, views: correlate.NewRegistry(), logger: o.Logger, set: poll.NewSet(o.Folds), statusOff: o.DisableStatus}
}

// Status is the status section of the running configuration (the status
// page reads it per request, so a reload changes it too).
func (m *Manager) Status() config.Status {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.status
}

// statusItems is how many items each status list holds; 0 turns the
// lists' reading off.
func (m *Manager) statusItems(cfg *config.Config) int {
	if m.statusOff {
		return 0
	}
	return cfg.Status.MaxItems
}

// databaseDown reports whether the source of the named database is down
// by its latest snapshot: a delivery between it and another database then
// reports nothing (DeliveryOptions.DatabaseDown). It reads the set, never
// m.mu, so a collection that asks never waits for Apply or Close.
func (m *Manager) databaseDown(name string) bool {
	for _, src := range m.set.Sources() {
		if src.Kind() == vocab.SourceDatabase && src.Name() == name {
			snap := src.Current()
			return snap != nil && !snap.Up
		}
	}
	return false
}

// Set is the poll.Set serving the current sources.
func (m *Manager) Set() *poll.Set { return m.set }

// Apply makes cfg the running configuration. Every source that is new or
// whose settings changed is built first; if any cannot be built, nothing
// changes and the error is the one Check returns for cfg. Then the set
// switches to the new sources in one step (a scrape sees either the old or
// the new sources, never a gap), and the sources that were replaced or
// removed are closed: their collections cancelled, their connections
// released.
func (m *Manager) Apply(ctx context.Context, cfg *config.Config) (Changes, error) {
	ch, gone, err := m.swap(cfg)
	if err != nil {
		return Changes{}, err
	}
	// Outside the lock: a shutdown need not wait for this.
	cctx, cancel := context.WithTimeout(ctx, closeWait)
	defer cancel()
	for _, e := range gone {
		e.src.Close(cctx)
		e.close()
	}
	return ch, nil
}

// closeWait bounds how long Apply waits for the cancelled collections of
// the sources it replaced or removed.
const closeWait = 5 * time.Second

// swap builds what changed and switches the set to the new sources; it
// returns the entries that left, to be closed.
func (m *Manager) swap(cfg *config.Config) (Changes, []*entry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return Changes{}, nil, fmt.Errorf("sources: the exporter is stopping")
	}
	old := map[string]*entry{}
	for _, e := range m.entries {
		old[e.id] = e
	}
	specs := specsOf(cfg, m.statusItems(cfg))
	next := make([]*entry, 0, len(specs))
	var built []*entry
	var ch Changes
	for _, sp := range specs {
		if e := old[sp.id]; e != nil && reflect.DeepEqual(e.spec, sp.spec) {
			next = append(next, e)
			ch.Kept = append(ch.Kept, sp.id)
			continue
		}
		e, err := sp.build(m)
		if err != nil {
			for _, b := range built {
				b.close()
			}
			return Changes{}, nil, err
		}
		// Said once per source built: at start, and when a reload
		// changes it (a kept source said it already).
		for _, w := range sp.warnings {
			w.log(m.logger)
		}
		built = append(built, e)
		next = append(next, e)
		if old[sp.id] != nil {
			ch.Replaced = append(ch.Replaced, sp.id)
		} else {
			ch.Added = append(ch.Added, sp.id)
		}
	}
	var gone []*entry
	for _, e := range m.entries {
		if !slices.Contains(next, e) {
			gone = append(gone, e)
			if !slices.Contains(ch.Replaced, e.id) {
				ch.Removed = append(ch.Removed, e.id)
			}
		}
	}
	srcs := make([]*poll.Source, len(next))
	for i, e := range next {
		srcs[i] = e.src
	}
	m.set.Replace(srcs...)
	m.entries = next
	m.status = cfg.Status
	for _, e := range gone {
		if e.engine != "" && !slices.ContainsFunc(next, func(n *entry) bool { return n.engine == e.engine }) {
			// Nothing publishes this engine any more: a join against its
			// last view would report stale facts.
			m.views.Withdraw(e.engine)
		}
	}
	return ch, gone, nil
}

// Close stops every source (their running collections are cancelled, and
// waited for until ctx ends) and releases their connections. Apply fails
// afterwards.
func (m *Manager) Close(ctx context.Context) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	var wg sync.WaitGroup
	for _, e := range m.entries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.src.Close(ctx)
		}()
	}
	wg.Wait()
	for _, e := range m.entries {
		e.close()
	}
}

// Check builds every source of cfg as Apply would and closes them again,
// connecting to nothing: --config.check refuses exactly what start-up and
// a reload refuse (a DSN that does not parse, credentials in a Camunda URL,
// an unreadable TLS file), with the same message.
func Check(cfg *config.Config, logger *slog.Logger) error {
	m := New(Options{Logger: logger})
	for _, sp := range specsOf(cfg, m.statusItems(cfg)) {
		e, err := sp.build(m)
		if err != nil {
			return err
		}
		e.close()
	}
	return nil
}

// sourceSpec is how to build one configured source, and what to warn
// about when it is built.
type sourceSpec struct {
	id       string
	spec     any
	build    func(m *Manager) (*entry, error)
	warnings []Warning
}

// databaseSpec and engineSpec are the settings a source is built from: its
// config section, its config key (errors name it), the length of its
// status lists and, for a database, the engines its joins look up.
type databaseSpec struct {
	Key         string
	Config      config.Database
	Engines     []string
	StatusItems int
}

type engineSpec struct {
	Key         string
	Config      config.Camunda
	StatusItems int
}

// deliverySpec: a delivery is built from its section and its two
// databases' sections (a change of either's DSN, timeouts or tables
// rebuilds it).
type deliverySpec struct {
	Key         string
	Config      config.Delivery
	Ends        DeliveryEnds
	StatusItems int
}

// joinEngines are the engines a database's joins look up that its own
// config section does not name: those of a processed-job join without an
// engine (it joins every configured engine). An idempotency join's engine
// is in its section.
func joinEngines(d config.Database, engines []string) []string {
	if pt := d.Tables.ProcessedJobs; pt != nil && !pt.Camunda.Disabled && pt.Camunda.Engine == "" {
		return engines
	}
	return nil
}

// specsOf lists cfg's sources in the order start-up builds them: the
// databases, the deliveries, then the engines; statusItems is the length
// of their status lists (0: none).
func specsOf(cfg *config.Config, statusItems int) []sourceSpec {
	var engines []string
	for _, e := range cfg.Camunda {
		engines = append(engines, e.Name)
	}
	var out []sourceSpec
	for i, d := range cfg.Databases {
		sp := databaseSpec{Key: fmt.Sprintf("databases[%d]", i), Config: d, Engines: joinEngines(d, engines), StatusItems: statusItems}
		out = append(out, sourceSpec{id: "database/" + d.Name, spec: sp, warnings: DatabaseWarnings(d, sp.Key), build: func(m *Manager) (*entry, error) {
			db, err := NewDatabase(sp.Config, sp.Key, DatabaseOptions{Folds: m.folds, Views: m.views, Engines: engines, StatusItems: sp.StatusItems, Logger: m.logger})
			if err != nil {
				return nil, err
			}
			return &entry{id: "database/" + d.Name, spec: sp, src: db.Source, close: db.DB.Close}, nil
		}})
	}
	for i, d := range cfg.Deliveries {
		sp := deliverySpec{Key: fmt.Sprintf("deliveries[%d]", i), Config: d, Ends: deliveryEnds(cfg, d), StatusItems: statusItems}
		id := vocab.SourceDelivery + "/" + d.Name
		out = append(out, sourceSpec{id: id, spec: sp, build: func(m *Manager) (*entry, error) {
			ds, err := NewDelivery(sp.Config, sp.Key, sp.Ends, DeliveryOptions{Folds: m.folds, StatusItems: sp.StatusItems, DatabaseDown: m.databaseDown, Logger: m.logger})
			if err != nil {
				return nil, err
			}
			return &entry{id: id, spec: sp, src: ds.Source, close: ds.Close}, nil
		}})
	}
	for i, e := range cfg.Camunda {
		sp := engineSpec{Key: fmt.Sprintf("camunda[%d]", i), Config: e, StatusItems: statusItems}
		out = append(out, sourceSpec{id: "camunda/" + e.Name, spec: sp, warnings: EngineWarnings(e, sp.Key), build: func(m *Manager) (*entry, error) {
			eng, err := NewCamundaSource(sp.Config, sp.Key, CamundaOptions{Folds: m.folds, Views: m.views, StatusItems: sp.StatusItems, Logger: m.logger})
			if err != nil {
				return nil, err
			}
			return &entry{id: "camunda/" + e.Name, spec: sp, src: eng.Source, engine: e.Name, close: eng.Close}, nil
		}})
	}
	return out
}
