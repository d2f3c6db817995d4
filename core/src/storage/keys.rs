//! Where objects live in the key space: `/registry/<resource>/<namespace>/<name>`,
//! with the API group in front of the resource for non-core groups.

/// The key prefix holding every object of one resource (in one namespace when given),
/// ending in `/`.
pub fn resource_prefix(root: &str, group: &str, resource: &str, namespace: Option<&str>) -> String {
    let mut key = String::with_capacity(root.len() + group.len() + resource.len() + 32);
    key.push_str(root.trim_end_matches('/'));
    key.push('/');
    if !group.is_empty() {
        key.push_str(group);
        key.push('/');
    }
    key.push_str(resource);
    key.push('/');
    if let Some(ns) = namespace {
        key.push_str(ns);
        key.push('/');
    }
    key
}

/// The key of one object.
pub fn object_key(root: &str, group: &str, resource: &str, namespace: Option<&str>, name: &str) -> String {
    let mut key = resource_prefix(root, group, resource, namespace);
    key.push_str(name);
    key
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_and_grouped_keys() {
        assert_eq!(
            object_key("/registry", "", "configmaps", Some("x"), "a"),
            "/registry/configmaps/x/a"
        );
        assert_eq!(
            object_key("/registry/", "apps", "deployments", Some("x"), "d"),
            "/registry/apps/deployments/x/d"
        );
        assert_eq!(resource_prefix("/registry", "", "namespaces", None), "/registry/namespaces/");
    }
}
