//! client-go releases and the informer each one builds (`--client-go`): its queue and
//! how that queue pops and queues relists, and whether its reflector starts with a
//! streaming list. Each is the release's feature-gate defaults (`features/known_features.go`)
//! and `tools/cache/controller.go`'s `newQueueFIFO` and `processLoop`:
//!
//! | release | InOrderInformers | InOrderInformersBatchProcess | AtomicFIFO | WatchListClient |
//! |---|---|---|---|---|
//! | 0.32 | — (DeltaFIFO) | — | — | off |
//! | 0.33, 0.34 | on (RealFIFO) | — | — | off |
//! | 0.35 | on | on (`PopBatch`) | — | on |
//! | 0.36, 0.37 | on | on | on (`ReplacedAll`, `SyncAll`, `Bookmark` deltas) | on |
//!
//! 0.36's `UnlockWhileProcessingFIFO` (the queue is unlocked while a pop is processed) is
//! on too; nothing kwatch prints depends on it. 0.37 changes no gate and nothing of the
//! reflector or the queues (its differences, docs/client-go-fidelity.md, are outside what
//! an informer shows). Patch releases do not change any of this.
//!
//! Without `--client-go` the release is the server's: [`Release::for_server`] maps
//! `/version`'s minor to the client-go built with it (kube-apiserver 1.32 → client-go
//! 0.32), so that kwatch shows what a controller built for that cluster sees.
//! [`Informer::choose`] combines the release with `--fifo` and `--legacy-sync`.

use std::fmt;

use crate::cache::queue::FifoKind;
use crate::cache::real_fifo::{RealFifoOptions, DEFAULT_BATCH_SIZE};
use crate::cache::reflector::WatchListMode;

/// A client-go release whose informer kwatch reproduces.
///
/// ```
/// use kwatch_core::cache::reflector::WatchListMode;
/// use kwatch_core::cache::release::{Informer, Release};
///
/// // As `--client-go` takes it, or as Kubernetes names the minor it ships with.
/// assert_eq!(Release::parse("v0.35.2")?, Release::V0_35);
/// assert_eq!(Release::parse("1.35")?, Release::V0_35);
/// assert!(Release::parse("0.31").is_err());
/// // Each release's informer: its queue and whether it starts with a streaming list.
/// assert_eq!(Release::V0_32.queue().name(), "DeltaFIFO");
/// assert_eq!(Release::V0_35.queue().name(), "RealFIFO+batch");
/// assert_eq!(Release::V0_36.queue().name(), "RealFIFO+batch+atomic");
/// assert_eq!(Release::V0_35.watch_list(), WatchListMode::On);
/// // The release a server's /version names (a managed cluster's `32+` too).
/// assert_eq!(Release::for_server("1", "32+"), Some(Release::V0_32));
/// assert_eq!(Release::for_server("1", "40"), Some(Release::NEWEST));
/// assert_eq!(Informer::from(Release::V0_33).queue.name(), "RealFIFO");
/// # Ok::<(), kwatch_core::cache::release::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Release {
    V0_32,
    V0_33,
    V0_34,
    V0_35,
    V0_36,
    V0_37,
}

/// What `--client-go` takes, for help and errors.
pub const SUPPORTED: &str = "0.32, 0.33, 0.34, 0.35, 0.36, 0.37";

/// Why a release or a combination of informer flags was refused: one line naming a fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    #[error(
        "{0:?} is not a client-go release: give one of {SUPPORTED} (or v0.35.2, or \
         Kubernetes' 1.35)"
    )]
    NotARelease(String),
    /// A well-formed release kwatch has no informer of: client-go 0.`minor`, named by its
    /// Kubernetes minor when `major` is 1.
    #[error(
        "client-go 0.{minor}{} is not a release whose informer kwatch \
         reproduces: give one of {SUPPORTED}",
        kubernetes(*.major, *.minor)
    )]
    Unsupported { major: u32, minor: u32 },
    #[error(
        "--fifo real: client-go {0} has no RealFIFO (it came with 0.33): \
         use --client-go 0.33 or later, or leave --fifo out"
    )]
    NoRealFifo(Release),
    #[error(
        "--legacy-sync applies to DeltaFIFO only (a {} relist always queues \
         Replaced): leave it out, or add --fifo delta",
        .0.name()
    )]
    LegacySync(QueueChoice),
}

