//! Kinds that serve only `create` and are never stored (the access reviews): the body
//! is decoded and admitted like any create's, then the kind's strategy answers it
//! (`Strategy::answer_create`) and the answer is sent with 201 Created, as upstream's
//! create handler sends what such a REST storage returns. Nothing is written, so a dry
//! run is answered the same.

use super::object::Object;
use super::scope::Scope;
use super::admit::Admitted;
use super::object::meta_str;
use crate::admission::{Operation, Phase};
use crate::authn::{TokenUser, UserInfo};
use crate::authorization::{Attributes, Decision, Rules};
use crate::effect::Step;
use crate::request_info::RequestInfo;
use crate::resources::CreateRequest;
use crate::status::ApiError;
use serde_json::Value;

/// Serve a request to a create-only kind: a POST to the collection. Upstream routes
/// nothing else there: another method on the collection is 405, any path below it 404.
pub(super) fn handle(info: &RequestInfo, scope: Scope) -> Step {
    if !scope.name.is_empty() {
        return scope.fail(ApiError::no_such_path());
    }
    if info.verb != "create" {
        return scope.fail(ApiError::method_not_allowed());
    }
    if let Err(e) = super::dry_run::write_options(&scope, "CreateOptions") {
        return scope.fail(e);
    }
    let (obj, warnings) = match scope.decode_body("CreateOptions") {
        Ok(decoded) => decoded,
        Err(e) => return scope.fail(e),
    };
    super::response::warned(answer(scope, obj), warnings)
}

/// Place, record and admit the object as a create does, then let the kind answer.
/// Upstream's review storage runs validating admission once its own checks pass;
/// here both phases run before the kind answers, so an object both invalid and
/// refused by admission gets admission's refusal.
fn answer(scope: Scope, mut obj: Object) -> Step {
    if let Err(e) = super::create::place_in_namespace(&scope, &mut obj) {
        return scope.fail(e);
    }
    scope.record_update(None, &mut obj);
    let request = scope.admission_request(Operation::Create, meta_str(&obj, "name"), None);
    scope.admit(Phase::Mutating, request, obj, Box::new(Mutated))
}

/// Mutating admission is done: validating admission next.
#[derive(Debug)]
struct Mutated;

impl Admitted for Mutated {
    fn admitted(self: Box<Self>, scope: Scope, obj: Object) -> Step {
        let request = scope.admission_request(Operation::Create, meta_str(&obj, "name"), None);
        scope.admit(Phase::Validating, request, obj, Box::new(Validated))
    }
}

/// Admitted: the kind answers.
#[derive(Debug)]
struct Validated;

impl Admitted for Validated {
    fn admitted(self: Box<Self>, scope: Scope, obj: Object) -> Step {
        let strategy = scope.resource().strategy.clone();
        match strategy.answer_create(&scope, obj) {
            Ok(answer) => scope.respond(201, &Value::Object(answer)),
            Err(e) => scope.fail(e),
        }
    }
}

impl CreateRequest for Scope {
    fn user(&self) -> &UserInfo {
        &self.user
    }

    fn now(&self) -> std::time::SystemTime {
        self.inputs.now
    }

    fn authorize(&self, attributes: Attributes<'_>) -> Decision {
        self.shared.authorize(attributes)
    }

    fn rules_for(&self, user: &UserInfo, namespace: &str) -> Rules {
        self.shared.rules_for(user, namespace)
    }

    fn authenticate_token(&self, token: &str, audiences: Option<&[String]>) -> Option<TokenUser> {
        let context = self.shared.authn_context(&self.inputs);
        self.shared.config.authenticators.authenticate_token(token, audiences, &context)
    }

    fn api_audiences(&self) -> Vec<String> {
        self.shared.config.authenticators.api_audiences().to_vec()
    }
}
