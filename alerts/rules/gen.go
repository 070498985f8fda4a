package rules

//go:generate go run ../cmd/genalerts -config ../config.yml -out ../workflow-alerts.yml
