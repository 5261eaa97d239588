#!/usr/bin/env python3
"""A loopback stand-in for the chart's leader-only Service, for e2e suites without kubelet.

The chart's Service selects the pod that carries the leader label and is Ready; kube-proxy sends
each new connection to it. This proxy does the same for daemons running as processes: every
--interval it lists the pods of --namespace that carry --label=true (as the endpoints controller
would) and keeps those whose daemon answers /readyz with 200 (the readiness probe); each accepted
connection goes to the first such daemon and is piped both ways until either side closes. With no
endpoint, connections are closed at once (a Service without endpoints refuses them).

  leader_proxy.py --listen PORT --namespace NS --label KEY --backend POD=PORT:ADMIN_PORT...
  leader_proxy.py --listen PORT --namespace NS --label KEY --backends-file FILE

With --backends-file the daemons are the lines "POD PORT ADMIN_PORT" of FILE, read again at every
poll (pod_runner.py writes it as pods come and go).

The API server is reached with APISERVER_URL, ADMIN_TOKEN and CLUSTER_CA_FILE from the
environment. Endpoint changes are logged to stderr with a timestamp.
"""
import argparse
import json
import os
import socket
import ssl
import sys
import threading
import time
import urllib.parse
import urllib.request


def log(msg):
    sys.stderr.write("%s leader-proxy: %s\n" % (time.strftime("%H:%M:%S", time.gmtime()) + ".%03d" % (time.time() % 1 * 1000), msg))
    sys.stderr.flush()


class Endpoints:
    def __init__(self, args):
        self.args = args
        self.backends = {}
        for spec in args.backend or []:
            pod, ports = spec.split("=", 1)
            port, admin = ports.split(":", 1)
            self.backends[pod] = (int(port), int(admin))
        self.ctx = ssl.create_default_context(cafile=os.environ["CLUSTER_CA_FILE"])
        self.lock = threading.Lock()
        self.current = []

    def labelled(self):
        selector = urllib.parse.quote(self.args.label + "=true", safe="")
        req = urllib.request.Request(
            "%s/api/v1/namespaces/%s/pods?labelSelector=%s" % (os.environ["APISERVER_URL"], self.args.namespace, selector),
            headers={"Authorization": "Bearer " + os.environ["ADMIN_TOKEN"]})
        with urllib.request.urlopen(req, context=self.ctx, timeout=2) as res:
            return {item["metadata"]["name"] for item in json.load(res)["items"]}

    @staticmethod
    def ready(admin):
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/readyz" % admin, timeout=1) as res:
                return res.status == 200
        except Exception:
            return False

    def read_backends_file(self):
        backends = {}
        try:
            with open(self.args.backends_file) as f:
                for line in f:
                    parts = line.split()
                    if len(parts) == 3:
                        backends[parts[0]] = (int(parts[1]), int(parts[2]))
        except OSError:
            pass
        with self.lock:
            self.backends = backends

    def refresh(self):
        if self.args.backends_file:
            self.read_backends_file()
        try:
            names = self.labelled()
        except Exception as e:
            log("listing pods failed: %s" % e)
            return
        with self.lock:
            backends = dict(self.backends)
        eps = [pod for pod in sorted(names) if pod in backends and self.ready(backends[pod][1])]
        with self.lock:
            if eps != self.current:
                log("endpoints %s -> %s" % (self.current, eps))
            self.current = eps

    def pick(self):
        with self.lock:
            for pod in self.current:
                if pod in self.backends:
                    return self.backends[pod][0]
            return None


def pipe(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def serve(client, endpoints):
    port = endpoints.pick()
    if port is None:
        client.close()
        return
    try:
        upstream = socket.create_connection(("127.0.0.1", port), timeout=2)
        upstream.settimeout(None)
    except OSError:
        client.close()
        return
    t = threading.Thread(target=pipe, args=(upstream, client), daemon=True)
    t.start()
    pipe(client, upstream)
    t.join()
    client.close()
    upstream.close()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--listen", type=int, required=True)
    p.add_argument("--namespace", required=True)
    p.add_argument("--label", required=True)
    p.add_argument("--backend", action="append")
    p.add_argument("--backends-file")
    p.add_argument("--interval", type=float, default=0.5)
    args = p.parse_args()
    endpoints = Endpoints(args)

    def poll():
        while True:
            endpoints.refresh()
            time.sleep(args.interval)

    threading.Thread(target=poll, daemon=True).start()
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", args.listen))
    server.listen(128)
    log("listening on 127.0.0.1:%d" % args.listen)
    while True:
        client, _ = server.accept()
        threading.Thread(target=serve, args=(client, endpoints), daemon=True).start()


if __name__ == "__main__":
    main()
