package status

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"html/template"
	"log/slog"
	"net/http"
	"time"

	"github.com/workflow-exporter/workflow-exporter/internal/poll"
)

// Provider gives the page the sources' snapshots: it refreshes the sources
// the way a scrape does (a source collects only when its snapshot is older
// than its min_interval, and concurrent requests share one collection),
// waits at most until ctx ends, and returns the newest snapshots.
type Provider interface {
	StatusSnapshots(ctx context.Context) []Snapshot
}

// SetProvider is the Provider of the exporter: its poll set.
type SetProvider struct{ Set *poll.Set }

// StatusSnapshots implements Provider.
func (p SetProvider) StatusSnapshots(ctx context.Context) []Snapshot { return Snapshots(ctx, p.Set) }

// HandlerOptions configure the page's handlers.
type HandlerOptions struct {
	Options
	// Live, if set, returns the options of the running configuration per
	// request, in place of Options (a reload may change them).
	Live func() Options
	// Budget is how long a request may wait for collections (the scrape
	// budget: the page never waits longer than a scrape would).
	Budget func(*http.Request) time.Duration
	// Now is the exporter's clock; nil: time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

// Handlers serve GET /status (HTML) and GET /status.json.
type Handlers struct {
	p    Provider
	o    HandlerOptions
	page *template.Template
}

//go:embed page.html
var pageTemplate string

// NewHandlers returns the page's handlers.
func NewHandlers(p Provider, o HandlerOptions) *Handlers {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Handlers{p: p, o: o, page: template.Must(template.New("page").Funcs(funcs).Parse(pageTemplate))}
}

func (h *Handlers) report(r *http.Request) Report {
	ctx := r.Context()
	if h.o.Budget != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, h.o.Budget(r))
		defer cancel()
	}
	o := h.o.Options
	if h.o.Live != nil {
		o = h.o.Live()
	}
	return Build(h.p.StatusSnapshots(ctx), o, h.o.Now())
}

// security headers of both answers: nothing cached by proxies (the page
// names work in progress), no script, no style or image from elsewhere.
func noStore(w http.ResponseWriter) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	w.Header().Set("Referrer-Policy", "no-referrer")
}

// JSON serves the report as JSON (docs/status.md).
func (h *Handlers) JSON() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := json.MarshalIndent(h.report(r), "", "  ")
		if err != nil {
			h.o.Logger.Error("status page: encoding JSON", "err", err)
			http.Error(w, "cannot encode the status report", http.StatusInternalServerError)
			return
		}
		noStore(w)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(append(b, '\n'))
	})
}

// HTML serves the report as one page, rendered on the server.
func (h *Handlers) HTML() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b bytes.Buffer
		if err := h.Render(&b, h.report(r)); err != nil {
			h.o.Logger.Error("status page: rendering HTML", "err", err)
			http.Error(w, "cannot render the status page", http.StatusInternalServerError)
			return
		}
		noStore(w)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(b.Bytes())
	})
}

// Render writes the report as the HTML page.
func (h *Handlers) Render(w *bytes.Buffer, r Report) error {
	return h.page.Execute(w, newPageView(r))
}
