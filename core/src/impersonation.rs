//! Impersonation: a request may act as another user (`Impersonate-User`,
//! `Impersonate-Group`, …) when its own user is allowed to impersonate. This stage of
//! the chain runs after authentication and audit, as upstream's does; no impersonation
//! is honoured yet, so the authenticated user acts as itself and the headers are not
//! read.

use crate::authn::UserInfo;
use crate::status::ApiError;

/// The user a request acts as once impersonation is applied.
pub fn impersonate(user: UserInfo, _headers: &http::HeaderMap) -> Result<UserInfo, ApiError> {
    Ok(user)
}
