"""The API server of an e2e control plane, as admin: APISERVER_URL, ADMIN_TOKEN and CLUSTER_CA_FILE
from the environment (lib/cluster.sh exports them). Shared by the harness's Python controllers."""
import json
import os
import ssl
import urllib.error
import urllib.request


class Api:
    def __init__(self):
        self.url = os.environ["APISERVER_URL"]
        self.token = os.environ["ADMIN_TOKEN"]
        self.ctx = ssl.create_default_context(cafile=os.environ["CLUSTER_CA_FILE"])

    def call(self, method, path, body=None, ctype="application/json"):
        """(HTTP status, decoded body or None); a connection failure raises (urllib.error.URLError)."""
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers={"Authorization": "Bearer " + self.token, "Content-Type": ctype})
        try:
            with urllib.request.urlopen(req, context=self.ctx, timeout=5) as res:
                return res.status, json.load(res)
        except urllib.error.HTTPError as e:
            return e.code, None
