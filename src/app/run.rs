//! kwatch-core's informer state as a run of the application has it: its failures are the
//! application's errors (`anyhow`), so that the watch, the probes and the loading line
//! share one type without importing each other.

use crate::informer::consume;

/// What the informer loops of a run share, failing with the application's errors.
pub type Shared = consume::Shared<anyhow::Error>;
/// Why a run's informers stop, a failure being the application's error.
pub type Stop = consume::Stop<anyhow::Error>;
