//! The resource columns of the table, as `kubectl get` prints them: built-in printers
//! for the common kinds (one file per kind family), a custom resource's
//! additionalPrinterColumns (`crd.rs`), the server's Table (`server_table.rs`), else AGE
//! alone. `column.rs` holds the column type and the once-per-row parse ([`RowObject`]),
//! `format.rs` kubectl's ways of writing values (ages, labels for `-L`/`--show-labels`),
//! `registry.rs` which printer for which resource (`BUILTIN`, [`has_printer`],
//! [`resource_columns`]). Each column turns an object (parsed once per row, only when a
//! column needs it) into one cell. [`ServerPrinter`] prints the same columns as kube-apiserver's Table rows
//! (typed cells, every column), for the simulator.

mod cluster;
mod column;
mod crd;
mod events;
mod format;
#[cfg(test)]
mod genuine;
mod network;
mod pod;
mod rbac;
mod registry;
mod server_table;
mod storage;
#[cfg(test)]
mod tests;
mod workloads;

pub use column::{Column, Getter, RowObject};
pub use crd::PrinterColumn;
pub use events::event_tree_columns;
pub use format::age;
pub use pod::PodColumn;
pub use registry::{
    group, has_printer, metadata_columns, own_kind_columns, resource_columns, tree_columns,
    ServerPrinter,
};
pub use server_table::{server_cell, server_columns};
pub use storage::access_modes;
