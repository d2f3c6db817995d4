//! Which of kube-controller-manager's controllers Apiary runs in its place, by
//! kube-controller-manager's names: `--disable-controllers` switches some off, so that a
//! real kube-controller-manager can run them against Apiary instead.

/// A controller kube-controller-manager would run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Controller {
    ClusterRoleAggregation,
    GarbageCollector,
    Namespace,
    ResourceQuota,
    RootCaPublisher,
    ServiceAccount,
}

impl Controller {
    pub const ALL: [Controller; 6] = [
        Controller::ClusterRoleAggregation,
        Controller::GarbageCollector,
        Controller::Namespace,
        Controller::ResourceQuota,
        Controller::RootCaPublisher,
        Controller::ServiceAccount,
    ];

    /// kube-controller-manager's name for it, then its alias (both are accepted by its
    /// `--controllers`).
    pub fn names(self) -> [&'static str; 2] {
        match self {
            Controller::ClusterRoleAggregation => ["clusterrole-aggregation-controller", "clusterrole-aggregation"],
            Controller::GarbageCollector => ["garbage-collector-controller", "garbagecollector"],
            Controller::Namespace => ["namespace-controller", "namespace"],
            Controller::ResourceQuota => ["resourcequota-controller", "resourcequota"],
            Controller::RootCaPublisher => ["root-ca-certificate-publisher-controller", "root-ca-cert-publisher"],
            Controller::ServiceAccount => ["serviceaccount-controller", "serviceaccount"],
        }
    }

    /// The controller a name means: kube-controller-manager's name, its alias, or its
    /// name without `-controller`.
    pub fn parse(name: &str) -> Option<Controller> {
        Controller::ALL.into_iter().find(|c| {
            let [canonical, alias] = c.names();
            name == canonical || name == alias || Some(name) == canonical.strip_suffix("-controller")
        })
    }
}

/// The controllers switched off.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Enabled {
    disabled: Vec<Controller>,
}

impl Enabled {
    /// All but `disabled`, given by name; the names not known are the error.
    pub fn without(disabled: &[&str]) -> Result<Enabled, String> {
        let mut off = Vec::new();
        for name in disabled.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
            match Controller::parse(name) {
                Some(c) => off.push(c),
                None => {
                    let known: Vec<&str> = Controller::ALL.iter().map(|c| c.names()[0]).collect();
                    return Err(format!("unknown controller {name:?}; known controllers: {}", known.join(", ")));
                }
            }
        }
        Ok(Enabled { disabled: off })
    }

    pub fn runs(&self, controller: Controller) -> bool {
        !self.disabled.contains(&controller)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_kube_controller_managers() {
        let enabled = Enabled::without(&["garbage-collector", "namespace", "root-ca-certificate-publisher-controller"]).unwrap();
        assert!(!enabled.runs(Controller::GarbageCollector));
        assert!(!enabled.runs(Controller::Namespace));
        assert!(!enabled.runs(Controller::RootCaPublisher));
        assert!(enabled.runs(Controller::ServiceAccount));
        let unknown = Enabled::without(&["replicaset"]).unwrap_err();
        assert!(unknown.starts_with("unknown controller \"replicaset\"; known controllers: clusterrole-aggregation-controller, "), "{unknown}");
    }
}