/// ` (Kubernetes 1.35)` for a release given as Kubernetes' (major 1), else nothing.
fn kubernetes(major: u32, minor: u32) -> String {
    if major == 1 {
        format!(" (Kubernetes 1.{minor})")
    } else {
        String::new()
    }
}

impl Release {
    pub const ALL: [Release; 6] = [
        Release::V0_32,
        Release::V0_33,
        Release::V0_34,
        Release::V0_35,
        Release::V0_36,
        Release::V0_37,
    ];

    /// The newest release kwatch reproduces: a newer server's informer is this one's.
    pub const NEWEST: Release = Release::V0_37;

    /// `0.35`, `v0.35.2`, or Kubernetes' `1.35` / `v1.35.1` (client-go 0.N ships with
    /// Kubernetes 1.N). Any other minor, 0.31 among them, is refused: kwatch runs no
    /// release it was not asked for.
    pub fn parse(s: &str) -> Result<Release, Error> {
        let bad = || Error::NotARelease(s.to_owned());
        let t = s.trim();
        let t = t.strip_prefix('v').unwrap_or(t);
        let parts: Vec<&str> = t.split('.').collect();
        let number = |p: &str| {
            (!p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
                .then(|| p.parse::<u32>().ok())
                .flatten()
        };
        let (major, minor) = match parts.as_slice() {
            [major, minor] | [major, minor, _] => (number(major), number(minor)),
            _ => return Err(bad()),
        };
        if parts.len() == 3 && number(parts[2]).is_none() {
            return Err(bad());
        }
        let (Some(major @ (0 | 1)), Some(minor)) = (major, minor) else {
            return Err(bad());
        };
        Ok(match minor {
            32 => Release::V0_32,
            33 => Release::V0_33,
            34 => Release::V0_34,
            35 => Release::V0_35,
            36 => Release::V0_36,
            37 => Release::V0_37,
            _ => return Err(Error::Unsupported { major, minor }),
        })
    }

    /// What a watch uses when the server's `/version` cannot be read or parsed: the oldest
    /// release (DeltaFIFO and a paged LIST, which every server serves).
    pub const FALLBACK: Release = Release::V0_32;

    /// The client-go release built with the Kubernetes of `/version`'s `major` and `minor`
    /// (client-go 0.N ships with Kubernetes 1.N), clamped to the supported range; `None`
    /// when they are not a Kubernetes 1.x version. Managed clusters report a minor such
    /// as `32+` (EKS, GKE): the `+` is dropped.
    pub fn for_server(major: &str, minor: &str) -> Option<Release> {
        let minor = minor.strip_suffix('+').unwrap_or(minor);
        if major != "1" || minor.is_empty() || !minor.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let minor: u32 = minor.parse().ok()?;
        Some(match minor {
            0..=32 => Release::V0_32,
            33 => Release::V0_33,
            34 => Release::V0_34,
            35 => Release::V0_35,
            36 => Release::V0_36,
            _ => Release::NEWEST,
        })
    }

    /// The Kubernetes minor whose k8s.io/api the release is built with (`0.35`: 35): the
    /// types a controller of that release decodes protobuf into.
    pub fn minor(self) -> u32 {
        match self {
            Release::V0_32 => 32,
            Release::V0_33 => 33,
            Release::V0_34 => 34,
            Release::V0_35 => 35,
            Release::V0_36 => 36,
            Release::V0_37 => 37,
        }
    }

    /// `0.35`.
    pub fn as_str(self) -> &'static str {
        match self {
            Release::V0_32 => "0.32",
            Release::V0_33 => "0.33",
            Release::V0_34 => "0.34",
            Release::V0_35 => "0.35",
            Release::V0_36 => "0.36",
            Release::V0_37 => "0.37",
        }
    }

