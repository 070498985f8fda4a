package capability

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/workflow-exporter/workflow-exporter/camunda"
	"github.com/workflow-exporter/workflow-exporter/config"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// With the engine's authorization on, the REST API filters what a user may
// not read silently: no 403, just fewer tasks, or an empty history log, so
// that a worker's 30 completions read as 0 and every collector reports up.
// The REST reader therefore asks the engine (GET /authorization/check) for
// the grants each collector's queries need, on every process definition
// (a global grant, resource id "*"), before the collector reads; one that
// lacks a grant fails, naming it, instead of reporting a healthy zero. With
// authorization off the engine answers "authorized" to every check.
//
// The answers are kept for permissionRecheck while all is granted; while
// something is missing they are asked again at every collection, so a
// grant shows at the next one. Engine-database mode needs none of this: the
// role's table privileges are checked before a collector reads
// (collectors/engine/enginedb), and a missing one fails it naming the
// table.

// grant is one permission on one resource type.
type grant struct {
	permission string
	resource   int
}

func (g grant) String() string {
	return fmt.Sprintf("%s on %s", g.permission, map[int]string{
		camunda.ResourceProcessDefinition: "PROCESS_DEFINITION",
		camunda.ResourceProcessInstance:   "PROCESS_INSTANCE",
	}[g.resource])
}

var (
	readDefinition = grant{"READ", camunda.ResourceProcessDefinition}
	readHistory    = grant{"READ_HISTORY", camunda.ResourceProcessDefinition}
	readInstance   = grant{"READ", camunda.ResourceProcessInstance}
	readInstances  = grant{"READ_INSTANCE", camunda.ResourceProcessDefinition}
)

// need is one grant a collector needs, or one of alternatives, and what it
// reads with it.
type need struct {
	anyOf []grant
	for_  string
}

// collectorNeeds are the grants of each collector's REST queries, as the
// engine's authorization checks them (docs/production.md lists them).
var collectorNeeds = map[string][]need{
	vocab.CollectorCamunda: {
		{[]grant{readDefinition}, "the process definitions (topics of incidents)"},
		{[]grant{readInstance, readInstances}, "the external tasks and incidents"},
		{[]grant{readHistory}, "the external task history log and the activity instance history (failures, completions, BPMN errors, durations)"},
	},
	vocab.CollectorCamundaJobs: {
		{[]grant{readInstance, readInstances}, "the jobs"},
		{[]grant{readHistory}, "the job history log (job failures and successes)"},
	},
	vocab.CollectorCamundaProcesses: {
		{[]grant{readDefinition}, "the process definitions"},
		{[]grant{readInstance, readInstances}, "their running instances"},
	},
	vocab.CollectorCamundaHistory: {
		{[]grant{readDefinition}, "the process definitions"},
		{[]grant{readHistory}, "the finished process instances (the cleanable report)"},
	},
}

// permissionRecheck is how long the answers are kept while every grant is
// held.
const permissionRecheck = 10 * time.Minute

// Permissions holds the engine's answers for one engine's user (the REST
// reader keeps one per engine).
type Permissions struct {
	client *camunda.Client
	user   string
	engine string
	logger *slog.Logger

	mu      sync.Mutex
	granted map[grant]bool
	at      time.Time
	// unknown: the engine did not answer the checks (an anonymous user,
	// or an engine without the endpoint); nothing is enforced then.
	unknown bool
}

// NewPermissions returns the permissions of an engine's configured user,
// asked of the engine through client.
func NewPermissions(client *camunda.Client, cfg config.Camunda, logger *slog.Logger) *Permissions {
	return &Permissions{client: client, user: cfg.Username, engine: cfg.Name, logger: orDiscard(logger)}
}

// PermissionError is a collector's missing grants.
type PermissionError struct {
	Collector, User string
	Missing         []string
}

func (e *PermissionError) Error() string {
	return fmt.Sprintf("camunda: the user %s lacks %s on every process definition; with the engine's authorization on the REST API leaves out what it may not read, so the %s collector would report too little: grant it (docs/production.md#permissions)",
		e.User, strings.Join(e.Missing, "; "), e.Collector)
}

// FailureClass names the failure on the status page and in the log.
func (e *PermissionError) FailureClass() string {
	return "permission missing (" + strings.Join(e.Missing, "; ") + ")"
}

// Authorized returns a PermissionError when the user lacks a grant the
// collector needs. Without a user (no basic auth) there is nothing to
// check: the engine applies no authorization to unauthenticated requests.
func (p *Permissions) Authorized(ctx context.Context, collector string) error {
	if p.user == "" {
		return nil
	}
	if err := p.refresh(ctx); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.unknown {
		return nil
	}
	var missing []string
	for _, n := range collectorNeeds[collector] {
		ok := false
		var names []string
		for _, g := range n.anyOf {
			ok = ok || p.granted[g]
			names = append(names, g.String())
		}
		if !ok {
			missing = append(missing, strings.Join(names, " or ")+" (for "+n.for_+")")
		}
	}
	if len(missing) > 0 {
		return &PermissionError{Collector: collector, User: p.user, Missing: missing}
	}
	return nil
}

