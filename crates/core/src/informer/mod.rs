//! The informer: what client-go's `sharedIndexInformer` does with a reflector's queue,
//! and what it tells. [`consume`] pops the queue, applies each pop to the store and turns
//! it into [`record::Record`]s handed to the run's [`sink::Sink`]s, deciding what is
//! printed ([`filter`]), what the owner graph of `--follow` lets through ([`follow`]), when
//! a run ends ([`until`]) and which managers fight over a field ([`conflict`], from each
//! change's [`blame`]); a delta's [`diff`] is made here for every sink that shows it. The
//! application's features (`--stats`, `--metrics`, the progress line) watch it through
//! [`sink::Observer`]. It knows no printer and no terminal: records flow down to the
//! sinks the application gives it.
//!
//! [`builder::SharedInformer`] starts one informer of a client-go release on any
//! ListerWatcher, with event handlers, for a program that uses this crate as a library.

pub mod blame;
pub mod builder;
pub mod conflict;
pub mod consume;
pub mod diff;
pub mod filter;
pub mod follow;
pub mod freshness;
pub mod record;
pub mod sink;
pub mod until;
