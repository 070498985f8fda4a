module github.com/workflow-exporter/workflow-exporter/tools/alertrouting

go 1.26.8

replace github.com/workflow-exporter/workflow-exporter => ../..

require (
	github.com/prometheus/common v0.73.1
	gopkg.in/yaml.v3 v3.0.1
)

require (
	github.com/kr/text v0.2.0 // indirect
	github.com/prometheus/client_model v0.6.3 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
	gopkg.in/check.v1 v1.0.0-20201130134442-10cb98267c6c // indirect
)
