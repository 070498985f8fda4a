// Package alertrouting holds the test-only checks of the alerting bundle: the
// Alertmanager routing and inhibition tests for deploy/alertmanager.yml, run
// against every alert of the rule files in alerts/, and the checks that the
// rule files hold exactly the alerts of rules.Alerts() (the main module's one
// list of alert names, severities and runbooks) and that the promtool tests in
// alerts/tests cover every alert. It lives in the checks module (checks/) so
// that the alertmanager dependency tree stays out of the exporter's go.mod;
// the rule generator itself is in the exporter's module (alerts/rules, run
// through `workflow-exporter render rules`).
package alertrouting
