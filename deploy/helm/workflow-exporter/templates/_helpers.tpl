{{- define "workflow-exporter.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "workflow-exporter.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if contains (include "workflow-exporter.name" .) .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name (include "workflow-exporter.name" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "workflow-exporter.selectorLabels" -}}
app.kubernetes.io/name: {{ include "workflow-exporter.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "workflow-exporter.labels" -}}
{{ include "workflow-exporter.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "workflow-exporter.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "workflow-exporter.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- /* The exporter's web config (--web.config.file): empty unless TLS or basic auth is on. */ -}}
{{- define "workflow-exporter.webConfig" -}}
{{- if .Values.web.tls.enabled }}
tls_server_config:
  cert_file: /etc/workflow-exporter/tls/tls.crt
  key_file: /etc/workflow-exporter/tls/tls.key
{{- end }}
{{- with .Values.web.basicAuthUsers }}
basic_auth_users:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{- /* A probe of values.yaml made to fit the web config: HTTPS with TLS on,
the port alone (tcpSocket) with basic auth on, since the exporter answers 401
without credentials. */ -}}
{{- define "workflow-exporter.probe" -}}
{{- $probe := deepCopy .probe -}}
{{- with $probe.httpGet -}}
{{- if $.root.Values.web.basicAuthUsers -}}
{{- $_ := set $probe "tcpSocket" (dict "port" .port) -}}
{{- $_ := unset $probe "httpGet" -}}
{{- else if $.root.Values.web.tls.enabled -}}
{{- $_ := set . "scheme" "HTTPS" -}}
{{- end -}}
{{- end -}}
{{- toYaml $probe -}}
{{- end -}}

{{- /* GOMEMLIMIT: goMemLimit as set; empty: 90% of resources.limits.memory
in MiB (Kubernetes quantities in Ki, Mi, Gi, K, M, G or bytes; a fraction or
another unit: set goMemLimit); nothing without a memory limit or with "off". */ -}}
{{- define "workflow-exporter.goMemLimit" -}}
{{- $set := .Values.goMemLimit | toString -}}
{{- if eq $set "off" -}}
{{- else if $set -}}
{{- $set -}}
{{- else -}}
{{- $limit := "" -}}
{{- with .Values.resources -}}{{- with .limits -}}{{- with .memory -}}{{- $limit = toString . -}}{{- end -}}{{- end -}}{{- end -}}
{{- if $limit -}}
{{- $digits := regexFind "^[0-9]+" $limit -}}
{{- $unit := trimPrefix $digits $limit -}}
{{- $scale := dict "" 1 "Ki" 1024 "Mi" 1048576 "Gi" 1073741824 "K" 1000 "M" 1000000 "G" 1000000000 -}}
{{- if or (not $digits) (not (hasKey $scale $unit)) -}}
{{- fail (printf "resources.limits.memory %q: the chart derives GOMEMLIMIT from whole numbers of Ki, Mi, Gi, K, M, G or bytes; set goMemLimit (e.g. 460MiB) or goMemLimit: off" $limit) -}}
{{- end -}}
{{- $bytes := mul (int64 $digits) (get $scale $unit) -}}
{{- printf "%dMiB" (div (mul $bytes 9) 10485760) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- /* The state's claim: the existing one, or the chart's. */ -}}
{{- define "workflow-exporter.stateClaim" -}}
{{- default (printf "%s-state" (include "workflow-exporter.fullname" .)) .Values.storage.persistentVolumeClaim.existingClaim -}}
{{- end -}}
