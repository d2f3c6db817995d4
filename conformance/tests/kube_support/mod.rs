//! A kube-rs client for the admin kubeconfig a test's `apiary` wrote.

use apiary_conformance::harness::Apiary;
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};

pub async fn client(apiary: &Apiary) -> Client {
    let kubeconfig = Kubeconfig::read_from(&apiary.kubeconfig).expect("kubeconfig parses");
    let config = Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .expect("kubeconfig is usable");
    Client::try_from(config).expect("client")
}
