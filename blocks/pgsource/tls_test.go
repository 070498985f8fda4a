package pgsource

import "testing"

func TestSSLMode(t *testing.T) {
	noEnv := func(string) string { return "" }
	for _, tc := range []struct {
		dsn, env       string
		mode           string
		explicit, safe bool
	}{
		{"postgres://u@db.example:5432/orders", "", "prefer", false, false},
		{"postgres://u@db.example/orders?sslmode=require", "", "require", true, false},
		{"postgresql://u@db.example/orders?connect_timeout=5&sslmode=verify-full&sslrootcert=/ca.pem", "", "verify-full", true, true},
		{"postgres://u@db.example/orders?sslmode=verify-ca", "", "verify-ca", true, true},
		{"postgres://u@db.example/orders?sslmode=disable", "verify-full", "disable", true, false},
		{"postgres://u@db.example/orders", "verify-full", "verify-full", true, true},
		{"host=db.example dbname=orders sslmode=allow", "", "allow", true, false},
		{"host=db.example dbname=orders sslmode = 'verify-full'", "", "verify-full", true, true},
		{"host=db.example dbname=orders", "", "prefer", false, false},
		{"host=db.example password='x sslmode=verify-full' dbname=orders", "", "prefer", false, false},
		{`host=db.example password='it\'s' sslmode=require`, "", "require", true, false},
		{`host=db.example password=a\ sslmode=verify-full`, "", "prefer", false, false},
	} {
		getenv := noEnv
		if tc.env != "" {
			getenv = func(k string) string {
				if k == "PGSSLMODE" {
					return tc.env
				}
				return ""
			}
		}
		mode, explicit := SSLMode(tc.dsn, getenv)
		if mode != tc.mode || explicit != tc.explicit || VerifiesServer(mode) != tc.safe {
			t.Errorf("SSLMode(%q, PGSSLMODE=%q) = %q, %v (verifies %v); want %q, %v (verifies %v)", tc.dsn, tc.env, mode, explicit, VerifiesServer(mode), tc.mode, tc.explicit, tc.safe)
		}
	}
}

func TestLocalOnly(t *testing.T) {
	for dsn, want := range map[string]bool{
		"postgres://u@127.0.0.1:5432/orders":            true,
		"postgres://u@localhost/orders":                 true,
		"postgres://u@[::1]:5432/orders":                true,
		"host=/var/run/postgresql dbname=orders":        true,
		"postgres://u@db.example/orders":                false,
		"postgres://u@10.0.0.5/orders":                  false,
		"postgres://u@127.0.0.1:5432,db.example:5432/o": false,
		"host=localhost,127.0.0.2 dbname=orders":        true,
		"postgres://u@db.example/orders?host=/tmp":      true,
		"not a dsn = = '":                               false,
	} {
		if got := LocalOnly(dsn); got != want {
			t.Errorf("LocalOnly(%q) = %v, want %v", dsn, got, want)
		}
	}
}
