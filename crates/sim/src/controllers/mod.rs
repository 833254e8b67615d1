//! The controllers of kube-controller-manager that kwatch's `--follow` follows, and the
//! little of a kubelet they need: opt-in (`kwatch sim --controllers`,
//! `POST /_sim/controllers {"on":true}`), off by default so that the simulator stays the
//! quiet, seeded cluster the other tests rely on.
//!
//! ```text
//! storage revision moves ─▶ run: one pass under the write lock, again until a pass writes
//!                                nothing (each write is a revision of its own)
//!   pass: gc (owners gone or finalizing) → deployment → replicaset → job → kubelet
//!                                  └─ events: core/v1 Events as client-go's recorder writes them
//! ```
//!
//! Each controller is level-triggered, as the genuine ones are: it compares what the store
//! holds with what the owner asks and makes one step towards it, so the next pass sees the
//! result of the previous one (a rollout is many passes: the new ReplicaSet scaled up, its
//! pods created, run, the old one scaled down…). A pass goes over every object of the kinds
//! it concerns but parses few: owners, deletion, phase and readiness are kept parsed by the
//! storage ([`super::storage::Links`]).

mod deployment;
mod events;
mod gc;
mod job;
mod kubelet;
mod replicaset;
mod runner;

pub(crate) use runner::*;
