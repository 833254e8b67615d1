//! Authentication, impersonation and authorization, as kube-apiserver's filters do them in
//! that order, with a fixed policy small enough to read here.
//!
//! Authentication: the bearer token is the admin (`kwatch-sim-admin`, group
//! `system:masters`); a wrong token is 401 even with a client certificate, as the token
//! authenticator answers first for a request that carries one; without a token, a client
//! certificate signed by the sim's CA is its CN with its O values as groups; neither is 401.
//!
//! Impersonation (`Impersonate-User`, `Impersonate-Group`, `Impersonate-Uid`): allowed to
//! `system:masters` only; anyone else gets kube-apiserver's 403 for `impersonate`. The
//! impersonated user gets `system:authenticated`, and a service account also
//! `system:serviceaccounts` and `system:serviceaccounts:<ns>`.
//!
//! Authorization of resource requests (discovery, `/version` and `/openapi` are open to any
//! authenticated user, as the `system:discovery` role makes them; `/_sim/` needs
//! `system:masters`):
//!
//! | who | may |
//! |---|---|
//! | group `system:masters` | everything |
//! | [`WATCHER`] | get, list, watch |
//! | [`LISTER`] | get, list — a watch is 403 |
//! | [`VIEWER`] | get, list, watch anything but secrets (as Kubernetes' `view` role) |
//! | anyone else (e.g. [`NOBODY`]) | nothing: 403 |
//!
//! `POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews` (`kubectl auth can-i`,
//! kwatch's `--probe`) answers this policy for the review's resource attributes, to any
//! authenticated user, as kube-apiserver's `selfsubjectaccessreviews` endpoint does.

use axum::http::{HeaderMap, HeaderValue, Method};
use axum::response::Response;
use serde_json::{Map, Value};

use super::status::Status;
use kwatch_core::der;

/// The bearer token's user.
pub const ADMIN: &str = "kwatch-sim-admin";
/// A service account that may get, list and watch everything.
pub const WATCHER: &str = "system:serviceaccount:default:watcher";
/// A service account that may get and list but not watch.
pub const LISTER: &str = "system:serviceaccount:default:lister";
/// A service account that may get, list and watch everything but secrets, as Kubernetes'
/// `view` ClusterRole lets it.
pub const VIEWER: &str = "system:serviceaccount:default:viewer";
/// A service account with no permissions.
pub const NOBODY: &str = "system:serviceaccount:default:nobody";

const MASTERS: &str = "system:masters";

/// The response refusing a request (boxed: a `Response` is large).
pub type Denied = Box<Response>;

/// Who a request acts as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub user: String,
    pub groups: Vec<String>,
}

impl Identity {
    pub fn admin() -> Identity {
        Identity {
            user: ADMIN.to_owned(),
            groups: vec![MASTERS.to_owned(), "system:authenticated".to_owned()],
        }
    }

    pub fn is_master(&self) -> bool {
        self.groups.iter().any(|g| g == MASTERS)
    }
}

/// The client certificate a connection presented (verified by the TLS layer against the
/// sim's CA), as CN and O values. Put into each request's extensions by the acceptor.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PeerCert {
    pub common_name: String,
    pub organizations: Vec<String>,
}

