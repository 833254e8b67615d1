//! What the reflector announces, in the order it did it: [`ReflectorEvent`], the
//! reflector's own lifecycle (lists and their pages, watches and why each ended,
//! bookmarks, backoffs, relists, retries, fallbacks, what the server bent). What other
//! parts observe beside it (freshness, latency, conflicts, a store's cost, consistency)
//! is theirs, not a variant of this enum.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::cache::listwatch::Transfer;
use crate::cache::retry::Retry;

/// What the reflector did, in the order it did it.
///
/// Its serde form is the record's (docs/output-schema.md): `type` the variant's name,
/// the fields in camelCase in declaration order, durations in the unit their name says.
/// `output::record` writes it between the record's head and its informer fields, and
/// `kwatch replay` reads it back with this same derive: this is the schema's one
/// definition of a reflector event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all_fields = "camelCase")]
pub enum ReflectorEvent {
    /// A list begins. `reason`: "initial", or why the previous attempt failed.
    /// `streaming`: a watch-list (KEP-3157) rather than a LIST.
    List {
        resource_version: String,
        limit: u32,
        reason: String,
        streaming: bool,
        /// What the requests ask for first: `protobuf` when they ask Kubernetes' protobuf
        /// (`--wire`, a built-in type), else `json`; `+gzip` when they accept gzip
        /// ([`ReflectorConfig::gzip`]). `Listed` says what came. `None` in recordings made
        /// before records named it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        encoding: Option<String>,
    },
    /// A list succeeded; `Replace` follows.
    Listed {
        resource_version: String,
        items: usize,
        pages: u32,
        #[serde(rename = "ms", with = "crate::units::millis")]
        elapsed: Duration,
        /// An expired continue token made the pager fall back to one full list.
        full_list_fallback: bool,
        streaming: bool,
        /// The content type and encoding the bodies came in: `json` or `protobuf`, `+gzip`
        /// when a page came gzip-compressed ([`crate::cache::listwatch::Transfer::encoding`];
        /// a streaming list's, its watch's content type). `None` only in recordings made
        /// before records named it (JSON, then).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        encoding: Option<String>,
        /// The bodies' bytes as decoded, and as read off the connection (compressed when
        /// gzip); `None` for a streaming list, whose events come over a watch.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bytes: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        wire_bytes: Option<u64>,
    },
    /// A watch is being opened.
    Watch {
        resource_version: String,
        timeout_seconds: u32,
    },
    /// A watch ended. `error` tells whether this leads to a relist. `events`: the
    /// objects it delivered (and an Error event); `bookmarks` apart (absent when 0, as in
    /// recordings made before it was counted apart).
    WatchEnded {
        reason: String,
        events: u64,
        #[serde(default, skip_serializing_if = "is_zero")]
        bookmarks: u64,
        #[serde(rename = "ms", with = "crate::units::millis")]
        elapsed: Duration,
        error: bool,
    },
    Bookmark {
        resource_version: String,
    },
    /// `--stall-after`: the watch delivered nothing (no event, no bookmark) for `silent`.
    /// `watchAge`: how long the watch has been open; `resourceVersion`: the last RV it
    /// delivered (or it started from); `restart`: `--restart-stalled` ends it now and
    /// watches again from that RV (a `WatchEnded` with reason `stalled` follows).
    Stalled {
        #[serde(rename = "silentMs", with = "crate::units::millis")]
        silent: Duration,
        #[serde(rename = "watchAgeMs", with = "crate::units::millis")]
        watch_age: Duration,
        resource_version: String,
        restart: bool,
    },
    /// Waiting before the next attempt.
    Backoff {
        #[serde(rename = "delayMs", with = "crate::units::millis")]
        delay: Duration,
        cause: String,
    },
    /// The periodic resync fired.
    Resync,
    /// The server does not do streaming lists: LIST from now on (`auto`) or this once.
    WatchListFallback {
        error: String,
    },
    /// A protobuf body could not be decoded (a field kwatch's table does not know): the
    /// resource is read in JSON from now on, the list asked again at once, a watch ended
    /// (`--wire`). Once per reflector.
    WireFallback {
        error: String,
    },
    /// The request layer is about to send a list page or watch again (see
    /// [`crate::cache::retry`]); the reflector has not seen the answer.
    Retry(#[serde(with = "wire::RetryDef")] Retry),
    /// A list or watch event served a resourceVersion lower than the highest this
    /// reflector had synced (both read as unsigned integers, as KEP-5504 allows): an HA
    /// server with a stale watch cache. The reflector goes on as client-go does.
    /// `request`: the list or watch (its query, no credentials); `held`: the highest
    /// synced.
    TimeTravel {
        request: String,
        resource_version: String,
        held: String,
    },
    /// A list or watch event served a resourceVersion that does not read as an unsigned
    /// integer: this server's resourceVersions are opaque (as the API conventions had them
    /// before KEP-5504), so no [`ReflectorEvent::TimeTravel`] can be told, not even between
    /// later versions that do read as integers. Once per reflector; `resourceVersion`: the
    /// first such.
    OpaqueResourceVersion {
        resource_version: String,
    },
    /// The server bends the list/watch protocol in a way that keeps an informer waiting,
    /// said once per reflector and problem while kwatch goes on as client-go does:
    /// `problem` is `no-end-bookmark` (a streaming list's initial events came, its
    /// `k8s.io/initial-events-end` bookmark has not), `clean-close` (watches keep closing
    /// cleanly at once, with neither an event nor 410 Expired) or `watch-forbidden` (the
    /// list worked, the watch is 403); `message` says what happened, what client-go does
    /// about it, and the upstream issue.
    Protocol {
        problem: String,
        message: String,
    },
    /// A relist's (with `resync`, a resync's) deltas are all queued; never after the
    /// initial list. The reflector queues it with empty classes behind those deltas; the
    /// informer fills them in from the deltas it popped since the relist's `Listed` (the
    /// resync's `Resync`), each compared with the store's version before it: what the
    /// relist changed in the informer's state, whichever queue coalesced what.
    /// `resourceVersion`: the list's (empty for a resync).
    Relisted {
        resource_version: String,
        resync: bool,
        /// Not known before (no previous version).
        added: KeySample,
        /// Tombstones: gone while nobody watched.
        deleted: KeySample,
        /// Another resourceVersion, same uid.
        changed: KeySample,
        /// Same key, another `metadata.uid`.
        recreated: KeySample,
        /// The same resourceVersion.
        unchanged: KeySample,
    },
}

/// A count of keys and the first [`KeySample::MAX_KEYS`] of them, in the order seen.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct KeySample {
    pub count: u64,
    pub keys: Vec<String>,
}

