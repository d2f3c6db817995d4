#!/usr/bin/env python3
"""Seeds for the whole_server target: requests reaching the pod, node and service
subresources (log, exec, attach, portforward, proxy, ephemeralcontainers, resize),
CSR status and approval, and componentstatuses, after creating what they name.
Writes one file per seed into the directory given (default: ../corpus/whole_server).
Each seed is the knobs byte (0: admin, no latency) then connections split by NUL."""
import base64, json, os, sys

def req(method, path, body=None, ctype="application/json", extra=""):
    head = f"{method} {path} HTTP/1.1\r\nHost: x\r\n{extra}"
    if body is None:
        return (head + "\r\n").encode()
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return (head + f"Content-Type: {ctype}\r\nContent-Length: {len(data)}\r\n\r\n").encode() + data

NS = "/api/v1/namespaces/default"
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
       "spec": {"containers": [{"name": "c", "image": "i"}]}}
NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}}
SVC = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}, "spec": {"ports": [{"port": 80}]}}
# SEQUENCE { SEQUENCE {}, SEQUENCE {}, BIT STRING {0} }
PEM = b"-----BEGIN CERTIFICATE REQUEST-----\nMAgwADAAAwIAAA==\n-----END CERTIFICATE REQUEST-----\n"
CSR = {"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest", "metadata": {"name": "r"},
       "spec": {"request": base64.b64encode(PEM).decode(), "signerName": "example.com/s", "usages": ["client auth"]}}
APPROVED = dict(CSR, status={"conditions": [{"type": "Approved", "status": "True", "reason": "R"}]})
MERGE = "application/merge-patch+json"
UPGRADE = "Connection: Upgrade\r\nUpgrade: SPDY/3.1\r\n"

SEEDS = {
    "pod_log": [req("POST", NS + "/pods", POD),
                req("GET", NS + "/pods/p/log?container=c&tailLines=3&follow=true&sinceSeconds=5"),
                req("GET", NS + "/pods/p/log?limitBytes=0&stream=All")],
    "pod_connect": [req("POST", NS + "/pods", POD),
                    req("POST", NS + "/pods/p/exec?command=ls&stdout=true&container=c", extra=UPGRADE),
                    req("GET", NS + "/pods/p/attach?stdin=true&tty=true", extra=UPGRADE),
                    req("POST", NS + "/pods/p/portforward?ports=80", extra=UPGRADE),
                    req("GET", NS + "/pods/p/exec?command=sh")],
    "pod_proxy": [req("POST", NS + "/pods", POD),
                  req("GET", NS + "/pods/p/proxy/healthz?x=1"),
                  req("GET", NS + "/pods/p:8080/proxy/"),
                  req("PUT", NS + "/pods/https:p:443/proxy/a/b", b"x", "text/plain")],
    "pod_parts": [req("POST", NS + "/pods", POD),
                  req("PATCH", NS + "/pods/p/ephemeralcontainers",
                      {"spec": {"ephemeralContainers": [{"name": "d", "image": "busybox", "targetContainerName": "c"}]}}, MERGE),
                  req("GET", NS + "/pods/p/ephemeralcontainers"),
                  req("PATCH", NS + "/pods/p/resize",
                      {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}]}},
                      "application/strategic-merge-patch+json"),
                  req("GET", NS + "/pods/p/resize")],
    "node_service_proxy": [req("POST", "/api/v1/nodes", NODE),
                           req("GET", "/api/v1/nodes/n/proxy/stats/summary"),
                           req("GET", "/api/v1/nodes/n:10250/proxy/logs/"),
                           req("POST", NS + "/services", SVC),
                           req("GET", NS + "/services/s/proxy/"),
                           req("GET", NS + "/services/http:s:80/proxy/a?b=c")],
    "csr": [req("POST", "/apis/certificates.k8s.io/v1/certificatesigningrequests", CSR),
            req("PUT", "/apis/certificates.k8s.io/v1/certificatesigningrequests/r/approval", APPROVED),
            req("GET", "/apis/certificates.k8s.io/v1/certificatesigningrequests/r/status"),
            req("PATCH", "/apis/certificates.k8s.io/v1/certificatesigningrequests/r/status",
                {"status": {"certificate": base64.b64encode(b"cert").decode()}}, MERGE)],
    "componentstatuses": [req("GET", "/api/v1/componentstatuses"),
                          req("GET", "/api/v1/componentstatuses/etcd-0"),
                          req("GET", "/api/v1/componentstatuses/scheduler")],
}

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "corpus", "whole_server")
os.makedirs(out, exist_ok=True)
for name, connections in SEEDS.items():
    for knobs in (0, 1):  # admin and a plain user
        with open(os.path.join(out, f"seed-{name}-{knobs}"), "wb") as f:
            f.write(bytes([knobs]) + b"\0".join(connections))
print(f"{2 * len(SEEDS)} seeds in {out}")