impl PeerCert {
    /// CN and O of the subject of a DER certificate; `None` if it does not parse.
    pub fn from_der(der: &[u8]) -> Option<PeerCert> {
        const SEQUENCE: u8 = 0x30;
        const SET: u8 = 0x31;
        let (_, cert, _) = der::next(der).filter(|e| e.0 == SEQUENCE)?;
        let (_, mut tbs, _) = der::next(cert).filter(|e| e.0 == SEQUENCE)?;
        // [0] version (optional), serial, signature algorithm, issuer, validity, subject.
        let (tag, _, rest) = der::next(tbs)?;
        tbs = if tag == 0xa0 {
            der::next(rest)?.2
        } else {
            rest
        };
        for _ in 0..3 {
            tbs = der::next(tbs)?.2;
        }
        let (_, mut subject, _) = der::next(tbs).filter(|e| e.0 == SEQUENCE)?;
        let mut out = PeerCert::default();
        while !subject.is_empty() {
            let (tag, mut rdn, rest) = der::next(subject)?;
            subject = rest;
            if tag != SET {
                return None;
            }
            while !rdn.is_empty() {
                let (_, atv, rest) = der::next(rdn).filter(|e| e.0 == SEQUENCE)?;
                rdn = rest;
                let (_, oid, value) = der::next(atv).filter(|e| e.0 == 0x06)?;
                let (_, value, _) = der::next(value)?;
                let value = String::from_utf8_lossy(value).into_owned();
                match oid {
                    [0x55, 0x04, 0x03] => out.common_name = value,
                    [0x55, 0x04, 0x0a] => out.organizations.push(value),
                    _ => {}
                }
            }
        }
        Some(out)
    }
}

/// Authentication, then impersonation: who the request acts as, or the error response.
pub fn authenticate(
    token: &str,
    headers: &HeaderMap,
    peer: Option<&PeerCert>,
) -> Result<Identity, Denied> {
    let bearer = headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    let me = match (bearer, peer) {
        (Some(t), _) if t == token => Identity::admin(),
        (None, Some(p)) if !p.common_name.is_empty() => {
            let mut groups = p.organizations.clone();
            groups.push("system:authenticated".to_owned());
            Identity {
                user: p.common_name.clone(),
                groups,
            }
        }
        _ => return Err(Box::new(Status::unauthorized().response())),
    };
    impersonate(me, headers)
}

/// Applies the `Impersonate-*` headers (none: `me` unchanged).
fn impersonate(me: Identity, headers: &HeaderMap) -> Result<Identity, Denied> {
    let values = |name: &str| -> Vec<String> {
        headers
            .get_all(name)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .map(str::to_owned)
            .collect()
    };
    let user = values("impersonate-user").into_iter().next();
    let groups = values("impersonate-group");
    let uid = values("impersonate-uid");
    let Some(user) = user else {
        if groups.is_empty() && uid.is_empty() {
            return Ok(me);
        }
        return Err(Box::new(
            Status::internal(
                "requested impersonation of groups or uid without impersonating a user",
            )
            .response(),
        ));
    };
    if !me.is_master() {
        let reason = format!(
            "User {:?} cannot impersonate resource \"users\" in API group \"\" at the cluster \
             scope",
            me.user
        );
        return Err(Box::new(forbidden("users", "", Some(&user), &reason)));
    }
    let mut all = groups;
    if let Some(ns) = user
        .strip_prefix("system:serviceaccount:")
        .and_then(|r| r.split(':').next())
    {
        all.push("system:serviceaccounts".to_owned());
        all.push(format!("system:serviceaccounts:{ns}"));
    }
    all.push("system:authenticated".to_owned());
    Ok(Identity { user, groups: all })
}

/// The verb of a resource request, as the authorizer sees it.
pub fn verb(method: &Method, named: bool, watch: bool) -> &'static str {
    match *method {
        Method::GET | Method::HEAD if watch => "watch",
        Method::GET | Method::HEAD if named => "get",
        Method::GET | Method::HEAD => "list",
        Method::POST => "create",
        Method::PUT => "update",
        Method::PATCH => "patch",
        Method::DELETE if named => "delete",
        Method::DELETE => "deletecollection",
        _ => "unknown",
    }
}

/// What a resource request asks for.
#[derive(Debug)]
pub struct Request<'a> {
    pub verb: &'static str,
    pub group: &'a str,
    /// The plural resource name.
    pub resource: &'a str,
    pub subresource: Option<&'a str>,
    pub namespace: Option<&'a str>,
    pub name: Option<&'a str>,
}

/// Whether the policy of the module docs lets `who` do `verb` on `resource` of `group`.
fn allows(who: &Identity, verb: &str, group: &str, resource: &str) -> bool {
    who.is_master()
        || (who.user == WATCHER && matches!(verb, "get" | "list" | "watch"))
        || (who.user == LISTER && matches!(verb, "get" | "list"))
        || (who.user == VIEWER
            && matches!(verb, "get" | "list" | "watch")
            && !(group.is_empty() && resource == "secrets"))
}

