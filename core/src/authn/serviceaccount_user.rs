//! How a ServiceAccount appears as a user: `system:serviceaccount:<namespace>:<name>`,
//! in `system:serviceaccounts` and `system:serviceaccounts:<namespace>` (upstream's
//! `k8s.io/apiserver/pkg/authentication/serviceaccount` naming rules).

use crate::validation::names;

const USERNAME_PREFIX: &str = "system:serviceaccount:";

/// The group of every ServiceAccount.
pub const ALL_GROUP: &str = "system:serviceaccounts";

/// The user name of ServiceAccount `name` in `namespace`.
pub fn username(namespace: &str, name: &str) -> String {
    format!("{USERNAME_PREFIX}{namespace}:{name}")
}

/// The namespace and name of a ServiceAccount user name; `None` for any other name, or
/// one whose namespace is not a valid namespace name or whose name not a valid
/// ServiceAccount name.
pub fn split_username(username: &str) -> Option<(&str, &str)> {
    let rest = username.strip_prefix(USERNAME_PREFIX)?;
    let (namespace, name) = rest.split_once(':')?;
    if name.contains(':')
        || !names::dns1123_label(namespace).is_empty()
        || !names::dns1123_subdomain(name).is_empty()
    {
        return None;
    }
    Some((namespace, name))
}

/// The groups every ServiceAccount of `namespace` is in.
pub fn group_names(namespace: &str) -> Vec<String> {
    vec![ALL_GROUP.to_owned(), format!("{ALL_GROUP}:{namespace}")]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_well_formed_names_split() {
        assert_eq!(split_username("system:serviceaccount:ns:sa"), Some(("ns", "sa")));
        assert_eq!(split_username(&username("kube-system", "a.b")), Some(("kube-system", "a.b")));
        for other in [
            "alice",
            "system:serviceaccount:ns",
            "system:serviceaccount:ns:sa:extra",
            "system:serviceaccount::sa",
            "system:serviceaccount:Not_A_Namespace:sa",
            "system:serviceaccount:ns:",
        ] {
            assert_eq!(split_username(other), None, "{other}");
        }
        assert_eq!(group_names("ns"), ["system:serviceaccounts", "system:serviceaccounts:ns"]);
    }
}
