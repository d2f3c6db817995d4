//! A kube-rs client for the admin kubeconfig a test's `apiary` wrote, or another.

#![allow(dead_code)]

use apiary_conformance::harness::Apiary;
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};
use std::path::Path;

pub async fn client(apiary: &Apiary) -> Client {
    client_from(&apiary.kubeconfig).await
}

/// A client for the kubeconfig at `path`.
pub async fn client_from(path: &Path) -> Client {
    let kubeconfig = Kubeconfig::read_from(path).expect("kubeconfig parses");
    let config = Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .expect("kubeconfig is usable");
    Client::try_from(config).expect("client")
}