// refresh asks the engine again when the answers are stale or something
// was missing.
func (p *Permissions) refresh(ctx context.Context) error {
	p.mu.Lock()
	fresh := !p.at.IsZero() && time.Since(p.at) < permissionRecheck && (p.unknown || allTrue(p.granted))
	p.mu.Unlock()
	if fresh {
		return nil
	}
	granted := map[grant]bool{}
	unknown := false
	for _, g := range []grant{readDefinition, readHistory, readInstance, readInstances} {
		res, err := p.client.CheckAuthorization(ctx, g.permission, g.resource)
		if err != nil {
			switch {
			case camunda.IsStatus(err, http.StatusUnauthorized):
				// The engine authenticates nobody (its REST API's basic
				// auth is off, while something in front of it may ask for
				// credentials): it applies no authorization either. A
				// wrong password fails the probe before any collector.
				p.logger.Debug("camunda: the engine authenticates no user, so it applies no authorization; permissions not checked",
					"engine", p.engine, "user", p.user)
			case camunda.IsStatus(err, http.StatusNotFound), camunda.IsStatus(err, http.StatusForbidden):
				// No such endpoint, or refused: enforce nothing, and say
				// so in the log at each check.
				p.logger.Warn("camunda: cannot check the user's permissions (GET /authorization/check); with the engine's authorization on, missing grants would read as zeros",
					"engine", p.engine, "user", p.user, "err", err)
			default:
				return err
			}
			unknown = true
			break
		}
		granted[g] = res.Authorized
	}
	p.mu.Lock()
	p.granted, p.unknown, p.at = granted, unknown, time.Now()
	p.mu.Unlock()
	return nil
}

func allTrue(m map[grant]bool) bool {
	for _, v := range m {
		if !v {
			return false
		}
	}
	return true
}

// MissingPermissions asks the engine which grants each collector of a REST
// mode engine lacks for the configured user, for `workflow-exporter check`:
// per collector name, the missing grants (none when every grant is held,
// the engine's authorization is off, or no user is configured); known is
// false when the engine did not answer the checks.
func MissingPermissions(ctx context.Context, client *camunda.Client, cfg config.Camunda, logger *slog.Logger) (missing map[string][]string, known bool, err error) {
	p := NewPermissions(client, cfg, logger)
	if p.user == "" {
		return nil, true, nil
	}
	if err := p.refresh(ctx); err != nil {
		return nil, false, err
	}
	missing = map[string][]string{}
	for _, c := range []string{vocab.CollectorCamunda, vocab.CollectorCamundaJobs, vocab.CollectorCamundaProcesses, vocab.CollectorCamundaHistory} {
		var pe *PermissionError
		if err := p.Authorized(ctx, c); errors.As(err, &pe) {
			missing[c] = pe.Missing
		}
	}
	return missing, !p.unknown, nil
}

// TenantMembership is what `check` can tell of the user's tenants. With
// the REST API's authentication on, the engine's tenant check (on by
// default, whether or not authorization is) shows a user only the data of
// the tenants it is a member of, and of no tenant: the tasks, jobs,
// incidents and history of the others read as zeros, silently, unless the
// user is a Camunda administrator or the tenant check is off. The engine
// hides those tenants from the user's tenant list too (measured on Camunda
// 7.24), so the exporter cannot name the tenants the user misses; it
// names those the user is a member of, and tells when the list shows more
// (the tenant check is off).
type TenantMembership struct {
	// Known: the user may list tenants (READ on TENANT, or the engine's
	// authorization off); else nothing below is known.
	Known bool
	// Listed are the tenants the engine lists to the user; Member those
	// the user is a member of, directly or through a group.
	Listed, Member []string
}

// TenantMembershipOf reads the configured user's tenants, for
// `workflow-exporter check`. Without a username the REST API authenticates
// no one, and no tenant check applies.
func TenantMembershipOf(ctx context.Context, client *camunda.Client, cfg config.Camunda) (TenantMembership, error) {
	if cfg.Username == "" {
		return TenantMembership{}, nil
	}
	chk, err := client.CheckAuthorization(ctx, "READ", camunda.ResourceTenant)
	if ctx.Err() != nil {
		return TenantMembership{}, ctx.Err()
	}
	if err != nil || !chk.Authorized {
		return TenantMembership{}, nil //nolint:nilerr // without READ on tenants there is no membership to check: not an error of the check
	}
	listed, err := client.TenantIDs(ctx, camunda.TenantQuery{})
	if err != nil {
		return TenantMembership{}, err
	}
	member, err := client.TenantIDs(ctx, camunda.TenantQuery{UserMember: cfg.Username})
	if err != nil {
		return TenantMembership{}, err
	}
	return TenantMembership{Known: true, Listed: listed, Member: member}, nil
}

func orDiscard(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}