/// The path of `kubectl auth can-i`'s question.
pub const ACCESS_REVIEWS: &str = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";

/// A SelfSubjectAccessReview answered (201, the review with its `status`): `allowed` by
/// the policy for its `spec.resourceAttributes`; no reason, as RBAC gives none for a
/// denial. A body that is no review is 400.
/// With `forbid_watch` (the `forbid-watch` bend) a review of `watch` says no.
pub fn access_review(who: &Identity, body: &[u8], forbid_watch: bool) -> Response {
    let Ok(mut review) = serde_json::from_slice::<Value>(body) else {
        return Status::bad_request("the body is not a SelfSubjectAccessReview").response();
    };
    let attrs = &review["spec"]["resourceAttributes"];
    let field = |k: &str| attrs[k].as_str().unwrap_or("").to_owned();
    let allowed = allows(who, &field("verb"), &field("group"), &field("resource"))
        && !(forbid_watch && field("verb") == "watch");
    review["status"] = serde_json::json!({"allowed": allowed});
    review["metadata"] = serde_json::json!({"creationTimestamp": null});
    super::status::value_response(axum::http::StatusCode::CREATED, &review)
}

/// The policy of the module docs: `Ok` or kube-apiserver's 403.
pub fn authorize(who: &Identity, r: &Request<'_>) -> Result<(), Denied> {
    if allows(who, r.verb, r.group, r.resource) {
        return Ok(());
    }
    Err(denial(who, r))
}

/// kube-apiserver's 403 for `r`, as RBAC words it.
pub fn denial(who: &Identity, r: &Request<'_>) -> Denied {
    let resource = match r.subresource {
        Some(sub) => format!("{}/{sub}", r.resource),
        None => r.resource.to_owned(),
    };
    let scope = match r.namespace {
        Some(ns) => format!("in the namespace {ns:?}"),
        None => "at the cluster scope".to_owned(),
    };
    let reason = format!(
        "User {:?} cannot {} resource {resource:?} in API group {:?} {scope}",
        who.user, r.verb, r.group
    );
    Box::new(forbidden(r.resource, r.group, r.name, &reason))
}

