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
        containers.push(container(&format!("c{i}"), image, 8080 + i as u16));
    }
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "web", "tier": "frontend", "version": "v1"},
                     "annotations": {"team": "platform", "description": "a pod of about four kibibytes for the write benchmarks, with three containers and their probes"}},
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
