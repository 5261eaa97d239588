#!/usr/bin/env python3
"""A TCP link between one daemon and the API server that an e2e suite can cut, as a partition would.

  api_partition.py --listen PORT --upstream PORT --control FILE

Bytes are piped both ways between 127.0.0.1:PORT and the API server on 127.0.0.1:--upstream (TLS
passes through untouched: the API server's certificate names 127.0.0.1). While FILE exists the
link is cut: nothing more is forwarded on open connections in either direction (their calls and
watches hang, as across a partition that drops packets) and new connections are accepted but never
connected upstream. When FILE is removed, every connection opened before is closed (TCP would reset
them once the partition heals) and new ones are piped again. Changes are logged to stderr.
"""
import argparse
import os
import socket
import sys
import threading
import time


def log(msg):
    sys.stderr.write("%s api-partition: %s\n" % (time.strftime("%H:%M:%S", time.gmtime()), msg))
    sys.stderr.flush()


class Link:
    def __init__(self, upstream_port):
        self.upstream_port = upstream_port
        self.cut = threading.Event()
        self.lock = threading.Lock()
        self.sockets = []  # every socket of every connection opened since the last heal

    def track(self, *socks):
        with self.lock:
            self.sockets.extend(socks)

    def heal(self):
        with self.lock:
            socks, self.sockets = self.sockets, []
        for s in socks:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()
        self.cut.clear()

    def pump(self, src, dst):
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                if self.cut.is_set():
                    continue  # dropped: the far side never hears of it
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def serve(self, client):
        self.track(client)
        if self.cut.is_set():
            return  # held open, never connected: its calls hang until the link heals
        try:
            upstream = socket.create_connection(("127.0.0.1", self.upstream_port), timeout=5)
            upstream.settimeout(None)
        except OSError as e:
            log("upstream connect failed: %s" % e)
            client.close()
            return
        self.track(upstream)
        threading.Thread(target=self.pump, args=(client, upstream), daemon=True).start()
        threading.Thread(target=self.pump, args=(upstream, client), daemon=True).start()


def watch_control(link, path):
    cut = False
    while True:
        now_cut = os.path.exists(path)
        if now_cut and not cut:
            link.cut.set()
            log("link cut (%s exists)" % path)
        elif cut and not now_cut:
            link.heal()
            log("link healed: connections opened before are closed")
        cut = now_cut
        time.sleep(0.05)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--listen", type=int, required=True)
    p.add_argument("--upstream", type=int, required=True)
    p.add_argument("--control", required=True)
    args = p.parse_args()
    link = Link(args.upstream)
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", args.listen))
    server.listen(128)
    threading.Thread(target=watch_control, args=(link, args.control), daemon=True).start()
    log("listening on 127.0.0.1:%d for 127.0.0.1:%d" % (args.listen, args.upstream))
    while True:
        client, _ = server.accept()
        link.serve(client)


if __name__ == "__main__":
    main()
