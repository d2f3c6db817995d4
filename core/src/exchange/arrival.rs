//! A request arrives: the stages that run before it is handled, in kube-apiserver's
//! order — request info (once), the lifecycle gate, metrics, the audit record, the
//! deadline and the in-flight limits — and the end every answer goes through.

use super::{finish, Admitted, Exchange, Stage};
use crate::audit;
use crate::authn;
use crate::effect::{Inputs, Step};
use crate::inflight::{self, Admission as Limited, Refused};
use crate::lifecycle::{self, InFlight, RequestClass};
use crate::shared::Shared;
use bytes::Bytes;
use std::sync::Arc;

/// What became of a request at the door.
// Not boxed: the exchange lives in its connection's task, and a heap allocation of its
// size per request costs the allocator more than the move.
#[allow(clippy::large_enum_variant)]
pub enum Arrived {
    /// It goes on: drive the exchange.
    Exchange(Exchange),
    /// No new requests are taken: close the connection without an answer.
    Refused,
}

impl Exchange {
    /// Take a decoded request. `begun` is the in-flight mark of a request whose first
    /// bytes came while requests were still taken: it is served whatever happened since.
    pub(crate) fn arrive(
        shared: Arc<Shared>,
        mut request: http::Request<Bytes>,
        inputs: Inputs,
        begun: Option<InFlight>,
    ) -> Arrived {
        // Owned: authentication takes the front proxy's headers out of the request.
        let uri = &request.uri().clone();
        let info = crate::request_info::resolve(request.method(), uri.path(), uri.query());
        let (now, wall) = (inputs.monotonic, inputs.now);

        // The lifecycle gate: requests that arrive while the server starts or stops.
        let (in_flight, mut turned) = match begun {
            Some(in_flight) => (Some(in_flight), None),
            None => {
                let class = RequestClass {
                    exempt: lifecycle::is_exempt_path(uri.path()),
                    resource: uri.path().starts_with("/api/") || uri.path().starts_with("/apis/"),
                };
                match shared.lifecycle.admit(class, now) {
                    Ok(in_flight) => (Some(in_flight), None),
                    Err(admission) => match lifecycle::turned_away(admission) {
                        Some(answer) => (None, Some(answer)),
                        None => return Arrived::Refused,
                    },
                }
            }
        };

        let content_type = request
            .headers()
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let tracked = shared.track(&info, request.method(), uri.query(), content_type.as_deref());
        shared.metrics.request_started(&tracked);

        // Audit (upstream's WithAuditInit and WithAudit): the Audit-Id every answer
        // carries, and the record of an audited request.
        let audit_random: [u8; 16] = inputs.entropy[32..48].try_into().expect("16 bytes");
        let audit_id = audit::audit_id(request.headers(), audit_random);
        let audit_id = http::HeaderValue::from_str(&audit_id)
            .unwrap_or_else(|_| http::HeaderValue::from_static(""));
        let authenticated = shared.authenticate(&inputs, request.headers_mut());
        // Borrowed: the user moves on with the request; only an anonymous one is made.
        let anonymous;
        let user = match &authenticated {
            authn::Authenticated::User(user) => user,
            _ => {
                anonymous = authn::UserInfo::anonymous();
                &anonymous
            }
        };
        let mut audit_lines = Vec::new();
        let record = match (&shared.config.audit_policy, &turned) {
            (Some(policy), None) => {
                let known = matches!(authenticated, authn::Authenticated::User(_) | authn::Authenticated::Anonymous);
                audit::Record::new(
                    policy,
                    audit::Arrival {
                        request: &request,
                        info: &info,
                        user: known.then_some(user),
                        remote_addr: inputs.remote_addr,
                        now: inputs.now,
                        audit_id: audit_id.to_str().unwrap_or("").to_owned(),
                    },
                )
            }
            _ => None,
        };
        if let Some(record) = &record {
            audit_lines.extend(record.request_received(inputs.now));
        }

        // The deadline of a request that is not a watch.
        let mut deadline = None;
        if turned.is_none() && !tracked.is_long_running() {
            match crate::deadline::request_deadline(shared.config.lifecycle.request_timeout, uri.query()) {
                Ok(within) => deadline = Some(now + within),
                Err(bad_timeout) => turned = Some(*bad_timeout),
            }
        }

        // The in-flight limits; a system:masters user is always served.
        let mut slot = None;
        if turned.is_none() {
            let class = inflight::class_of(&info);
            let privileged = || user.in_group("system:masters");
            match shared.limiter.admit_class(
                class,
                request.method(),
                uri.path(),
                uri.query(),
                content_type.as_deref(),
                privileged,
            ) {
                Limited::Admitted(admitted) => slot = Some(admitted),
                Limited::Refused(answer) => turned = Some(answer),
            }
        }

        let stage = match turned {
            Some(answer) => Stage::Handling(Step::Respond(answer)),
            None => Stage::Admitted(Admitted {
                request,
                inputs,
                info,
                authenticated,
                // With priority and fairness the request yields once it has its
                // seat instead (see `Stage::Dispatched`).
                yielded: shared.flowcontrol.is_some(),
            }),
        };
        Arrived::Exchange(Exchange {
            shared,
            stage,
            arrived: now,
            latest: now,
            wall,
            deadline,
            tracked,
            audit_id,
            audit: record,
            audit_lines,
            slot,
            in_flight,
            classification: None,
            seat: None,
        })
    }

    /// The answer is ready: audit it, give it the headers every answer gets, count it,
    /// and give the request's in-flight place back.
    pub(super) fn finish(&mut self, mut response: http::Response<Bytes>) -> http::Response<Bytes> {
        self.stage = Stage::Finished;
        if let Some(record) = &self.audit {
            self.audit_lines.extend(record.response_complete(&response, self.wall));
        }
        let closing = self.shared.lifecycle.closing();
        finish::answer_headers(response.headers_mut(), &self.audit_id, self.wall, closing);
        if let Some(classification) = &self.classification {
            classification.set_headers(response.headers_mut());
        }
        let code = response.status().as_u16();
        if response.extensions().get::<Refused>().is_some() {
            self.shared.metrics.request_refused(&self.tracked, code);
        } else {
            let elapsed = self.latest.saturating_sub(self.arrived);
            self.shared.metrics.request_finished(&self.tracked, code, elapsed);
        }
        self.slot = None;
        response
    }
}
