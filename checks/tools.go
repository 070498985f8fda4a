//go:build tools

// Package checks is the root of the checks module; this file is never built
// (no build sets the tools tag). Its blank imports make `go mod tidy` keep
// every module these commands need in this go.mod and go.sum, so that
//
//	go build github.com/prometheus/prometheus/cmd/prometheus
//
// (and cmd/promtool, and alertmanager's cmd/amtool), run in checks/, builds
// them at the versions pinned here, the same versions the checks' tests use
// as libraries.
//
// Alertmanager's own server, cmd/alertmanager, is not among them: it cannot
// build from this go.mod. Prometheus v0.316.0 requires
// github.com/KimMachineGun/automemlimit v1.0.0, which dropped the
// memlimit.SetGoMemLimitWithOpts that every cmd/alertmanager up to v0.35.0
// calls, and from v0.32 on the command also embeds a web UI bundle
// (ui/app/dist) that its module does not ship.
package checks

import (
	_ "github.com/prometheus/alertmanager/cmd/amtool"
	_ "github.com/prometheus/prometheus/cmd/prometheus"
	_ "github.com/prometheus/prometheus/cmd/promtool"
)
