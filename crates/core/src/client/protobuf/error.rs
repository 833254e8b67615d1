//! Why protobuf bytes could not be turned into JSON ([`DecodeError`]; the caller falls back
//! to JSON), and why a generated table could not be read ([`TableError`]).

/// Why bytes could not be turned into JSON; the caller falls back to JSON.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error(
        "protobuf: field {field} of {message} is not in kwatch's table of Kubernetes 1.{minor}"
    )]
    UnknownField {
        message: String,
        field: u64,
        minor: u32,
    },
    #[error("protobuf: no {kind} of {api_version} in kwatch's table of Kubernetes 1.{minor}")]
    UnknownKind {
        api_version: String,
        kind: String,
        minor: u32,
    },
    #[error("protobuf: {0}")]
    Malformed(String),
    #[error("protobuf: kwatch's table of Kubernetes 1.{0} is broken: {1}")]
    Table(u32, TableError),
}

/// Why a table's text could not be read (a broken `tables/v1.MINOR.json`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TableError {
    /// The text is not JSON (serde_json's message).
    #[error("{0}")]
    Json(String),
    /// A part the table must have, missing or not of its shape.
    #[error("{0}")]
    Missing(&'static str),
    #[error("{message}: unknown special {special:?}")]
    UnknownSpecial { message: String, special: String },
    /// A field of `message` that could not be read.
    #[error("{message}: {error}")]
    Field {
        message: String,
        error: Box<TableError>,
    },
    #[error("unknown type {0:?}")]
    UnknownType(String),
    #[error("a bad kind: {0}")]
    BadKind(String),
    /// A number too large for the table's indices.
    #[error(transparent)]
    OutOfRange(#[from] std::num::TryFromIntError),
}
