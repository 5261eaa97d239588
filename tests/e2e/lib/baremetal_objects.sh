# shellcheck shell=bash
# csi-baremetal's objects as its operator and controllers publish them, for the suites that run the
# daemon on its drives (baremetal.sh, ha.sh); sourced after lib/suite.sh (K, fail, cluster_*,
# WORKDIR). No driver and no drives: baremetal/crds.yaml is csi-baremetal's CRDs unchanged,
# baremetal/storageclasses.yaml its chart's StorageClasses.
GIB=1073741824
GROUP=csi-baremetal.dell.com
UUID_KEY=nodes.csi-baremetal.dell.com/uuid

# bm_install_kinds: csi-baremetal's kinds, the daemon's rights on them (the chart's RBAC for
# csi-baremetal) and its chart's StorageClasses (csi-baremetal-sc the cluster's default). The daemon
# looks for the kinds once, when it starts: call this before it does.
bm_install_kinds() {
  K apply -f "$SUITE_LIB/../baremetal/crds.yaml" >/dev/null
  K wait --for condition=established --timeout=30s \
    "crd/availablecapacities.$GROUP" "crd/availablecapacityreservations.$GROUP" "crd/volumes.$GROUP" \
    "crd/drives.$GROUP" "crd/nodes.$GROUP" "crd/logicalvolumegroups.$GROUP" "crd/storagegroups.$GROUP" >/dev/null
  local scope default_class
  scope="$(K get "crd/volumes.$GROUP" -o jsonpath='{.spec.scope}')"
  [[ "$scope" == Namespaced ]] || fail "csi-baremetal's Volume CRD is $scope, want Namespaced"
  K apply -f - >/dev/null <<EOF
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: scheduler-extender-baremetal}
rules:
- apiGroups: [$GROUP]
  resources: [availablecapacities, volumes]
  verbs: [get, list, watch]
- apiGroups: [$GROUP]
  resources: [availablecapacityreservations]
  verbs: [get, list, watch, create, update, patch, delete]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: scheduler-extender-baremetal}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: scheduler-extender-baremetal}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: $EXTENDER_USER}]
EOF
  cluster_can_i "$EXTENDER_USER" create availablecapacityreservations "$GROUP" || fail "RBAC: $EXTENDER_USER cannot create reservations"

  K apply -f "$SUITE_LIB/../baremetal/storageclasses.yaml" >/dev/null
  default_class="$(K get storageclass -o json | jq -r '[.items[] | select(.metadata.annotations["storageclass.kubernetes.io/is-default-class"] == "true") | .metadata.name] | join(" ")')"
  [[ "$default_class" == csi-baremetal-sc ]] || fail "the cluster's default StorageClass is '$default_class', want csi-baremetal-sc"
}

new_uuid() { cat /proc/sys/kernel/random/uuid; }
# bm_node NAME DRIVES...: what csi-baremetal's controllers publish for a node: its uuid (annotation
# and label), its Node object, and per drive TYPE:GIB its Drive and the AC of the whole drive; a
# drive of type SSDLVG is a 200Gi SSD whose LogicalVolumeGroup's AC offers it. The ACs' names go
# to $WORKDIR/acs-NAME.txt, one per line (the group's last), the node's id to $WORKDIR/id-NAME.txt.
bm_node() {
  local n="$1" id d type gib drive ac lvg
  shift
  cluster_add_gpu_node "$n" 8
  id="$(new_uuid)"
  K annotate node "$n" "$UUID_KEY=$id" >/dev/null
  K label node "$n" "$UUID_KEY=$id" >/dev/null
  {
    cat <<EOF
---
apiVersion: $GROUP/v1
kind: Node
metadata: {name: csibmnode-$id}
spec: {UUID: "$id", Addresses: {Hostname: $n, InternalIP: 10.0.0.$((RANDOM % 250 + 2))}}
EOF
    for d in "$@"; do
      type="${d%%:*}" gib="${d##*:}" drive="$(new_uuid)" ac="$(new_uuid)" lvg=""
      local drive_type="$type"
      [[ "$type" == SSDLVG ]] && drive_type=SSD
      cat <<EOF
---
apiVersion: $GROUP/v1
kind: Drive
metadata: {name: $drive}
spec: {UUID: "$drive", VID: e2e, PID: e2e-$drive_type, SerialNumber: "SN-$drive", Health: GOOD, Type: $drive_type,
  Size: $((gib * GIB)), Status: ONLINE, Usage: IN_USE, NodeId: "$id", Path: /dev/disk/by-id/$drive, IsSystem: false}
EOF
      if [[ "$type" == SSDLVG ]]; then
        lvg="$(new_uuid)"
        cat <<EOF
---
apiVersion: $GROUP/v1
kind: LogicalVolumeGroup
metadata: {name: $lvg}
spec: {Name: "$lvg", Node: "$id", Locations: ["$drive"], Size: $((gib * GIB)), Status: CREATED, Health: GOOD}
EOF
      fi
      cat <<EOF
---
apiVersion: $GROUP/v1
kind: AvailableCapacity
metadata:
  name: $ac
  labels: {app: csi-baremetal, app.kubernetes.io/name: csi-baremetal}
spec: {NodeId: "$id", storageClass: $type, Size: $((gib * GIB)), Location: "${lvg:-$drive}"}
EOF
      echo "$ac" >&3
    done
  } 3>"$WORKDIR/acs-$n.txt" | K apply -f - >/dev/null
  echo "$id" >"$WORKDIR/id-$n.txt"
}

