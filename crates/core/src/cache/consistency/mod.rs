//! `--check-consistency`: is the informer's cache right?
//!
//! client-go's data consistency detector (`util/consistencydetector/
//! data_consistency_detector.go`, called by `tools/cache/reflector_data_consistency_detector.go`,
//! v0.32) LISTs at the resourceVersion the informer's data came from with
//! `resourceVersionMatch=Exact` — the server's state at exactly that revision, from etcd —
//! and compares it with that data; it panics on a difference, and only in client-go's CI
//! (`KUBE_WATCHLIST_INCONSISTENCY_DETECTOR`). kwatch makes it a check a user can run:
//! periodically, against the informer's store while it watches, reporting the keys that
//! differ instead of panicking. A watch that silently lost an event shows up here and
//! nowhere else.
//!
//! [`report`] holds what a check found ([`Report`]) and the comparison itself ([`compare`]),
//! both pure; [`check`] holds where a check is taken (the sync points) and the task that
//! runs the checks.

pub mod check;
mod report;

pub use report::{compare, Diff, Report};
