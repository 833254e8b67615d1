//! `--live`: the informer's cache as a table that changes in place. This is the
//! terminal-free half: [`LivePrinter`], one more [`Sink`](crate::informer::sink::Sink) of
//! the informer's records, updates a [`Model`] held behind a mutex (never the screen: the
//! informer must not block on it). The application draws the model (src/app/live/view.rs,
//! with ratatui) and owns the terminal, the keys and the render loop (at most ~30
//! frames/s, src/app/live.rs).
//!
//! Rows reuse the table's cells ([`super::table::TablePrinter::live_cells`]: kubectl's
//! columns, CRD printer columns, server Table rows, `-L`, `--show-labels`, `-o wide`,
//! KIND and CONTEXT columns), so both show the same thing.
//!
//! Invariant: a delta costs the informer a map update, never a table row, a label parse
//! or a diff. The row keeps its latest delta pending; [`Model::refresh`] makes cells only
//! for the rows a frame shows (all of them when sorting by a column), labels only when a
//! label filter needs them, and a version's diff is made when its history is opened. So
//! `--live` pops as fast as `-o json` however fast the deltas come
//! (benches/live.sh).

mod model;

pub use model::{
    lock, visible, CellMaker, Header, LivePrinter, Model, Row, RowKey, Shared, State, Version,
    EVENTS, FADE_SECS, GONE_SECS, HISTORY, HISTORY_BYTES,
};
