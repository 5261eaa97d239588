{{/* ------------------------------------------------------------------------------------------
Names and labels
------------------------------------------------------------------------------------------ */}}

{{- define "scheduler-extender.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "scheduler-extender.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Object names of the second scheduler: <fullname>-scheduler (kept under 63 characters). */}}
{{- define "scheduler-extender.schedulerFullname" -}}
{{- printf "%s-scheduler" (include "scheduler-extender.fullname" . | trunc 53 | trimSuffix "-") -}}
{{- end -}}

{{- define "scheduler-extender.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels common to every object; `component` is set per object. */}}
{{- define "scheduler-extender.labels" -}}
helm.sh/chart: {{ include "scheduler-extender.chart" . }}
app.kubernetes.io/name: {{ include "scheduler-extender.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/part-of: scheduler-extender
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* Selector labels of the daemon's pods. */}}
{{- define "scheduler-extender.selectorLabels" -}}
app.kubernetes.io/name: {{ include "scheduler-extender.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: extender
{{- end -}}

{{/* Selector labels of the second scheduler's pods. */}}
{{- define "scheduler-extender.schedulerSelectorLabels" -}}
app.kubernetes.io/name: {{ include "scheduler-extender.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: scheduler
{{- end -}}

{{- define "scheduler-extender.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "scheduler-extender.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "scheduler-extender.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion | toString) -}}
{{- end -}}

{{/* ------------------------------------------------------------------------------------------
Versions
------------------------------------------------------------------------------------------ */}}

{{/* The cluster's version as MAJOR.MINOR.PATCH: "v1.27.3-eks-4f4795d" and "v1.28.2+k3s1" give
     "1.27.3" and "1.28.2" (with `helm template`, the --kube-version given). */}}
{{- define "scheduler-extender.kubeVersion" -}}
{{- $v := regexFind "^v?[0-9]+\\.[0-9]+\\.[0-9]+" .Capabilities.KubeVersion.Version -}}
{{- if not $v -}}
{{- fail (printf "cannot read a version from the cluster's %q" .Capabilities.KubeVersion.Version) -}}
{{- end -}}
{{- trimPrefix "v" $v -}}
{{- end -}}

{{/* The second scheduler's image tag: pinned, or the cluster's own version. */}}
{{- define "scheduler-extender.schedulerImageTag" -}}
{{- .Values.secondScheduler.image.tag | default (printf "v%s" (include "scheduler-extender.kubeVersion" .)) | toString -}}
{{- end -}}

{{/* The version of kube-scheduler that will read the configuration: from a pinned image tag
     (v1.29.4, 1.29, v1.29.4-custom) when it names one, else the cluster's. */}}
{{- define "scheduler-extender.schedulerVersion" -}}
{{- $fromTag := regexFind "^v?[0-9]+\\.[0-9]+(\\.[0-9]+)?" (.Values.secondScheduler.image.tag | default "" | toString) -}}
{{- if $fromTag -}}
{{- trimPrefix "v" $fromTag -}}
{{- else -}}
{{- include "scheduler-extender.kubeVersion" . -}}
{{- end -}}
{{- end -}}

{{/* kubescheduler.config.k8s.io version that kube-scheduler of that version reads:
       v1 (1.25+), v1beta3 (1.23, 1.24; removed in 1.29), v1beta2 (1.22; removed in 1.28),
       v1beta1 (1.19-1.21; removed in 1.23). */}}
{{- define "scheduler-extender.schedulerConfigApiVersion" -}}
{{- $v := include "scheduler-extender.schedulerVersion" . -}}
{{- if .Values.secondScheduler.configApiVersion -}}
{{- .Values.secondScheduler.configApiVersion -}}
{{- else if semverCompare ">=1.25.0-0" $v -}}
v1
{{- else if semverCompare ">=1.23.0-0" $v -}}
v1beta3
{{- else if semverCompare ">=1.22.0-0" $v -}}
v1beta2
{{- else if semverCompare ">=1.19.0-0" $v -}}
v1beta1
{{- else -}}
{{- fail (printf "kube-scheduler %s is older than 1.19, which has no KubeSchedulerConfiguration this chart can write" $v) -}}
{{- end -}}
{{- end -}}

{{/* policy/v1 PodDisruptionBudget from 1.21 on (v1beta1 is gone in 1.25). Both the served group
     and the version are consulted, so `helm template --kube-version 1.20.2` gets v1beta1 too. */}}
{{- define "scheduler-extender.pdbApiVersion" -}}
{{- if and (.Capabilities.APIVersions.Has "policy/v1") (semverCompare ">=1.21.0-0" (include "scheduler-extender.kubeVersion" .)) -}}
policy/v1
{{- else -}}
policy/v1beta1
{{- end -}}
{{- end -}}

{{/* ------------------------------------------------------------------------------------------
TLS
------------------------------------------------------------------------------------------ */}}

{{- define "scheduler-extender.tlsSecretName" -}}
{{- .Values.tls.existingSecret | default (printf "%s-tls" (include "scheduler-extender.fullname" .)) -}}
{{- end -}}

{{- define "scheduler-extender.schedulerTlsSecretName" -}}
{{- .Values.secondScheduler.tls.existingSecret | default (printf "%s-tls" (include "scheduler-extender.schedulerFullname" .)) -}}
{{- end -}}

{{/* Where the daemon's secret is mounted, and where the second scheduler's is. */}}
{{- define "scheduler-extender.tlsDir" -}}/etc/scheduler-extender/tls{{- end -}}
{{- define "scheduler-extender.schedulerTlsDir" -}}/etc/kubernetes/scheduler-extender-tls{{- end -}}

{{- define "scheduler-extender.serviceHost" -}}
{{- printf "%s.%s.svc" (include "scheduler-extender.fullname" .) .Release.Namespace -}}
{{- end -}}

{{/* "true" when the NetworkPolicy is rendered: enabled true, or auto with the second scheduler. */}}
{{- define "scheduler-extender.networkPolicyEnabled" -}}
{{- $e := .Values.networkPolicy.enabled -}}
{{- if or (eq (toString $e) "true") (and (eq (toString $e) "auto") .Values.secondScheduler.enabled) -}}true{{- end -}}
{{- end -}}

{{/* "true" when the chart generates the TLS material: tls.enabled with neither
tls.existingSecret nor an inline tls.cert. */}}
{{- define "scheduler-extender.tlsGenerated" -}}
{{- if and .Values.tls.enabled (not .Values.tls.existingSecret) (not .Values.tls.cert) -}}true{{- end -}}
{{- end -}}

{{/* The subject CN of the generated client certificate of the scheduler(s). */}}
{{- define "scheduler-extender.generatedClientName" -}}
{{- include "scheduler-extender.schedulerFullname" . -}}
{{- end -}}

{{/* The generated secrets already in the cluster, when both are there, made by this chart
(annotation scheduler-extender.io/generated) and complete: reused on upgrade so that certificates
stay the same. Empty dict otherwise (first install, `helm template`, or a secret removed to rotate). */}}
{{- define "scheduler-extender.generatedTlsInCluster" -}}
{{- $server := lookup "v1" "Secret" .Release.Namespace (include "scheduler-extender.tlsSecretName" .) | default dict -}}
{{- $client := lookup "v1" "Secret" .Release.Namespace (printf "%s-tls" (include "scheduler-extender.schedulerFullname" .)) | default dict -}}
{{- $ok := true -}}
{{- range $secret := list $server $client -}}
{{- $annotations := ($secret.metadata | default dict).annotations | default dict -}}
{{- if ne (index $annotations "scheduler-extender.io/generated" | default "") "true" -}}{{- $ok = false -}}{{- end -}}
{{- $data := $secret.data | default dict -}}
{{- range $key := list "ca.crt" "tls.crt" "tls.key" -}}
{{- if not (index $data $key) -}}{{- $ok = false -}}{{- end -}}
{{- end -}}
{{- end -}}
{{- $stamp := index (($client.metadata | default dict).annotations | default dict) "scheduler-extender.io/generation" | default "" -}}
{{- if not $stamp -}}{{- $ok = false -}}{{- end -}}
{{- if $ok -}}
{{- dict "server" $server.data "client" $client.data "stamp" $stamp | toJson -}}
{{- else -}}
{}
{{- end -}}
{{- end -}}

{{/* Which generation of the generated material this release uses: the one recorded on the
secrets in the cluster when they are reused, else the release revision that makes new ones. The
secrets carry it (annotation scheduler-extender.io/generation) and the pods that read the
material at start carry it as checksum/tls, so they roll exactly when new material is made. */}}
{{- define "scheduler-extender.generatedTlsStamp" -}}
{{- $existing := include "scheduler-extender.generatedTlsInCluster" . | fromJson -}}
{{- if $existing -}}
{{- $existing.stamp -}}
{{- else -}}
{{- printf "generated-in-revision-%d" (int .Release.Revision) | sha256sum -}}
{{- end -}}
{{- end -}}

{{- define "scheduler-extender.validateTls" -}}
{{- if .Values.tls.enabled -}}
{{- if and (not .Values.tls.existingSecret) (or .Values.tls.cert .Values.tls.key) -}}
{{- if or (not .Values.tls.cert) (not .Values.tls.key) -}}
{{- fail "tls.enabled with inline PEM needs both tls.cert and tls.key (or neither, and the chart generates them; or tls.existingSecret)" -}}
{{- end -}}
{{- if and .Values.tls.requireClientCert (not .Values.tls.ca) -}}
{{- fail "tls.requireClientCert needs tls.ca (the CA that signs the schedulers' client certificates), or tls.existingSecret with ca.crt" -}}
{{- end -}}
{{- end -}}
{{- if and .Values.secondScheduler.enabled (not .Values.secondScheduler.tls.existingSecret) (not (include "scheduler-extender.tlsGenerated" .)) -}}
{{- if and .Values.tls.requireClientCert (or (not .Values.secondScheduler.tls.cert) (not .Values.secondScheduler.tls.key)) -}}
{{- fail "tls.enabled with tls.requireClientCert: the second scheduler needs a client certificate: secondScheduler.tls.existingSecret, or secondScheduler.tls.cert and secondScheduler.tls.key" -}}
{{- end -}}
{{- if not (or .Values.secondScheduler.tls.ca .Values.tls.ca) -}}
{{- fail "tls.enabled: the second scheduler needs the CA of the daemon's serving certificate: secondScheduler.tls.existingSecret, secondScheduler.tls.ca or tls.ca" -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* ------------------------------------------------------------------------------------------
High availability: leader election on a Lease (config.ha)
------------------------------------------------------------------------------------------ */}}

{{/* "true" when the daemon elects a leader: config.ha.enabled (the daemon's default is on). */}}
{{- define "scheduler-extender.haEnabled" -}}
{{- $ha := (.Values.config | default dict).ha | default dict -}}
{{- if or (not (hasKey $ha "enabled")) (eq (toString $ha.enabled) "true") -}}true{{- end -}}
{{- end -}}

{{/* The Lease's name: config.ha.lease_name, or the full name (one Lease per release). */}}
{{- define "scheduler-extender.leaseName" -}}
{{- $ha := (.Values.config | default dict).ha | default dict -}}
{{- $ha.lease_name | default (include "scheduler-extender.fullname" .) | toString -}}
{{- end -}}

{{/* The Lease's namespace: config.ha.lease_namespace, or the release's (the daemon reads
     POD_NAMESPACE, which the pod spec sets from the downward API). */}}
{{- define "scheduler-extender.leaseNamespace" -}}
{{- $ha := (.Values.config | default dict).ha | default dict -}}
{{- $ha.lease_namespace | default .Release.Namespace | toString -}}
{{- end -}}

{{/* The label the leader puts on its own pod; empty: none. */}}
{{- define "scheduler-extender.leaderLabel" -}}
{{- $ha := (.Values.config | default dict).ha | default dict -}}
{{- if hasKey $ha "leader_label" -}}
{{- $ha.leader_label | default "" | toString -}}
{{- else -}}
scheduler-extender.io/leader
{{- end -}}
{{- end -}}

{{/* The leader-election Role's rules for the Lease named by the argument. */}}
{{- define "scheduler-extender.leaseRules" -}}
# The one Lease, by name; create cannot be limited to a name (the name is not known before the
# object exists), so it is granted for the namespace.
- apiGroups: ["coordination.k8s.io"]
  resources: ["leases"]
  verbs: ["get", "update"]
  resourceNames: [{{ . | quote }}]
- apiGroups: ["coordination.k8s.io"]
  resources: ["leases"]
  verbs: ["create"]
{{- end -}}

{{/* Replicas and leader election must agree: several replicas only with a leader, and the
     leader-only Service needs the leader's label. */}}
{{- define "scheduler-extender.validateHa" -}}
{{- $replicas := int .Values.replicaCount -}}
{{- if gt $replicas 1 -}}
{{- if not (include "scheduler-extender.haEnabled" .) -}}
{{- fail (printf "replicaCount %d needs config.ha.enabled: without leader election each replica keeps its own in-memory ledger of binds in flight and decides verbs itself, so two replicas would hand out the same GPUs. Set config.ha.enabled=true, or replicaCount=1" $replicas) -}}
{{- end -}}
{{- if not (include "scheduler-extender.leaderLabel" .) -}}
{{- fail (printf "replicaCount %d needs config.ha.leader_label: the scheduler-facing Service selects the leader by that label, and without it would also send verbs to standbys, which refuse them" $replicas) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* ------------------------------------------------------------------------------------------
The daemon's configuration file
------------------------------------------------------------------------------------------ */}}

{{- define "scheduler-extender.pathPrefix" -}}
{{- $cfg := .Values.config | default dict -}}
{{- $server := $cfg.server | default dict -}}
{{- $p := "/scheduler" -}}
{{- if hasKey $server "path_prefix" -}}{{- $p = $server.path_prefix | default "" | toString -}}{{- end -}}
{{- trimSuffix "/" $p -}}
{{- end -}}

{{- define "scheduler-extender.extenderURL" -}}
{{- printf "%s://%s:%v%s" (ternary "https" "http" .Values.tls.enabled) (include "scheduler-extender.serviceHost" .) .Values.service.port (include "scheduler-extender.pathPrefix" .) -}}
{{- end -}}

{{/* The daemon's YAML configuration: `config` with the keys the pod spec decides forced. */}}
{{- define "scheduler-extender.daemonConfig" -}}
{{- $cfg := deepCopy (.Values.config | default dict) -}}
{{- range $forced := list "mode" "admin" "standalone" -}}
{{- if hasKey $cfg $forced -}}
{{- fail (printf "config.%s is set by the chart and may not be given in values" $forced) -}}
{{- end -}}
{{- end -}}
{{- $server := $cfg.server | default dict -}}
{{- range $forced := list "listen" "tls" -}}
{{- if hasKey $server $forced -}}
{{- fail (printf "config.server.%s is set by the chart and may not be given in values" $forced) -}}
{{- end -}}
{{- end -}}
{{- $tls := dict "cert_file" "" "key_file" "" "client_ca_file" "" "client_names" list -}}
{{- if .Values.tls.enabled -}}
{{- $dir := include "scheduler-extender.tlsDir" . -}}
{{- $_ := set $tls "cert_file" (printf "%s/tls.crt" $dir) -}}
{{- $_ := set $tls "key_file" (printf "%s/tls.key" $dir) -}}
{{- if .Values.tls.requireClientCert -}}
{{- $_ := set $tls "client_ca_file" (printf "%s/ca.crt" $dir) -}}
{{- $names := .Values.tls.clientNames | default list -}}
{{- if and (include "scheduler-extender.tlsGenerated" .) $names -}}
{{- $names = append $names (include "scheduler-extender.generatedClientName" .) | uniq -}}
{{- else if include "scheduler-extender.tlsGenerated" . -}}
{{- $names = list (include "scheduler-extender.generatedClientName" .) -}}
{{- end -}}
{{- $_ := set $tls "client_names" $names -}}
{{- end -}}
{{- end -}}
{{- $_ := set $server "listen" "0.0.0.0:8888" -}}
{{- $_ := set $server "tls" $tls -}}
{{- $_ := set $cfg "server" $server -}}
{{- $_ := set $cfg "admin" (dict "listen" "0.0.0.0:8889") -}}
{{- $kube := $cfg.kubernetes | default dict -}}
{{- if hasKey $kube "kubeconfig" -}}
{{- fail "config.kubernetes.kubeconfig is set by the chart (in-cluster service account) and may not be given in values" -}}
{{- end -}}
{{- $_ := set $kube "kubeconfig" "" -}}
{{- $names := $kube.scheduler_names | default (list "default-scheduler") -}}
{{- if and .Values.secondScheduler.enabled (not (has .Values.secondScheduler.schedulerName $names)) -}}
{{- $names = append $names .Values.secondScheduler.schedulerName -}}
{{- end -}}
{{- $_ := set $kube "scheduler_names" $names -}}
{{- $_ := set $cfg "kubernetes" $kube -}}
{{- if not .Values.rbac.csiStorageCapacity -}}
{{- $storage := $cfg.storage | default dict -}}
{{- $_ := set $storage "capacity_tracking" false -}}
{{- $_ := set $cfg "storage" $storage -}}
{{- end -}}
{{- $scoring := $cfg.scoring | default dict -}}
{{- $byRoute := .Values.placementByRoute | default dict -}}
{{- $route := ternary $byRoute.everyPod $byRoute.gpuPods (eq (include "scheduler-extender.everyPod" .) "true") | default dict -}}
{{- range $key, $value := $route -}}
{{- if not (hasKey $scoring $key) -}}{{- $_ := set $scoring $key $value -}}{{- end -}}
{{- end -}}
{{- $_ := set $cfg "scoring" $scoring -}}
{{- $ha := $cfg.ha | default dict -}}
{{- $_ := set $ha "lease_name" (include "scheduler-extender.leaseName" .) -}}
{{- $_ := set $cfg "ha" $ha -}}
# Rendered by the scheduler-extender chart from the `config` values; every key is documented in
# the daemon's examples/config.yaml. mode, server.listen, server.tls, admin.listen and
# kubernetes.kubeconfig follow the pod spec and cannot be set in values; ha.lease_name defaults to
# the release's full name, and an empty ha.lease_namespace means the pod's (POD_NAMESPACE).
mode: kubernetes
{{ toYaml $cfg }}
{{- end -}}

{{/* ------------------------------------------------------------------------------------------
The second scheduler's KubeSchedulerConfiguration
------------------------------------------------------------------------------------------ */}}

{{- define "scheduler-extender.schedulerConfig" -}}
{{- $api := include "scheduler-extender.schedulerConfigApiVersion" . -}}
{{- $ext := .Values.extender -}}
{{- $ss := .Values.secondScheduler -}}
{{- if and $ext.prioritizeVerb (lt (int64 $ext.weight) 1) -}}
{{- fail "extender.weight must be at least 1 when extender.prioritizeVerb is set" -}}
{{- end -}}
{{- if and (include "scheduler-extender.everyPod" .) (lt (int64 $ext.weight) 1) -}}
{{- fail "extender.weight must be at least 1 when extender.everyPod.enabled is set" -}}
{{- end -}}
# KubeSchedulerConfiguration of the second scheduler "{{ $ss.schedulerName }}" (kube-scheduler
# {{ include "scheduler-extender.schedulerImageTag" . }}), rendered by the scheduler-extender chart.
apiVersion: kubescheduler.config.k8s.io/{{ $api }}
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: {{ $ss.leaderElection.enabled }}
  resourceLock: leases
  resourceName: {{ $ss.schedulerName }}
  resourceNamespace: {{ .Release.Namespace }}
{{- if or (eq $api "v1beta1") (eq $api "v1beta2") }}
# These versions also serve plain-HTTP healthz/metrics (default 0.0.0.0:10251): keep that on the
# pod's loopback. Probes and metrics use the authenticated port 10259.
healthzBindAddress: 127.0.0.1:10251
metricsBindAddress: 127.0.0.1:10251
{{- end }}
{{- if gt (int64 $ss.percentageOfNodesToScore) 0 }}
percentageOfNodesToScore: {{ int64 $ss.percentageOfNodesToScore }}
{{- end }}
profiles:
  - schedulerName: {{ $ss.schedulerName }}
{{- if and (include "scheduler-extender.everyPod" .) (not $ext.managedResources) }}
{{- fail "extender.everyPod.enabled needs extender.managedResources: without them the first entry already sees every pod" -}}
{{- end }}
{{- if and $ext.bindVerb (not $ext.filterVerb) }}
{{- fail "extender.bindVerb needs extender.filterVerb: the daemon binds a pod only to a node that passed its /filter" -}}
{{- end }}
extenders:
  - urlPrefix: {{ include "scheduler-extender.extenderURL" . | quote }}
    {{- with $ext.filterVerb }}
    filterVerb: {{ . }}
    {{- end }}
    {{- with $ext.prioritizeVerb }}
    prioritizeVerb: {{ . }}
    {{- end }}
    {{- with $ext.bindVerb }}
    bindVerb: {{ . }}
    {{- end }}
    {{- with $ext.preemptVerb }}
    preemptVerb: {{ . }}
    {{- end }}
    weight: {{ int64 $ext.weight }}
    nodeCacheCapable: {{ $ext.nodeCacheCapable }}
    httpTimeout: {{ $ext.httpTimeout }}
    ignorable: {{ $ext.ignorable }}
    {{- if $ext.managedResources }}
    managedResources:
      {{- range $ext.managedResources }}
      - name: {{ .name }}
        ignoredByScheduler: {{ .ignoredByScheduler | default false }}
      {{- end }}
    {{- end }}
    {{- with include "scheduler-extender.schedulerExtenderTls" . }}
    {{- . | nindent 4 }}
    {{- end }}
  {{- if include "scheduler-extender.everyPod" . }}
  {{- if include "scheduler-extender.everyPodRelay" . }}
  # Through the relay sidecar (scheduler-extender-relay) on the pod's loopback: while the daemon
  # fails or cannot be reached, it answers at once instead of each pod waiting for httpTimeout.
  - urlPrefix: {{ include "scheduler-extender.relayURL" . | quote }}
  {{- else }}
  - urlPrefix: {{ include "scheduler-extender.extenderURL" . | quote }}
  {{- end }}
    filterVerb: filter-unmanaged
    prioritizeVerb: prioritize-unmanaged
    weight: {{ int64 $ext.weight }}
    nodeCacheCapable: {{ $ext.nodeCacheCapable }}
    httpTimeout: {{ $ext.everyPod.httpTimeout }}
    ignorable: true
    {{- if not (include "scheduler-extender.everyPodRelay" .) }}
    {{- with include "scheduler-extender.schedulerExtenderTls" . }}
    {{- . | nindent 4 }}
    {{- end }}
    {{- end }}
  {{- end }}
{{- end -}}

{{/* "true" when the every-pod extender entry (extender.everyPod.enabled) is on, else "". */}}
{{- define "scheduler-extender.everyPod" -}}
{{- if (.Values.extender.everyPod | default dict).enabled -}}true{{- end -}}
{{- end -}}

{{/* extender.everyPod.relay with its defaults filled in. */}}
{{- define "scheduler-extender.relayValues" -}}
{{- $r := deepCopy ((.Values.extender.everyPod | default dict).relay | default dict) -}}
{{- if not (hasKey $r "enabled") -}}{{- $_ := set $r "enabled" true -}}{{- end -}}
{{- $_ := set $r "port" ($r.port | default 8890) -}}
{{- $_ := set $r "upstreamTimeout" ($r.upstreamTimeout | default "150ms") -}}
{{- $_ := set $r "openFor" ($r.openFor | default "5s") -}}
{{- toYaml $r -}}
{{- end -}}

{{/* "true" when the every-pod entry goes through the relay sidecar of the chart's second
scheduler (everyPod.enabled, everyPod.relay.enabled and secondScheduler.enabled), else "". */}}
{{- define "scheduler-extender.everyPodRelay" -}}
{{- $r := include "scheduler-extender.relayValues" . | fromYaml -}}
{{- if and (include "scheduler-extender.everyPod" .) $r.enabled .Values.secondScheduler.enabled -}}true{{- end -}}
{{- end -}}

{{/* The relay's loopback address as the every-pod entry's urlPrefix (with the daemon's path prefix). */}}
{{- define "scheduler-extender.relayURL" -}}
{{- $r := include "scheduler-extender.relayValues" . | fromYaml -}}
{{- printf "http://127.0.0.1:%v%s" (int64 $r.port) (include "scheduler-extender.pathPrefix" .) -}}
{{- end -}}

{{/* The daemon's Service as the relay's --upstream: scheme, host and port (the request's path,
which carries the path prefix, is appended by the relay). */}}
{{- define "scheduler-extender.relayUpstream" -}}
{{- printf "%s://%s:%v" (ternary "https" "http" .Values.tls.enabled) (include "scheduler-extender.serviceHost" .) .Values.service.port -}}
{{- end -}}

{{/* The relay's arguments (the sidecar's args, and the command NOTES.txt prints). */}}
{{- define "scheduler-extender.relayArgs" -}}
{{- $r := include "scheduler-extender.relayValues" . | fromYaml -}}
- --listen=127.0.0.1:{{ int64 $r.port }}
- --upstream={{ include "scheduler-extender.relayUpstream" . }}
- --upstream-timeout={{ $r.upstreamTimeout }}
- --open-for={{ $r.openFor }}
{{- if .Values.tls.enabled }}
- --ca-file={{ include "scheduler-extender.schedulerTlsDir" . }}/ca.crt
{{- if .Values.tls.requireClientCert }}
- --cert-file={{ include "scheduler-extender.schedulerTlsDir" . }}/tls.crt
- --key-file={{ include "scheduler-extender.schedulerTlsDir" . }}/tls.key
{{- end }}
{{- end }}
{{- end -}}

{{/* The TLS fields of the second scheduler's extender entries (none without tls.enabled). */}}
{{- define "scheduler-extender.schedulerExtenderTls" -}}
{{- if .Values.tls.enabled -}}
enableHTTPS: true
tlsConfig:
  serverName: {{ .Values.tls.serverName | default (include "scheduler-extender.serviceHost" .) }}
  caFile: {{ include "scheduler-extender.schedulerTlsDir" . }}/ca.crt
  {{- if .Values.tls.requireClientCert }}
  certFile: {{ include "scheduler-extender.schedulerTlsDir" . }}/tls.crt
  keyFile: {{ include "scheduler-extender.schedulerTlsDir" . }}/tls.key
  {{- end }}
{{- end -}}
{{- end -}}
