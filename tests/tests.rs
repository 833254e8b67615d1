//! The integration test binary: every `tests/*.rs` module is compiled into this one binary
//! (`autotests = false` in Cargo.toml); shared helpers live in `tests/util`.

mod util;

mod all_resources;
mod chaos;
mod client_go;
mod connect;
mod consistency;
mod discovery;
mod failures;
mod faults;
mod generated;
mod handlers;
mod hostile;
mod issue19_args;
mod issue19_columns;
mod issue19_connect;
mod issue19_exits;
mod issue19_fuzz;
mod issue19_reflector;
mod kubectl_habits;
mod metadata_only;
mod never_lie;
mod output;
mod output_habits;
mod replay_records;
mod resync;
mod retry_after;
mod sim_kubectl;
mod sim_protocol;
mod table_fallback;
mod watch;
