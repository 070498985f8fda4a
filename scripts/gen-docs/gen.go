package main

//go:generate go run . ../../docs/metrics.md ../../docs/database.md ../../docs/outbox-shapes.md