impl KeySample {
    pub const MAX_KEYS: usize = 20;

    pub fn push(&mut self, key: &str) {
        self.count += 1;
        if self.keys.len() < Self::MAX_KEYS {
            self.keys.push(key.to_owned());
        }
    }
}

impl ReflectorEvent {
    /// A [`ReflectorEvent::List`]: a list begins (`limit` 0: unpaginated, or streaming).
    pub fn list(resource_version: &str, limit: u32, reason: &str, streaming: bool) -> Self {
        ReflectorEvent::List {
            resource_version: resource_version.to_owned(),
            limit,
            reason: reason.to_owned(),
            streaming,
            encoding: None,
        }
    }

    /// This [`ReflectorEvent::List`] naming what its requests ask for first.
    pub(super) fn asking(mut self, protobuf: bool, gzip: bool) -> Self {
        if let ReflectorEvent::List { encoding, .. } = &mut self {
            let asked = Transfer {
                protobuf,
                gzip,
                ..Transfer::default()
            };
            *encoding = Some(asked.encoding().to_owned());
        }
        self
    }

    /// A [`ReflectorEvent::Listed`] of a LIST (not streaming) of `items` in one page, in no
    /// time, without a fallback: bodies of `encoding`, `bytes` long as decoded and as read.
    /// [`took`](Self::took), [`wire_bytes`](Self::wire_bytes) and [`paged`](Self::paged)
    /// change the rest.
    pub fn listed(resource_version: &str, items: usize, encoding: &str, bytes: u64) -> Self {
        ReflectorEvent::Listed {
            resource_version: resource_version.to_owned(),
            items,
            pages: 1,
            elapsed: Duration::ZERO,
            full_list_fallback: false,
            streaming: false,
            encoding: Some(encoding.to_owned()),
            bytes: Some(bytes),
            wire_bytes: Some(bytes),
        }
    }

