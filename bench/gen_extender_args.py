#!/usr/bin/env python3
"""Generate a realistic kube-scheduler ExtenderArgs JSON body:
   {"Pod": <v1.Pod>, "Nodes": <v1.NodeList>, "NodeNames": null}
as sent by pkg/scheduler/extender.go when nodeCacheCapable=false.
Go's encoding/json emits compact JSON (no whitespace), so we do too.

usage: gen_extender_args.py N_NODES OUT.json [--images 40] [--seed 1]
"""
import json, random, sys, uuid, hashlib, argparse

ap = argparse.ArgumentParser()
ap.add_argument("n", type=int)
ap.add_argument("out")
ap.add_argument("--images", type=int, default=40)
ap.add_argument("--seed", type=int, default=1)
a = ap.parse_args()
rnd = random.Random(a.seed)

def hexd(n):
    return "".join(rnd.choice("0123456789abcdef") for _ in range(n))

def uid():
    return str(uuid.UUID(int=rnd.getrandbits(128), version=4))

ZONES = ["us-central1-a", "us-central1-b", "us-central1-c", "us-central1-f"]
POOLS = [("cpu-pool", "n2-standard-32", 32, 131072, 0, None),
         ("gpu-a100-pool", "a2-highgpu-8g", 96, 696320, 8, "NVIDIA-A100-SXM4-40GB"),
         ("gpu-h100-pool", "a3-highgpu-8g", 208, 1919296, 8, "NVIDIA-H100-80GB-HBM3"),
         ("gpu-t4-pool", "n1-standard-16", 16, 61440, 4, "Tesla-T4")]
REGISTRIES = ["registry.k8s.io", "gcr.io/gke-release", "nvcr.io/nvidia", "docker.io/library",
              "us-docker.pkg.dev/acme-prod/ml", "quay.io/prometheus"]
REPOS = ["kube-proxy", "pause", "coredns", "node-exporter", "fluent-bit", "gpu-operator",
         "k8s-device-plugin", "dcgm-exporter", "pytorch", "tensorflow", "triton-server",
         "cuda", "nccl-tests", "csi-node-driver-registrar", "gce-pd-csi-driver",
         "metadata-server", "netd", "ip-masq-agent", "calico-node", "istio-proxy",
         "trainer", "inference-api", "feature-store", "redis", "nginx", "envoy",
         "busybox", "alpine", "ubuntu", "python", "jupyter", "spark", "ray",
         "vllm", "mlflow", "airflow-worker", "kserve-agent", "otel-collector",
         "cilium", "node-problem-detector", "gke-metrics-agent", "gcsfuse-sidecar"]

def ts():
    return "2024-%02d-%02dT%02d:%02d:%02dZ" % (rnd.randint(1, 12), rnd.randint(1, 28),
                                                rnd.randint(0, 23), rnd.randint(0, 59), rnd.randint(0, 59))

def managed_fields():
    # Shapes copied from what kubelet / node-controller / kube-controller-manager write.
    return [
        {"manager": "kubelet", "operation": "Update", "apiVersion": "v1", "time": ts(),
         "fieldsType": "FieldsV1",
         "fieldsV1": {"f:metadata": {"f:annotations": {".": {}, "f:volumes.kubernetes.io/controller-managed-attach-detach": {}},
                                     "f:labels": {".": {}, "f:beta.kubernetes.io/arch": {}, "f:beta.kubernetes.io/os": {},
                                                  "f:kubernetes.io/arch": {}, "f:kubernetes.io/hostname": {}, "f:kubernetes.io/os": {}}},
                      "f:spec": {"f:providerID": {}}}},
        {"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "v1", "time": ts(),
         "fieldsType": "FieldsV1",
         "fieldsV1": {"f:metadata": {"f:annotations": {"f:node.alpha.kubernetes.io/ttl": {}}},
                      "f:spec": {"f:podCIDR": {}, "f:podCIDRs": {".": {}, "v:\"10.4.0.0/24\"": {}}}}},
        {"manager": "kubelet", "operation": "Update", "apiVersion": "v1", "time": ts(),
         "fieldsType": "FieldsV1", "subresource": "status",
         "fieldsV1": {"f:status": {"f:allocatable": {"f:cpu": {}, "f:ephemeral-storage": {}, "f:memory": {}, "f:nvidia.com/gpu": {}},
                                   "f:capacity": {"f:cpu": {}, "f:ephemeral-storage": {}, "f:memory": {}, "f:nvidia.com/gpu": {}},
                                   "f:conditions": {"k:{\"type\":\"DiskPressure\"}": {"f:lastHeartbeatTime": {}},
                                                    "k:{\"type\":\"MemoryPressure\"}": {"f:lastHeartbeatTime": {}},
                                                    "k:{\"type\":\"PIDPressure\"}": {"f:lastHeartbeatTime": {}},
                                                    "k:{\"type\":\"Ready\"}": {"f:lastHeartbeatTime": {}, "f:lastTransitionTime": {},
                                                                               "f:message": {}, "f:reason": {}, "f:status": {}}},
                                   "f:images": {}, "f:nodeInfo": {"f:bootID": {}}}}},
        {"manager": "node-problem-detector", "operation": "Update", "apiVersion": "v1", "time": ts(),
         "fieldsType": "FieldsV1", "subresource": "status",
         "fieldsV1": {"f:status": {"f:conditions": {"k:{\"type\":\"KernelDeadlock\"}": {".": {}, "f:lastHeartbeatTime": {},
                                                                                        "f:lastTransitionTime": {}, "f:message": {},
                                                                                        "f:reason": {}, "f:status": {}, "f:type": {}}}}}},
    ]