    /// The informer's queue with the release's defaults: DeltaFIFO before 0.33
    /// (InOrderInformers), batch pops from 0.35, atomic from 0.36.
    pub fn queue(self) -> QueueChoice {
        match self {
            Release::V0_32 => QueueChoice::Delta,
            Release::V0_33 | Release::V0_34 => QueueChoice::Real(RealFifoOptions::default()),
            Release::V0_35 => QueueChoice::Real(RealFifoOptions {
                batch_size: Some(DEFAULT_BATCH_SIZE),
                atomic: false,
            }),
            Release::V0_36 | Release::V0_37 => QueueChoice::Real(RealFifoOptions {
                batch_size: Some(DEFAULT_BATCH_SIZE),
                atomic: true,
            }),
        }
    }

    /// WatchListClient's default: off through 0.34, on from 0.35 (a streaming list at
    /// every ListAndWatch, LIST when it fails: kwatch's `on`).
    pub fn watch_list(self) -> WatchListMode {
        if self >= Release::V0_35 {
            WatchListMode::On
        } else {
            WatchListMode::Off
        }
    }
}

impl fmt::Display for Release {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The informer's queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueChoice {
    Delta,
    Real(RealFifoOptions),
}

impl QueueChoice {
    /// What records and `--stats` call it: `DeltaFIFO`, `RealFIFO`, `RealFIFO+batch` (batch
    /// pops), `RealFIFO+batch+atomic`.
    pub fn name(self) -> &'static str {
        match self {
            QueueChoice::Delta => "DeltaFIFO",
            QueueChoice::Real(o) => match (o.batch_size.is_some(), o.atomic) {
                (false, false) => "RealFIFO",
                (true, false) => "RealFIFO+batch",
                (true, true) => "RealFIFO+batch+atomic",
                (false, true) => "RealFIFO+atomic",
            },
        }
    }
}

/// The informer flags as given (`--client-go`, `--fifo`, `--legacy-sync`,
/// `--watch-list`): each cluster's [`Informer`] once its server's release is known.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InformerFlags {
    pub client_go: Option<Release>,
    pub fifo: Option<FifoKind>,
    pub legacy_sync: bool,
    pub watch_list: Option<WatchListMode>,
}

impl InformerFlags {
    /// The informer for a server whose release is `server` (see [`Informer::choose`]).
    pub fn informer(&self, server: Release) -> Result<Informer, Error> {
        Informer::choose(self.client_go, server, self.fifo, self.legacy_sync)
    }

    /// The conflicts between the flags, before any request (they never depend on the
    /// server).
    pub fn check(&self) -> Result<(), Error> {
        self.informer(Release::FALLBACK).map(|_| ())
    }
}

/// The informer a watch builds: its client-go release and queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Informer {
    pub release: Release,
    pub queue: QueueChoice,
}

impl From<Release> for Informer {
    /// The release's own informer: its queue, as neither `--fifo` nor `--legacy-sync`
    /// changes it.
    fn from(release: Release) -> Informer {
        Informer {
            release,
            queue: release.queue(),
        }
    }
}

impl Informer {
    /// `--client-go` (`explicit`), else the server's release (`server`, see
    /// [`Release::for_server`]), with `--fifo` and `--legacy-sync`: an explicit `--fifo`
    /// picks the queue (`real`: the release's RealFIFO), else the release's. Without
    /// `--client-go`, `--fifo real` on a server whose release has no RealFIFO is 0.33 (the
    /// first release with one), and `--legacy-sync` (a DeltaFIFO option) keeps a DeltaFIFO
    /// on a server whose release has a RealFIFO. `Err` (one line naming the conflict and a
    /// fix) depends on the flags only, never on `server`.
    pub fn choose(
        explicit: Option<Release>,
        server: Release,
        fifo: Option<FifoKind>,
        legacy_sync: bool,
    ) -> Result<Informer, Error> {
        let release = match (explicit, fifo) {
            (Some(r), _) => r,
            (None, Some(FifoKind::Real)) if server.queue() == QueueChoice::Delta => Release::V0_33,
            (None, _) => server,
        };
        let queue = match fifo {
            Some(FifoKind::Delta) => QueueChoice::Delta,
            None if legacy_sync && explicit.is_none() => QueueChoice::Delta,
            None => release.queue(),
            Some(FifoKind::Real) => match release.queue() {
                QueueChoice::Real(o) => QueueChoice::Real(o),
                QueueChoice::Delta => return Err(Error::NoRealFifo(release)),
            },
        };
        if legacy_sync && queue != QueueChoice::Delta {
            return Err(Error::LegacySync(queue));
        }
        Ok(Informer { release, queue })
    }

