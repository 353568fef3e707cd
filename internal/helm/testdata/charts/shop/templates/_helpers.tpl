{{/* The shop's own helpers; names and labels come from the common library. */}}

{{- define "shop.serviceAccountName" -}}
{{ include "common.fullname" . }}
{{- end -}}

{{/* The database's host, when the db subchart is on. */}}
{{- define "shop.dbHost" -}}
{{- if .Values.db.enabled -}}
{{ printf "%s-db" .Release.Name }}
{{- else -}}
{{ .Values.externalDatabase.host | default "localhost" }}
{{- end -}}
{{- end -}}
