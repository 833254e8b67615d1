//! Exit codes, documented in README "Exit codes".

/// The process's exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Exit {
    /// The watch ended as asked (--max-events, --until-synced, --timeout) or stdout was closed.
    Ok = 0,
    /// An error: bad kubeconfig, unreachable server, unknown resource, rejected request.
    Error = 1,
    /// Bad command-line usage (clap's code).
    Usage = 2,
    /// Interrupted by Ctrl-C (128 + SIGINT).
    Interrupted = 130,
}

/// A broken pipe anywhere in the error chain: the reader went away, which is not an error.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