    /// The reflector's streaming-list mode: an explicit `--watch-list`, else the release's;
    /// `--page-size` turns a mode that was not asked for as `on`/`off` off.
    pub fn watch_list(&self, explicit: Option<WatchListMode>, page_size: bool) -> WatchListMode {
        let mode = explicit.unwrap_or(self.release.watch_list());
        let defaulted = explicit.is_none() || mode == WatchListMode::Auto;
        if defaulted && page_size {
            WatchListMode::Off
        } else {
            mode
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_as_client_go_or_kubernetes_minors() {
        for (s, want) in [
            ("0.32", Release::V0_32),
            ("v0.33", Release::V0_33),
            ("0.34.10", Release::V0_34),
            ("v0.35.2", Release::V0_35),
            ("1.35", Release::V0_35),
            ("v1.36.1", Release::V0_36),
            (" 0.36 ", Release::V0_36),
            ("v0.37.0", Release::V0_37),
            ("1.37", Release::V0_37),
        ] {
            assert_eq!(Release::parse(s), Ok(want), "{s}");
        }
        for s in [
            "", "0", "35", "0.35.x", "2.35", "0.35.1.1", "v", "0.3a", "+0.35", "0.-1",
        ] {
            let e = Release::parse(s).unwrap_err().to_string();
            assert!(
                e.contains("is not a client-go release") && e.contains(SUPPORTED),
                "{s}: {e}"
            );
        }
        for s in ["0.30", "0.31", "1.31", "1.29", "0.38"] {
            let e = Release::parse(s).unwrap_err().to_string();
            assert!(e.contains(SUPPORTED) && !e.contains('\n'), "{s}: {e}");
        }
        for r in Release::ALL {
            assert_eq!(Release::parse(r.as_str()), Ok(r));
        }
    }

    #[test]
    fn each_release_has_its_feature_gate_defaults() {
        let got: Vec<(&str, &str, WatchListMode)> = Release::ALL
            .iter()
            .map(|r| (r.as_str(), r.queue().name(), r.watch_list()))
            .collect();
        assert_eq!(
            got,
            [
                ("0.32", "DeltaFIFO", WatchListMode::Off),
                ("0.33", "RealFIFO", WatchListMode::Off),
                ("0.34", "RealFIFO", WatchListMode::Off),
                ("0.35", "RealFIFO+batch", WatchListMode::On),
                ("0.36", "RealFIFO+batch+atomic", WatchListMode::On),
                ("0.37", "RealFIFO+batch+atomic", WatchListMode::On),
            ]
        );
    }

    #[test]
    fn the_servers_minor_names_the_release_clamped_to_the_supported_range() {
        for (major, minor, want) in [
            ("1", "32", Some(Release::V0_32)),
            ("1", "32+", Some(Release::V0_32)),
            ("1", "33", Some(Release::V0_33)),
            ("1", "35", Some(Release::V0_35)),
            ("1", "36", Some(Release::V0_36)),
            ("1", "37", Some(Release::V0_37)),
            ("1", "37+", Some(Release::V0_37)),
            ("1", "31", Some(Release::V0_32)),
            ("1", "20", Some(Release::V0_32)),
            ("1", "40", Some(Release::V0_37)),
            ("1", "99999999999999999999", None),
            ("1", "", None),
            ("1", "+", None),
            ("1", "32++", None),
            ("1", "x", None),
            ("1", " 32", None),
            ("2", "32", None),
            ("", "", None),
        ] {
            assert_eq!(Release::for_server(major, minor), want, "{major}.{minor}");
        }
    }

    #[test]
    fn fifo_and_legacy_sync_combine_with_the_release() {
        let s32 = Release::V0_32;
        let s35 = Release::V0_35;
        let choose = |r, server, f, l| Informer::choose(r, server, f, l);
        let name = |r, server, f, l| choose(r, server, f, l).map(|i| i.queue.name());
        let (r32, r36) = (Some(Release::V0_32), Some(Release::V0_36));
        let (delta, real) = (Some(FifoKind::Delta), Some(FifoKind::Real));
        // Without --client-go: the server's release.
        assert_eq!(
            choose(None, s32, None, false),
            Ok(Informer {
                release: s32,
                queue: QueueChoice::Delta
            })
        );
        assert_eq!(name(None, s35, None, false), Ok("RealFIFO+batch"));
        // --fifo real on a server whose release has none: 0.33's informer.
        let i = choose(None, s32, real, false).unwrap();
        assert_eq!((i.release, i.queue.name()), (Release::V0_33, "RealFIFO"));
        let i = choose(None, s35, real, false).unwrap();
        assert_eq!((i.release, i.queue.name()), (s35, "RealFIFO+batch"));
        let i = choose(None, s35, delta, false).unwrap();
        assert_eq!((i.release, i.queue.name()), (s35, "DeltaFIFO"));
        // --legacy-sync without --client-go keeps a DeltaFIFO.
        assert_eq!(name(None, s32, None, true), Ok("DeltaFIFO"));
        let i = choose(None, s35, None, true).unwrap();
        assert_eq!((i.release, i.queue.name()), (s35, "DeltaFIFO"));
        // --client-go wins over the server; --fifo overrides the release's queue.
        for server in Release::ALL {
            assert_eq!(name(r36, server, None, false), Ok("RealFIFO+batch+atomic"));
            assert_eq!(choose(r32, server, None, false).unwrap().release, s32);
        }
        assert_eq!(name(r36, s32, delta, false), Ok("DeltaFIFO"));
        assert_eq!(name(r36, s32, real, false), Ok("RealFIFO+batch+atomic"));
        assert_eq!(name(r36, s32, delta, true), Ok("DeltaFIFO"));
        let e = name(r32, s35, real, false).unwrap_err().to_string();
        assert!(e.contains("client-go 0.32 has no RealFIFO"), "{e}");
        // Errors come from the flags alone, whatever the server.
        for server in Release::ALL {
            for (r, f) in [(None, real), (r36, None), (Some(Release::V0_33), None)] {
                let e = name(r, server, f, true).unwrap_err().to_string();
                assert!(
                    e.starts_with("--legacy-sync applies to DeltaFIFO only"),
                    "{e}"
                );
                assert!(e.contains("--fifo delta") && !e.contains('\n'), "{e}");
            }
        }
    }

    #[test]
    fn watch_list_follows_the_flag_then_the_release() {
        use WatchListMode::{Auto, Off, On};
        let with = |release| Informer {
            release,
            queue: QueueChoice::Delta,
        };
        let (old, new) = (with(Release::V0_34), with(Release::V0_35));
        assert_eq!(old.watch_list(None, false), Off);
        assert_eq!(new.watch_list(None, false), On);
        assert_eq!(new.watch_list(Some(Off), false), Off);
        assert_eq!(old.watch_list(Some(On), false), On);
        assert_eq!(old.watch_list(Some(Auto), false), Auto);
        // --page-size turns off what was not asked for as on.
        assert_eq!(new.watch_list(None, true), Off);
        assert_eq!(old.watch_list(Some(Auto), true), Off);
        assert_eq!(old.watch_list(Some(On), true), On);
    }
}
