# shellcheck shell=bash
# Node-local pools a CSI driver publishes as CSIStorageCapacity, for the suites that play the
# driver with lib/csi_provisioner.py (storage.sh, gang.sh); sourced after lib/suite.sh. Reads
# DRIVER (the provisioner), POOL_GIB (each pool's size), GIB, and NODES (csi_nodes' default count).

# csi_class NAME: a WaitForFirstConsumer class of the CSI driver.
csi_class() {
  K apply -f - >/dev/null <<EOF
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: $1}
provisioner: $DRIVER
volumeBindingMode: WaitForFirstConsumer
EOF
}

# csi_nodes PREFIX CLASS [COUNT [GPUS]]: COUNT (NODES) nodes PREFIX-1.. of GPUS (8) GPUs, each with a
# CSIStorageCapacity of CLASS for POOL_GIB (the size the provisioner counts down from is its annotation).
csi_nodes() {
  local i n bytes=$((POOL_GIB * GIB))
  for ((i = 1; i <= ${3:-$NODES}; i++)); do
    n="$1-$i"
    cluster_add_gpu_node "$n" "${4:-8}"
    K apply -f - >/dev/null <<EOF
apiVersion: storage.k8s.io/v1
kind: CSIStorageCapacity
metadata:
  name: $2-$n
  namespace: kube-system
  annotations: {e2e.scheduler-extender.io/size: "$bytes"}
storageClassName: $2
nodeTopology: {matchLabels: {kubernetes.io/hostname: $n}}
capacity: "$bytes"
EOF
  done
}
