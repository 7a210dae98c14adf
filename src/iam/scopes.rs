//! What an API key may do (issue 43, item 4): its scopes, and the scope a request needs. A key
//! answers only the requests of its scopes; what no scope covers (the account, friends and
//! messages, companies, notifications) needs a signed-in session. docs/identity.md, "API keys".

use axum::http::{HeaderMap, Method, header};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// One power of an API key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// Reading (GET, HEAD) anywhere but the operator's console, log streams included.
    Read,
    /// Apps and boxes: installing, renting, actions, orders, the app's API door, terminals,
    /// tunnels and every other WebSocket.
    Apps,
    /// Writes of the wallet (`/api/billing/…`): redeeming, transfers.
    Wallet,
    /// The operator's console (`/api/ops/…`), reads and writes: only on a key an operator made
    /// for it, with their password.
    Ops,
}

impl Scope {
    pub const ALL: [Scope; 4] = [Scope::Read, Scope::Apps, Scope::Wallet, Scope::Ops];

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Apps => "apps",
            Scope::Wallet => "wallet",
            Scope::Ops => "ops",
        }
    }

    pub fn parse(s: &str) -> Option<Scope> {
        Scope::ALL.into_iter().find(|x| x.as_str() == s)
    }
}

/// What a key holds when its creator names no scope.
pub const DEFAULT_SCOPES: [Scope; 2] = [Scope::Read, Scope::Apps];

/// A key's scopes as stored (`api_keys.scopes`: their names joined by commas, sorted).
pub fn to_column(scopes: &[Scope]) -> String {
    let mut v = scopes.to_vec();
    v.sort();
    v.dedup();
    v.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(",")
}

/// The stored scopes (a name this binary does not know is no power).
pub fn from_column(column: &str) -> Vec<Scope> {
    column.split(',').filter_map(|s| Scope::parse(s.trim())).collect()
}

/// What a request asks of a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needed {
    Scope(Scope),
    /// No key may: a signed-in session only.
    Session,
}

fn is_upgrade(headers: &HeaderMap) -> bool {
    headers.contains_key(header::UPGRADE) || headers.contains_key(header::SEC_WEBSOCKET_KEY)
}

/// `/api/rmp/v1/apps/{id}/api` and below: the app's own API, whatever the method.
fn is_api_door(path: &str) -> bool {
    path.strip_prefix("/api/rmp/v1/apps/")
        .and_then(|rest| rest.split_once('/'))
        .is_some_and(|(_, tail)| tail == "api" || tail.starts_with("api/"))
}

/// The scope a request needs of an API key.
pub fn needed(method: &Method, path: &str, headers: &HeaderMap) -> Needed {
    if path.starts_with("/api/ops/") {
        return Needed::Scope(Scope::Ops);
    }
    if is_upgrade(headers) || is_api_door(path) {
        return Needed::Scope(Scope::Apps);
    }
    if matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS) {
        return Needed::Scope(Scope::Read);
    }
    if path.starts_with("/api/billing/") {
        return Needed::Scope(Scope::Wallet);
    }
    if path.starts_with("/api/rmp/") || path.starts_with("/api/ebs/v2/devices") || path.starts_with("/api/ebs/v2/zcloud") {
        return Needed::Scope(Scope::Apps);
    }
    Needed::Session
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_need_their_scope() {
        let none = HeaderMap::new();
        let mut ws = HeaderMap::new();
        ws.insert(header::UPGRADE, "websocket".parse().unwrap());
        let n = |m: Method, p: &str, h: &HeaderMap| needed(&m, p, h);
        assert_eq!(n(Method::GET, "/api/iam/v1/account/profile", &none), Needed::Scope(Scope::Read));
        assert_eq!(n(Method::GET, "/api/ops/v1/users", &none), Needed::Scope(Scope::Ops));
        assert_eq!(n(Method::POST, "/api/ops/v1/topup-codes", &none), Needed::Scope(Scope::Ops));
        assert_eq!(n(Method::POST, "/api/billing/v1/wallet/redeem", &none), Needed::Scope(Scope::Wallet));
        assert_eq!(n(Method::GET, "/api/billing/v1/wallet", &none), Needed::Scope(Scope::Read));
        assert_eq!(n(Method::POST, "/api/rmp/v1/apps/install", &none), Needed::Scope(Scope::Apps));
        assert_eq!(n(Method::GET, "/api/rmp/v1/apps/x/api/models", &none), Needed::Scope(Scope::Apps));
        assert_eq!(n(Method::GET, "/api/rmp/v1/apps/x/api", &none), Needed::Scope(Scope::Apps));
        assert_eq!(n(Method::GET, "/api/rmp/v1/apps/x/apis", &none), Needed::Scope(Scope::Read));
        assert_eq!(n(Method::GET, "/api/rmp/v1/apps/x/terminal", &ws), Needed::Scope(Scope::Apps));
        assert_eq!(n(Method::PUT, "/api/iam/v1/account/username", &none), Needed::Session);
        assert_eq!(n(Method::POST, "/api/cim/v1/messages", &none), Needed::Session);
        assert_eq!(to_column(&[Scope::Wallet, Scope::Read, Scope::Read]), "read,wallet");
        assert_eq!(from_column("read,wallet,bogus"), [Scope::Read, Scope::Wallet]);
    }
}