    /// This [`ReflectorEvent::Listed`], taking `took`.
    pub fn took(mut self, took: Duration) -> Self {
        if let ReflectorEvent::Listed { elapsed, .. } = &mut self {
            *elapsed = took;
        }
        self
    }

    /// This [`ReflectorEvent::Listed`], its bodies `read` bytes long as read (compressed).
    pub fn wire_bytes(mut self, read: u64) -> Self {
        if let ReflectorEvent::Listed { wire_bytes, .. } = &mut self {
            *wire_bytes = Some(read);
        }
        self
    }

    /// This [`ReflectorEvent::Listed`] in `n` pages, after an expired continue token when
    /// `fallback`.
    pub fn paged(mut self, n: u32, fallback: bool) -> Self {
        if let ReflectorEvent::Listed {
            pages,
            full_list_fallback,
            ..
        } = &mut self
        {
            (*pages, *full_list_fallback) = (n, fallback);
        }
        self
    }

    /// The [`ReflectorEvent::Relisted`] the reflector queues, its classes empty.
    pub fn relisted(resource_version: &str, resync: bool) -> ReflectorEvent {
        ReflectorEvent::Relisted {
            resource_version: resource_version.to_owned(),
            resync,
            added: KeySample::default(),
            deleted: KeySample::default(),
            changed: KeySample::default(),
            recreated: KeySample::default(),
            unchanged: KeySample::default(),
        }
    }

    /// A [`ReflectorEvent::Relisted`]'s classes, named, in their order.
    pub fn relisted_classes(&self) -> Option<[(&'static str, &KeySample); 5]> {
        let ReflectorEvent::Relisted {
            added,
            deleted,
            changed,
            recreated,
            unchanged,
            ..
        } = self
        else {
            return None;
        };
        Some([
            ("added", added),
            ("deleted", deleted),
            ("changed", changed),
            ("recreated", recreated),
            ("unchanged", unchanged),
        ])
    }
}

/// The serde forms [`ReflectorEvent`] needs of types it does not own.
mod wire {
    use std::time::Duration;

    use serde::{Deserialize, Serialize};

    use crate::cache::retry::{Retry, Verb};

    /// [`Retry`] as the record writes it: the verb in lowercase, the delay in whole
    /// seconds (`retryAfterSeconds`). serde's remote derive: checked against `Retry`'s
    /// fields at compile time.
    #[derive(Serialize, Deserialize)]
    #[serde(remote = "Retry", rename_all = "camelCase")]
    pub struct RetryDef {
        #[serde(with = "VerbDef")]
        verb: Verb,
        /// `null` for a lost connection.
        code: Option<u16>,
        reason: String,
        #[serde(rename = "retryAfterSeconds", with = "crate::units::secs")]
        delay: Duration,
        attempt: u32,
        max_retries: u32,
    }

    #[derive(Serialize, Deserialize)]
    #[serde(remote = "Verb", rename_all = "lowercase")]
    enum VerbDef {
        List,
        Watch,
        Get,
    }
}

/// Serde: a count left out of a record when 0.
fn is_zero(n: &u64) -> bool {
    *n == 0
}
