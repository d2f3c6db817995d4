//! FlowSchemas and PriorityLevelConfigurations as the fair-queuing machine reads them:
//! the fields that classify and limit requests, parsed from the stored objects
//! (`flowcontrol.apiserver.k8s.io/v1`), with the API's defaults for fields left out.

use serde::Deserialize;
use serde_json::Value;

/// A FlowSchema: which requests it matches, and the priority level they go to.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowSchema {
    pub name: String,
    pub uid: String,
    /// Lower matches first; ties go by name.
    pub matching_precedence: i32,
    pub priority_level: String,
    pub distinguisher: Option<Distinguisher>,
    pub rules: Vec<PolicyRules>,
}

/// How a schema's requests are split into flows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Distinguisher {
    ByUser,
    ByNamespace,
}

/// One entry of `spec.rules`: who, and what they do.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyRules {
    #[serde(default)]
    pub subjects: Vec<Subject>,
    #[serde(default)]
    pub resource_rules: Vec<ResourceRule>,
    #[serde(default)]
    pub non_resource_rules: Vec<NonResourceRule>,
}

/// A subject of a rule, by kind (`User`, `Group`, `ServiceAccount`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Subject {
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub user: Option<Named>,
    #[serde(default)]
    pub group: Option<Named>,
    #[serde(default)]
    pub service_account: Option<ServiceAccountSubject>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Named {
    #[serde(default)]
    pub name: String,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ServiceAccountSubject {
    #[serde(default)]
    pub namespace: String,
    #[serde(default)]
    pub name: String,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceRule {
    #[serde(default)]
    pub verbs: Vec<String>,
    #[serde(default)]
    pub api_groups: Vec<String>,
    #[serde(default)]
    pub resources: Vec<String>,
    #[serde(default)]
    pub cluster_scope: bool,
    #[serde(default)]
    pub namespaces: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NonResourceRule {
    #[serde(default)]
    pub verbs: Vec<String>,
    #[serde(default, rename = "nonResourceURLs")]
    pub non_resource_urls: Vec<String>,
}

/// A PriorityLevelConfiguration: its share of the server's seats and what happens to
/// requests beyond them.
#[derive(Debug, Clone, PartialEq)]
pub struct PriorityLevel {
    pub name: String,
    pub uid: String,
    pub nominal_concurrency_shares: u32,
    /// Percent of the nominal seats other levels may borrow.
    pub lendable_percent: u32,
    /// Percent of the nominal seats it may borrow; none is no limit.
    pub borrowing_limit_percent: Option<u32>,
    pub limit: Limit,
}

/// What a level does with a request it has no seat for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// Never limited (`type: Exempt`).
    Exempt,
    /// Refused at once (`limitResponse.type: Reject`).
    Reject,
    /// Queued, shuffle-sharded by flow.
    Queue(Queuing),
}

/// `limitResponse.queuing`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Queuing {
    pub queues: u32,
    pub hand_size: u32,
    pub queue_length_limit: u32,
}

impl Default for Queuing {
    /// v1's defaults.
    fn default() -> Queuing {
        Queuing { queues: 64, hand_size: 8, queue_length_limit: 50 }
    }
}

/// Why an object cannot be used; such objects are left out, as upstream's controller
/// leaves out what it cannot digest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unusable(pub String);

fn meta(object: &Value) -> (String, String) {
    let field = |name: &str| {
        object
            .pointer(&format!("/metadata/{name}"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    (field("name"), field("uid"))
}

fn number(value: Option<&Value>, default: u32) -> u32 {
    value
        .and_then(Value::as_u64)
        .map_or(default, |n| u32::try_from(n).unwrap_or(u32::MAX))
}

impl FlowSchema {
    pub fn from_object(object: &Value) -> Result<FlowSchema, Unusable> {
        let (name, uid) = meta(object);
        let spec = object.get("spec").unwrap_or(&Value::Null);
        let priority_level = spec
            .pointer("/priorityLevelConfiguration/name")
            .and_then(Value::as_str)
            .ok_or_else(|| Unusable(format!("FlowSchema {name} names no priority level")))?
            .to_owned();
        let distinguisher = match spec.pointer("/distinguisherMethod/type").and_then(Value::as_str) {
            Some("ByUser") => Some(Distinguisher::ByUser),
            Some("ByNamespace") => Some(Distinguisher::ByNamespace),
            Some(other) => return Err(Unusable(format!("FlowSchema {name}: unknown distinguisher {other:?}"))),
            None => None,
        };
        let rules = match spec.get("rules") {
            Some(rules) => serde_json::from_value(rules.clone())
                .map_err(|e| Unusable(format!("FlowSchema {name}: rules: {e}")))?,
            None => Vec::new(),
        };
        let matching_precedence = spec
            .get("matchingPrecedence")
            .and_then(Value::as_i64)
            .map_or(1000, |n| n.clamp(i32::MIN.into(), i32::MAX.into()) as i32);
        Ok(FlowSchema { name, uid, matching_precedence, priority_level, distinguisher, rules })
    }
}

impl PriorityLevel {
    pub fn from_object(object: &Value) -> Result<PriorityLevel, Unusable> {
        let (name, uid) = meta(object);
        let spec = object.get("spec").unwrap_or(&Value::Null);
        let level = |limit, commons: &Value, default_shares| PriorityLevel {
            name: name.clone(),
            uid: uid.clone(),
            nominal_concurrency_shares: number(commons.get("nominalConcurrencyShares"), default_shares),
            lendable_percent: number(commons.get("lendablePercent"), 0),
            borrowing_limit_percent: commons.get("borrowingLimitPercent").map(|v| number(Some(v), 0)),
            limit,
        };
        let exempt = spec.get("type").and_then(Value::as_str) == Some("Exempt");
        // Upstream refuses a level whose type and name disagree about being exempt.
        if exempt != (name == super::EXEMPT) {
            return Err(Unusable(format!("PriorityLevelConfiguration {name}: name and type disagree")));
        }
        if exempt {
            let commons = spec.get("exempt").unwrap_or(&Value::Null);
            return Ok(PriorityLevel { borrowing_limit_percent: None, ..level(Limit::Exempt, commons, 0) });
        }
        let limited = spec
            .get("limited")
            .ok_or_else(|| Unusable(format!("PriorityLevelConfiguration {name} is Limited without limits")))?;
        let response = limited.get("limitResponse").unwrap_or(&Value::Null);
        let limit = match response.get("type").and_then(Value::as_str) {
            Some("Reject") => Limit::Reject,
            _ => {
                let q = response.get("queuing").unwrap_or(&Value::Null);
                let d = Queuing::default();
                let queuing = Queuing {
                    queues: number(q.get("queues"), d.queues),
                    hand_size: number(q.get("handSize"), d.hand_size),
                    queue_length_limit: number(q.get("queueLengthLimit"), d.queue_length_limit),
                };
                if queuing.queues == 0 || queuing.hand_size == 0 || queuing.hand_size > queuing.queues {
                    return Err(Unusable(format!("PriorityLevelConfiguration {name}: impossible queuing {queuing:?}")));
                }
                // One queue: every flow shares it; no hand to deal.
                Limit::Queue(queuing)
            }
        };
        Ok(level(limit, limited, 30))
    }
}

/// The objects upstream's controller falls back on when the stored ones lack them:
/// the `exempt` and `catch-all` schemas and levels, as upstream's mandatory
/// configuration has them.
pub fn mandatory() -> (Vec<FlowSchema>, Vec<PriorityLevel>) {
    let every = || PolicyRules {
        subjects: Vec::new(),
        resource_rules: vec![ResourceRule {
            verbs: vec!["*".into()],
            api_groups: vec!["*".into()],
            resources: vec!["*".into()],
            cluster_scope: true,
            namespaces: vec!["*".into()],
        }],
        non_resource_rules: vec![NonResourceRule { verbs: vec!["*".into()], non_resource_urls: vec!["*".into()] }],
    };
    let group = |name: &str| Subject {
        kind: "Group".into(),
        user: None,
        group: Some(Named { name: name.into() }),
        service_account: None,
    };
    let exempt = FlowSchema {
        name: super::EXEMPT.into(),
        uid: String::new(),
        matching_precedence: 1,
        priority_level: super::EXEMPT.into(),
        distinguisher: None,
        rules: vec![PolicyRules { subjects: vec![group("system:masters")], ..every() }],
    };
    let catch_all = FlowSchema {
        name: super::CATCH_ALL.into(),
        uid: String::new(),
        matching_precedence: 10000,
        priority_level: super::CATCH_ALL.into(),
        distinguisher: Some(Distinguisher::ByUser),
        rules: vec![PolicyRules {
            subjects: vec![group("system:unauthenticated"), group("system:authenticated")],
            ..every()
        }],
    };
    let levels = vec![
        PriorityLevel {
            name: super::EXEMPT.into(),
            uid: String::new(),
            nominal_concurrency_shares: 0,
            lendable_percent: 0,
            borrowing_limit_percent: None,
            limit: Limit::Exempt,
        },
        PriorityLevel {
            name: super::CATCH_ALL.into(),
            uid: String::new(),
            nominal_concurrency_shares: 5,
            lendable_percent: 0,
            borrowing_limit_percent: None,
            limit: Limit::Reject,
        },
    ];
    (vec![exempt, catch_all], levels)
}
