package slo

// The example SLO file's rules and Sloth spec, rendered through the command
// users run; TestExampleFilesAreCurrent fails when they drift.
//go:generate go -C ../.. run ./cmd/exporter render slos --slos-config alerts/slos.example.yml --out alerts/slo-example-rules.yml
//go:generate go -C ../.. run ./cmd/exporter render slos --slos-config alerts/slos.example.yml --format sloth --out alerts/slo-example.sloth.yml
