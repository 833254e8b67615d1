//! The integration test binary: every `tests/*.rs` module is compiled into this one binary
//! (`autotests = false` in Cargo.toml); shared helpers live in `tests/util`. Modules are
//! named by feature: the output formats (`table`, `script_formats`, `json_yaml`,
//! `colour_and_progress`), the command line (`cli_args`, `connect`, `contexts`, `exits`,
//! `help_and_generated`), the informer (`reflector`, `faults`, `retry_after`, `resync`,
//! `client_go`, `handlers`, `consistency`, `chaos`), the owner graph (`follow`: `--follow`,
//! `--events`), failures before the sync (`failures`),
//! hostile servers and input, the simulator itself (`sim_protocol`, `sim_kubectl`,
//! `sim_controllers`), the wire (`wire`: protobuf), `kwatch check` against bent servers
//! (`check`), kwatch-core's example program as a library user runs it
//! (`informer_example`), `--timeline`'s page in a browser (`timeline`), `--record` into a
//! real PostgreSQL and SQLite and replay from them (`record_db`), and the paths and test
//! filters the docs name (`docs`).

mod util;

mod all_resources;
mod blame;
mod chaos;
mod check;
mod cli_args;
mod client_go;
mod colour_and_progress;
mod compression;
mod connect;
mod consistency;
mod contexts;
mod discovery;
mod docs;
mod exits;
mod failures;
mod faults;
mod fleet;
mod fleet_changes;
mod follow;
mod freshness;
mod handlers;
mod health;
mod help_and_generated;
mod hostile_input;
mod hostile_servers;
mod informer_example;
mod json_yaml;
mod live;
mod metadata_only;
mod metrics;
mod probe;
mod record_db;
mod reflector;
mod replay;
mod resync;
mod retry_after;
mod script_formats;
mod sim_controllers;
mod sim_kubectl;
mod sim_protocol;
mod table;
mod table_fallback;
mod timeline;
mod why;
mod wire;
