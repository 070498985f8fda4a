package dashboards

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// LiveResult is the outcome of one panel query against a live Prometheus.
type LiveResult struct {
	Query
	// Sent is the expression as sent, with the Grafana variables substituted.
	Sent string
	// Series is the number of series (or 1 for a scalar) the query returned.
	Series int
	// Err is set when Prometheus rejected the query or could not be asked.
	Err error
}

// OK reports whether the query returned at least one series.
func (r LiveResult) OK() bool { return r.Err == nil && r.Series > 0 }

func (r LiveResult) String() string {
	if r.Err != nil {
		return fmt.Sprintf("%s / %q / %s: %v (sent %s)", r.Dashboard, r.Panel, r.RefID, r.Err, r.Sent)
	}
	return fmt.Sprintf("%s / %q / %s: %d series (sent %s)", r.Dashboard, r.Panel, r.RefID, r.Series, r.Sent)
}

var (
	// ${name}, ${name:format} and $name, as Grafana interpolates them.
	grafanaVariable = regexp.MustCompile(`\$\{([A-Za-z0-9_]+)(?::[A-Za-z0-9_]+)?\}|\$([A-Za-z0-9_]+)`)
)

// intervalVariables are Grafana's interval macros, replaced by RateInterval.
var intervalVariables = map[string]bool{"__rate_interval": true, "__interval": true, "__range": true, "__auto": true}

// optionalLabels are the variables whose label a series may lack: tenant,
// which engines without camunda[].tenant_label do not serve. Substitute
// gives them the dashboards' All value ".*", which Grafana sends and which
// matches a missing label; ".+" would not.
var optionalLabels = map[string]bool{varTenant: true}

// Substitute replaces Grafana's variables in expr the way a dashboard with
// every variable at "All" would: interval macros ($__rate_interval,
// $__interval, $__range) by interval, every other variable by the regular
// expression ".+" (".*" for optionalLabels). The dashboards use variables
// only inside =~ matchers, so the result selects everything the exporter
// serves, and a label a query needs must be there. Numbered references
// ($1) are label_replace's capture groups and stay.
func Substitute(expr, interval string) string {
	return grafanaVariable.ReplaceAllStringFunc(expr, func(m string) string {
		sub := grafanaVariable.FindStringSubmatch(m)
		name := sub[1]
		if name == "" {
			name = sub[2]
		}
		if strings.Trim(name, "0123456789") == "" {
			// $1: a capture group in label_replace's replacement, no
			// variable; Grafana leaves names it does not know alone.
			return m
		}
		if intervalVariables[name] {
			return interval
		}
		if optionalLabels[name] {
			return ".*"
		}
		return ".+"
	})
}

// LiveCheck runs every query at the current time against the Prometheus
// HTTP API at baseURL (for example http://127.0.0.1:9090) with variables
// substituted (see Substitute; rateInterval "" means 1m) and returns the
// result of each query. Callers usually keep those that are not OK: a panel
// whose query returns nothing shows nothing at 3 a.m. The error is set only
// when baseURL is unusable; failures of single queries are in the results.
func LiveCheck(ctx context.Context, client *http.Client, baseURL, rateInterval string, queries []Query) ([]LiveResult, error) {
	if client == nil {
		client = http.DefaultClient
	}
	if rateInterval == "" {
		rateInterval = "1m"
	}
	u, err := url.Parse(strings.TrimSuffix(baseURL, "/") + "/api/v1/query")
	if err != nil {
		return nil, err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("live check: base URL %q is not http(s)", baseURL)
	}
	now := time.Now()
	out := make([]LiveResult, 0, len(queries))
	for _, q := range queries {
		r := LiveResult{Query: q, Sent: Substitute(q.Expr, rateInterval)}
		r.Series, r.Err = instantQuery(ctx, client, u.String(), r.Sent, now)
		out = append(out, r)
	}
	return out, nil
}

// Failed returns the results that are not OK.
func Failed(rs []LiveResult) []LiveResult {
	var out []LiveResult
	for _, r := range rs {
		if !r.OK() {
			out = append(out, r)
		}
	}
	return out
}

// apiResponse is the envelope of the Prometheus HTTP API.
type apiResponse struct {
	Status    string `json:"status"`
	ErrorType string `json:"errorType"`
	Error     string `json:"error"`
	Data      struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	} `json:"data"`
}

func instantQuery(ctx context.Context, client *http.Client, endpoint, expr string, at time.Time) (int, error) {
	form := url.Values{}
	form.Set("query", expr)
	form.Set("time", fmt.Sprintf("%.3f", float64(at.UnixMilli())/1000))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return 0, err
	}
	var ar apiResponse
	if err := json.Unmarshal(body, &ar); err != nil {
		return 0, fmt.Errorf("HTTP %d, undecodable response: %w", resp.StatusCode, err)
	}
	if ar.Status != "success" {
		return 0, fmt.Errorf("HTTP %d, %s: %s", resp.StatusCode, ar.ErrorType, ar.Error)
	}
	switch ar.Data.ResultType {
	case "vector", "matrix":
		var rs []json.RawMessage
		if err := json.Unmarshal(ar.Data.Result, &rs); err != nil {
			return 0, err
		}
		return len(rs), nil
	case "scalar", "string":
		return 1, nil
	default:
		return 0, errors.New("unknown result type " + ar.Data.ResultType)
	}
}
