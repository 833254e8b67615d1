//! A server's Table (`as=Table`) as the table prints it: which of its columns to show and
//! each cell as kubectl's tableprinter.go prints it.

use serde_json::Value;

use super::column::{Column, Getter};
use crate::gofmt::go_value;

/// The columns of a server's Table after its name column (kwatch prints NAME itself):
/// those of priority 0, and with `-o wide` all (kubectl's tableprinter.go `printTable`:
/// `if !options.Wide && column.Priority != 0 { continue }`).
pub fn server_columns(defs: &[crate::cache::object::TableColumn], wide: bool) -> Vec<Column> {
    defs.iter()
        .enumerate()
        .filter(|(i, d)| !(*i == 0 && d.format == "name"))
        .filter(|(_, d)| wide || d.priority == 0)
        .map(|(i, d)| Column {
            header: d.name.to_uppercase(),
            get: Getter::Server(i),
        })
        .collect()
}

/// A cell of a server's Table as kubectl's tableprinter.go prints it: a string up to its
/// first `\f`, `\n` or `\r` followed by `...` when cut there (`appendCellValue`), `null`
/// as nothing, anything else as Go's `fmt.Sprint` of the decoded value (integers int64,
/// other numbers float64). The server formats dates itself (an `Age` cell is `5m`, a
/// `Created At` cell RFC 3339): kubectl's printer does not translate `format: date`.
pub fn server_cell(cell: &Value) -> String {
    match cell {
        Value::Null => String::new(),
        Value::String(s) => match s.find(['\u{c}', '\n', '\r']) {
            Some(at) => format!("{}...", &s[..at]),
            None => s.clone(),
        },
        v => go_value(v),
    }
}
