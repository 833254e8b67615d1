//! Talking to the API server: the HTTP client with kubectl's certificate checks
//! ([`connect`], gzip bodies read as Go reads them: [`gunzip`]), one request and its
//! Status, warnings and notices ([`http`]), the
//! [`ListerWatcher`](crate::cache::listwatch::ListerWatcher) over it and single GETs
//! ([`source`]) with list bodies split as they arrive ([`list`]) and watch lines
//! ([`watch`]), discovery through kubectl's disk cache ([`discovery`]),
//! and what the user typed resolved against it: one resource ([`target`]), a list, `all`
//! or `--every-resource` ([`expand`]).
//!
//! Imports the foundation and [`crate::cache`], nothing above.

pub mod connect;
pub mod discovery;
pub mod expand;
pub mod gunzip;
pub mod http;
pub mod keepalive;
pub mod list;
pub mod protobuf;
pub mod source;
pub mod target;
pub mod watch;
