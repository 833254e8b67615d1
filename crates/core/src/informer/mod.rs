//! The informer: what client-go's `sharedIndexInformer` does with a reflector's queue.
//! [`consume`] pops the queue, applies each pop to the store and turns it into records,
//! deciding what is printed ([`filter`]), what the owner graph of `--follow` lets through
//! ([`follow`]), when a run ends ([`until`]) and which managers fight over a field
//! ([`conflict`]); the application's features (`--stats`, `--metrics`, the progress line)
//! watch it through [`consume::Observer`]. It writes into printers and knows no terminal.

pub mod conflict;
pub mod consume;
pub mod filter;
pub mod follow;
pub mod freshness;
pub mod until;