def image():
    reg = rnd.choice(REGISTRIES); repo = rnd.choice(REPOS)
    tag = "v%d.%d.%d" % (rnd.randint(0, 3), rnd.randint(0, 30), rnd.randint(0, 20))
    names = ["%s/%s@sha256:%s" % (reg, repo, hexd(64))]
    if rnd.random() < 0.8:          # kubelet reports tag too when it knows one
        names.append("%s/%s:%s" % (reg, repo, tag))
    return {"names": names, "sizeBytes": rnd.randint(700_000, 9_000_000_000)}

def node(i):
    pool, mtype, cpu, mem_mi, gpus, gpu_product = POOLS[i % len(POOLS)]
    zone = ZONES[i % len(ZONES)]
    name = "gke-prod-%s-%s-%s" % (pool, hexd(8), hexd(4))
    labels = {
        "beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/instance-type": mtype,
        "beta.kubernetes.io/os": "linux", "cloud.google.com/gke-boot-disk": "pd-balanced",
        "cloud.google.com/gke-nodepool": pool, "cloud.google.com/gke-os-distribution": "cos",
        "cloud.google.com/machine-family": mtype.split("-")[0],
        "failure-domain.beta.kubernetes.io/region": "us-central1",
        "failure-domain.beta.kubernetes.io/zone": zone, "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
        "node.kubernetes.io/instance-type": mtype, "topology.kubernetes.io/region": "us-central1",
        "topology.kubernetes.io/zone": zone,
    }
    if gpus:
        labels["nvidia.com/gpu.product"] = gpu_product
        labels["nvidia.com/gpu.count"] = str(gpus)
    annotations = {
        "container.googleapis.com/instance_id": str(rnd.getrandbits(62)),
        "csi.volume.kubernetes.io/nodeid": json.dumps({"pd.csi.storage.gke.io": "projects/acme-prod/zones/%s/instances/%s" % (zone, name)}, separators=(",", ":")),
        "node.alpha.kubernetes.io/ttl": "0",
        "node.gke.io/last-applied-node-labels": ",".join("%s=%s" % kv for kv in list(labels.items())[:6]),
        "volumes.kubernetes.io/controller-managed-attach-detach": "true",
    }
    cap = {"cpu": str(cpu), "ephemeral-storage": "%dKi" % rnd.randint(98_000_000, 390_000_000),
           "hugepages-1Gi": "0", "hugepages-2Mi": "0", "memory": "%dKi" % (mem_mi * 1024),
           "pods": "110", "attachable-volumes-gce-pd": "127"}
    alloc = dict(cap); alloc["cpu"] = "%dm" % (cpu * 1000 - 940)
    alloc["memory"] = "%dKi" % (mem_mi * 1024 - 3_000_000); alloc["ephemeral-storage"] = str(rnd.randint(10**10, 10**11))
    if gpus:
        cap["nvidia.com/gpu"] = str(gpus); alloc["nvidia.com/gpu"] = str(gpus)
    hb = ts()
    conds = [{"type": t, "status": s, "lastHeartbeatTime": hb, "lastTransitionTime": ts(), "reason": r, "message": m}
             for t, s, r, m in [
                 ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                 ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                 ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
                 ("Ready", "True" if rnd.random() > 0.02 else "False", "KubeletReady", "kubelet is posting ready status. AppArmor enabled"),
                 ("NetworkUnavailable", "False", "RouteCreated", "NodeController create implicit route")]]
    ip = "10.%d.%d.%d" % (rnd.randint(0, 255), rnd.randint(0, 255), rnd.randint(1, 254))
    spec = {"podCIDR": "10.%d.%d.0/24" % (rnd.randint(0, 255), rnd.randint(0, 255)),
            "providerID": "gce://acme-prod/%s/%s" % (zone, name)}
    spec["podCIDRs"] = [spec["podCIDR"]]
    if gpus:
        spec["taints"] = [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
    return {
        "metadata": {"name": name, "uid": uid(), "resourceVersion": str(rnd.randint(10**8, 10**9)),
                     "creationTimestamp": ts(), "labels": labels, "annotations": annotations,
                     "managedFields": managed_fields()},
        "spec": spec,
        "status": {
            "capacity": cap, "allocatable": alloc, "conditions": conds,
            "addresses": [{"type": "InternalIP", "address": ip},
                          {"type": "ExternalIP", "address": "34.%d.%d.%d" % (rnd.randint(0, 255), rnd.randint(0, 255), rnd.randint(1, 254))},
                          {"type": "InternalDNS", "address": "%s.us-central1-a.c.acme-prod.internal" % name},
                          {"type": "Hostname", "address": "%s.us-central1-a.c.acme-prod.internal" % name}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {"machineID": hexd(32), "systemUUID": uid(), "bootID": uid(),
                         "kernelVersion": "6.1.58+", "osImage": "Container-Optimized OS from Google",
                         "containerRuntimeVersion": "containerd://1.7.10", "kubeletVersion": "v1.29.1-gke.1589000",
                         "kubeProxyVersion": "v1.29.1-gke.1589000", "operatingSystem": "linux", "architecture": "amd64"},
            "images": [image() for _ in range(a.images)],
        },
    }

pod = {
    "metadata": {"name": "trainer-7f9c6d5b8-x2k4p", "generateName": "trainer-7f9c6d5b8-", "namespace": "ml",
                 "uid": uid(), "resourceVersion": "987654321", "creationTimestamp": ts(),
                 "labels": {"app": "trainer", "pod-template-hash": "7f9c6d5b8"},
                 "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "trainer-7f9c6d5b8",
                                      "uid": uid(), "controller": True, "blockOwnerDeletion": True}]},
    "spec": {"containers": [{"name": "trainer", "image": "us-docker.pkg.dev/acme-prod/ml/trainer:v1.4.2",
                             "args": ["--epochs=10", "--batch=256"],
                             "resources": {"limits": {"nvidia.com/gpu": "8", "memory": "512Gi"},
                                           "requests": {"cpu": "64", "memory": "512Gi", "nvidia.com/gpu": "8"}},
                             "volumeMounts": [{"name": "kube-api-access-abcde", "readOnly": True,
                                               "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}],
                             "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
                             "imagePullPolicy": "IfNotPresent"}],
             "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
             "serviceAccountName": "default", "serviceAccount": "default", "securityContext": {},
             "schedulerName": "default-scheduler",
             "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
                             {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}],
             "priority": 0, "enableServiceLinks": True, "preemptionPolicy": "PreemptLowerPriority"},
    "status": {"phase": "Pending", "qosClass": "Burstable"},
}

body = {"Pod": pod, "Nodes": {"metadata": {}, "items": [node(i) for i in range(a.n)]}, "NodeNames": None}
s = json.dumps(body, separators=(",", ":"))
with open(a.out, "w") as f:
    f.write(s)
one = json.dumps(body["Nodes"]["items"][0], separators=(",", ":"))
imgs = json.dumps(body["Nodes"]["items"][0]["status"]["images"], separators=(",", ":"))
mf = json.dumps(body["Nodes"]["items"][0]["metadata"]["managedFields"], separators=(",", ":"))
print("%s: nodes=%d bytes=%d (%.2f MB) avg/node=%.0f B; node0=%d B (images %d B, managedFields %d B)" % (
    a.out, a.n, len(s), len(s) / 1e6, len(s) / max(a.n, 1), len(one), len(imgs), len(mf)))
