package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// Handler is the control endpoint (bind it to 127.0.0.1 only):
//
//	GET    /                       status (lanes, active faults, counts)
//	GET    /faults                 the fault catalogue
//	POST   /faults/{fault}?target=T   inject (T: a lane, or a database for database-down)
//	DELETE /faults/{fault}?target=T   clear
//
// An unknown fault or target is 400 with the valid names; a fault that
// cannot be injected now (no proxy for it, the engine not answering) is
// 409 with the reason.
func (s *Simulator) Handler() http.Handler {
	mux := http.NewServeMux()
	reply := func(w http.ResponseWriter, v any) {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(v)
	}
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { reply(w, s.Status()) })
	mux.HandleFunc("GET /faults", func(w http.ResponseWriter, r *http.Request) { reply(w, Faults()) })
	toggle := func(on bool) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
			defer cancel()
			err := s.toggle(ctx, r.PathValue("fault"), r.URL.Query().Get("target"), on)
			switch {
			case err == nil:
				w.WriteHeader(http.StatusNoContent)
			case errors.Is(err, ErrCannotInject):
				http.Error(w, err.Error(), http.StatusConflict)
			default:
				http.Error(w, err.Error(), http.StatusBadRequest)
			}
		}
	}
	mux.HandleFunc("POST /faults/{fault}", toggle(true))
	mux.HandleFunc("DELETE /faults/{fault}", toggle(false))
	return mux
}

// hostPort is the host:port a DSN connects to.
func hostPort(dsn string) (string, error) {
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return "", errors.New("the DSN cannot be parsed")
	}
	if strings.HasPrefix(cfg.Host, "/") {
		return "", fmt.Errorf("the DSN connects through a Unix socket (%s); a proxy needs host and port", cfg.Host)
	}
	return fmt.Sprintf("%s:%d", cfg.Host, cfg.Port), nil
}
