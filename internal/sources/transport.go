package sources

import (
	"fmt"
	"log/slog"
	"net/url"
	"os"

	"github.com/workflow-exporter/workflow-exporter/blocks/pgsource"
	"github.com/workflow-exporter/workflow-exporter/config"
)

// Warning is something about a source's configuration that works but that
// an operator should change: said once when the source is built (at start,
// and when a reload builds it anew) and by the check command.
type Warning struct {
	// Text names the source, the config key, what is wrong and the fix.
	Text string
	// Attrs are the log record's attributes.
	Attrs []any
}

// log writes the warning once.
func (w Warning) log(l *slog.Logger) { l.Warn(w.Text, w.Attrs...) }

// dsnKey is the config key that holds a connection's DSN.
func dsnKey(key string, c config.Connection) string {
	switch {
	case c.DSNFile != "":
		return key + ".dsn_file"
	case c.DSNEnv != "":
		return key + ".dsn_env"
	}
	return key + ".dsn"
}

// sslmodeWarning warns about a DSN whose sslmode does not verify the
// server (disable, allow, prefer, require, or none: libpq's default
// prefer): whoever answers at the address gets the exporter's password and
// serves it whatever it likes. A DSN that reaches its server through a
// Unix socket or loopback only is not warned about: no network lies in
// between. what is "database" or "engine database", name the source's.
func sslmodeWarning(what, name, key string, c config.Connection) []Warning {
	mode, explicit := pgsource.SSLMode(c.ResolvedDSN, os.Getenv)
	if pgsource.VerifiesServer(mode) || pgsource.LocalOnly(c.ResolvedDSN) {
		return nil
	}
	set := ""
	if !explicit {
		set = " (not set: libpq's default)"
	}
	k := dsnKey(key, c)
	return []Warning{{
		Text:  fmt.Sprintf("%s %s: the DSN (%s) connects with sslmode=%s%s, which does not verify the server: anything on the network path can pose as the database, read the exporter's queries and take its password; set sslmode=verify-full (with sslrootcert, the server's CA)", what, name, k, mode, set),
		Attrs: []any{"source", what, "name", name, "key", k, "sslmode", mode},
	}}
}

// urlWarning warns about an engine reached over plain HTTP beyond the
// host: the exporter cannot tell the engine from an impostor, and the
// user's password (basic auth) travels in clear. The same reasoning as a
// DSN's sslmode, so the same treatment.
func urlWarning(name, key string, e config.Camunda) []Warning {
	u, err := url.Parse(e.URL)
	if err != nil || u.Scheme != "http" || pgsource.IsLocalHost(u.Hostname()) {
		return nil
	}
	creds := "the engine's answers (task ids, workers, business keys) travel in clear"
	if e.Username != "" {
		creds = fmt.Sprintf("the password of user %q and the engine's answers travel in clear", e.Username)
	}
	return []Warning{{
		Text:  fmt.Sprintf("engine %s: the URL (%s.url) is plain HTTP: the exporter cannot tell the engine from an impostor, and %s; use https:// (with %s.tls.ca_file for a private CA)", name, key, creds, key),
		Attrs: []any{"source", "engine", "name", name, "key", key + ".url", "scheme", u.Scheme},
	}}
}

// DatabaseWarnings are the warnings about how a worker database is reached.
func DatabaseWarnings(d config.Database, key string) []Warning {
	return sslmodeWarning("database", d.Name, key, d.Connection)
}

// EngineWarnings are the warnings about how an engine is reached: its URL
// and, in engine-database mode, its database's DSN.
func EngineWarnings(e config.Camunda, key string) []Warning {
	ws := urlWarning(e.Name, key, e)
	if e.Database != nil {
		ws = append(ws, sslmodeWarning("engine database", e.Name, key+".database", e.Database.Connection)...)
	}
	return ws
}