/// 403 `<resource>[.<group>] ["<name>"] is forbidden: <reason>`, details in Go's key order
/// (name, group, kind), with the `X-Content-Type-Options: nosniff` the real one carries.
pub fn forbidden(resource: &str, group: &str, name: Option<&str>, reason: &str) -> Response {
    let qualified = if group.is_empty() {
        resource.to_owned()
    } else {
        format!("{resource}.{group}")
    };
    let message = match name {
        _ if qualified.is_empty() => format!("forbidden: {reason}"),
        Some(n) => format!("{qualified} {n:?} is forbidden: {reason}"),
        None => format!("{qualified} is forbidden: {reason}"),
    };
    let mut details = Map::new();
    if let Some(n) = name {
        details.insert("name".into(), Value::from(n));
    }
    if !group.is_empty() {
        details.insert("group".into(), Value::from(group));
    }
    if !resource.is_empty() {
        details.insert("kind".into(), Value::from(resource));
    }
    let status = Status {
        code: 403,
        success: false,
        message: Some(message),
        reason: Some("Forbidden"),
        details: Some(Box::new(details)),
        continue_token: None,
        retry_after: None,
    };
    let mut resp = status.response();
    resp.headers_mut().insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn body(resp: Response) -> (u16, Value) {
        let code = resp.status().as_u16();
        let bytes = axum::body::to_bytes(resp.into_body(), 1 << 20)
            .await
            .unwrap();
        (code, serde_json::from_slice(&bytes).unwrap())
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[tokio::test]
    async fn forbidden_matches_the_reference_capture() {
        let who = Identity {
            user: "noperm".into(),
            groups: vec!["system:authenticated".into()],
        };
        let r = Request {
            verb: "list",
            group: "",
            resource: "configmaps",
            subresource: None,
            namespace: Some("ref"),
            name: None,
        };
        let resp = *authorize(&who, &r).unwrap_err();
        assert_eq!(resp.headers()["x-content-type-options"], "nosniff");
        let (code, got) = body(resp).await;
        // kube-apiserver 1.32's answer, as captured for a user without the permission.
        let want = serde_json::json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": "configmaps is forbidden: User \"noperm\" cannot list resource \
                        \"configmaps\" in API group \"\" in the namespace \"ref\"",
            "reason": "Forbidden",
            "details": {"kind": "configmaps"},
            "code": 403
        });
        assert_eq!(code, 403);
        assert_eq!(got, want);
    }

    #[test]
    fn the_policy() {
        let as_user =
            |u: &str| impersonate(Identity::admin(), &headers(&[("impersonate-user", u)])).unwrap();
        let req = |verb| Request {
            verb,
            group: "apps",
            resource: "deployments",
            subresource: None,
            namespace: None,
            name: None,
        };
        assert!(authorize(&as_user(WATCHER), &req("watch")).is_ok());
        assert!(authorize(&as_user(LISTER), &req("list")).is_ok());
        assert!(authorize(&as_user(LISTER), &req("watch")).is_err());
        assert!(authorize(&as_user(NOBODY), &req("list")).is_err());
        assert!(authorize(&as_user(NOBODY), &req("create")).is_err());
        assert!(authorize(&as_user(VIEWER), &req("watch")).is_ok());
        assert!(authorize(&as_user(VIEWER), &req("create")).is_err());
        let secrets = |verb| Request {
            verb,
            group: "",
            resource: "secrets",
            subresource: None,
            namespace: Some("default"),
            name: None,
        };
        assert!(authorize(&as_user(VIEWER), &secrets("list")).is_err());
        assert!(authorize(&as_user(VIEWER), &secrets("watch")).is_err());
        assert!(authorize(&as_user(WATCHER), &secrets("list")).is_ok());
        let sa = as_user(NOBODY);
        assert!(sa
            .groups
            .contains(&"system:serviceaccounts:default".to_owned()));
        let masters = impersonate(
            Identity::admin(),
            &headers(&[("impersonate-user", "jane"), ("impersonate-group", MASTERS)]),
        )
        .unwrap();
        assert!(authorize(&masters, &req("delete")).is_ok());
    }

    #[tokio::test]
    async fn only_masters_may_impersonate() {
        let jane = Identity {
            user: "jane".into(),
            groups: vec!["system:authenticated".into()],
        };
        let resp = *impersonate(jane, &headers(&[("impersonate-user", "bob")])).unwrap_err();
        let (code, got) = body(resp).await;
        assert_eq!(code, 403);
        assert_eq!(
            got["message"],
            "users \"bob\" is forbidden: User \"jane\" cannot impersonate resource \"users\" \
             in API group \"\" at the cluster scope"
        );
    }

    #[test]
    fn authentication() {
        let peer = PeerCert {
            common_name: "carol".into(),
            organizations: vec!["team-a".into()],
        };
        let none = HeaderMap::new();
        assert_eq!(authenticate("t", &none, Some(&peer)).unwrap().user, "carol");
        assert!(authenticate("t", &none, None).is_err());
        let wrong = headers(&[("authorization", "Bearer nope")]);
        assert!(authenticate("t", &wrong, Some(&peer)).is_err());
        let right = headers(&[("authorization", "Bearer t")]);
        assert_eq!(authenticate("t", &right, None).unwrap().user, ADMIN);
    }

    #[test]
    fn reads_cn_and_o_from_a_certificate() {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "carol");
        params
            .distinguished_name
            .push(rcgen::DnType::OrganizationName, "team-a");
        let cert = params.self_signed(&key).unwrap();
        let p = PeerCert::from_der(cert.der()).unwrap();
        assert_eq!(p.common_name, "carol");
        assert_eq!(p.organizations, vec!["team-a".to_owned()]);
    }
}
