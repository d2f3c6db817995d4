//! The objects the built-in write benchmarks create: a Deployment of about 1 KiB and a
//! Pod of about 4 KiB, each with what real ones carry (labels, probes, env, ports,
//! resources, volumes), so defaulting and validation have their usual work to do.

// Each benchmark uses some of these.
#![allow(dead_code)]

use serde_json::{json, Value};

fn container(name: &str, image: &str, port: u16) -> Value {
    json!({
        "name": name, "image": image,
        "ports": [{"name": "http", "containerPort": port}],
        "env": [{"name": "MODE", "value": "production"}, {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"cpu": "500m", "memory": "256Mi"}},
        "readinessProbe": {"httpGet": {"path": "/ready", "port": port}, "initialDelaySeconds": 5},
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": port}, "periodSeconds": 20},
        "volumeMounts": [{"name": "config", "mountPath": "/etc/app"}]
    })
}

/// A Deployment of about 1 KiB.
pub fn deployment(name: &str) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "labels": {"app": "web", "tier": "frontend"}, "annotations": {"team": "platform"}},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web", "tier": "frontend"}},
                "spec": {
                    "containers": [container("web", "registry.example.com/web:1.27.3", 8080)],
                    "volumes": [{"name": "config", "configMap": {"name": "web-config"}}]
                }
            }
        }
    })
}

/// A Pod of about 4 KiB.
pub fn pod(name: &str) -> Value {
    let mut containers = Vec::new();
    for (i, image) in ["registry.example.com/web:1.27.3", "registry.example.com/sidecar:2.1", "registry.example.com/metrics:0.9"].iter().enumerate() {
        let mut c = container(&format!("c{i}"), image, 8080 + i as u16);
        c["args"] = json!(["--listen", format!(":{}", 8080 + i), "--log-format=json", "--config=/etc/app/config.yaml"]);
        let env = c["env"].as_array_mut().expect("env");
        for (k, v) in [("REGION", "eu-west-1"), ("LOG_LEVEL", "info"), ("CACHE_SIZE", "256Mi"), ("FEATURE_FLAGS", "a,b,c"), ("UPSTREAM", "http://backend.default.svc:8080")] {
            env.push(json!({"name": k, "value": v}));
        }
        containers.push(c);
    }
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "web", "tier": "frontend", "version": "v1"},
                     "annotations": {"team": "platform", "description": "a pod of about four kibibytes for the write benchmarks, with three containers and their probes",
                                     "checksum/config": "9f2c4e1b7a3d5f60812c9e4b7d3a1f0e5c6b8a9d2e4f6071829a3b4c5d6e7f80",
                                     "kubectl.kubernetes.io/restartedAt": "2026-11-24T12:00:00Z",
                                     "prometheus.io/scrape": "true", "prometheus.io/port": "8082", "prometheus.io/path": "/metrics"}},
        "spec": {
            "initContainers": [{"name": "init", "image": "registry.example.com/init:1.0", "command": ["sh", "-c", "echo ready > /work/ready"], "volumeMounts": [{"name": "work", "mountPath": "/work"}]}],
            "containers": containers,
            "volumes": [
                {"name": "config", "configMap": {"name": "web-config"}},
                {"name": "work", "emptyDir": {}},
                {"name": "secret", "secret": {"secretName": "web-secret"}}
            ],
            "nodeSelector": {"kubernetes.io/os": "linux"},
            "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "web", "effect": "NoSchedule"}],
            "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}}]}}
        }
    })
}
