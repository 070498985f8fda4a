package pgsource

import (
	"net"
	"net/url"
	"strings"
	"unicode"

	"github.com/jackc/pgx/v5/pgconn"
)

// DefaultSSLMode is libpq's (and pgx's) sslmode when neither the DSN nor
// PGSSLMODE sets one: TLS if the server offers it, without verifying the
// server.
const DefaultSSLMode = "prefer"

// SSLMode is the sslmode a DSN connects with: its sslmode parameter, else
// the PGSSLMODE environment variable (getenv), else DefaultSSLMode;
// explicit says whether the DSN or the environment set it.
func SSLMode(dsn string, getenv func(string) string) (mode string, explicit bool) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		if u, err := url.Parse(dsn); err == nil {
			if m := u.Query().Get("sslmode"); m != "" {
				return m, true
			}
		}
	} else if m := keywordValues(dsn)["sslmode"]; m != "" {
		return m, true
	}
	if m := getenv("PGSSLMODE"); m != "" {
		return m, true
	}
	return DefaultSSLMode, false
}

// VerifiesServer reports whether an sslmode verifies the server it
// connects to: verify-ca (its certificate chain) and verify-full (the
// chain and the host name). disable, allow, prefer and require connect to
// whoever answers.
func VerifiesServer(mode string) bool { return mode == "verify-ca" || mode == "verify-full" }

// LocalOnly reports whether every host a DSN names is a Unix socket or a
// loopback address: no network lies between the exporter and the server
// (or a proxy on the same host, such as a cloud SQL proxy, encrypts the
// rest of the way), so TLS would protect nothing. A DSN that does not
// parse is not local: connecting reports it.
func LocalOnly(dsn string) bool {
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return false
	}
	hosts := []string{cfg.Host}
	for _, f := range cfg.Fallbacks {
		hosts = append(hosts, f.Host)
	}
	for _, h := range hosts {
		if !IsLocalHost(h) {
			return false
		}
	}
	return true
}

// IsLocalHost reports whether a host is a Unix socket directory, localhost
// or a loopback address.
func IsLocalHost(h string) bool {
	if strings.HasPrefix(h, "/") || strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(h, "[]"))
	return ip != nil && ip.IsLoopback()
}

// keywordValues parses a keyword/value DSN as libpq does: keyword = value
// pairs separated by white space, a value in single quotes may hold white
// space, and a backslash escapes the next character. What does not parse
// ends the parsing (connecting reports it).
func keywordValues(dsn string) map[string]string {
	out := map[string]string{}
	s := []rune(dsn)
	i := 0
	skip := func() {
		for i < len(s) && unicode.IsSpace(s[i]) {
			i++
		}
	}
	for {
		skip()
		start := i
		for i < len(s) && s[i] != '=' && !unicode.IsSpace(s[i]) {
			i++
		}
		key := string(s[start:i])
		skip()
		if key == "" || i >= len(s) || s[i] != '=' {
			return out
		}
		i++
		skip()
		var v strings.Builder
		if i < len(s) && s[i] == '\'' {
			i++
			for i < len(s) && s[i] != '\'' {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				v.WriteRune(s[i])
				i++
			}
			if i >= len(s) {
				return out // unterminated quote
			}
			i++
		} else {
			for i < len(s) && !unicode.IsSpace(s[i]) {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				v.WriteRune(s[i])
				i++
			}
		}
		out[key] = v.String()
	}
}
