{{/* Chart name. */}}
{{- define "repot-operator.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name: the release name, with the chart name unless it contains it. */}}
{{- define "repot-operator.fullname" -}}
{{- if contains .Chart.Name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{/* Common labels of every object. */}}
{{- define "repot-operator.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "repot-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* Selector labels of the manager pods. */}}
{{- define "repot-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "repot-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: manager
{{- end }}

{{/* ServiceAccount name. */}}
{{- define "repot-operator.serviceAccountName" -}}
{{- default (include "repot-operator.fullname" .) .Values.serviceAccount.name }}
{{- end }}

{{/* The image reference: repository@digest when image.digest is set, else repository:tag. */}}
{{- define "repot-operator.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/* The one namespace the operator watches, or "" for every namespace
(clusterWide). By default the release's namespace. */}}
{{- define "repot-operator.watchNamespace" -}}
{{- if .Values.clusterWide }}
{{- if .Values.watchNamespace }}{{ fail "watchNamespace and clusterWide=true contradict each other: set one" }}{{ end }}
{{- else }}
{{- default .Release.Namespace .Values.watchNamespace }}
{{- end }}
{{- end }}
