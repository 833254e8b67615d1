//! Exit codes, documented in README "Exit codes".

/// The process's exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Exit {
    /// The watch ended as asked (--max-events, --until-synced, --timeout), the --until
    /// condition was met, or stdout was closed.
    Ok = 0,
    /// An error: bad kubeconfig, unreachable server, unknown resource, rejected request.
    Error = 1,
    /// Bad command-line usage (clap's code).
    Usage = 2,
    /// --until CONDITION: --timeout elapsed before the condition was met.
    TimedOut = 3,
    /// --until CONDITION: the watch ended otherwise (--max-events, --until-synced)
    /// before the condition was met.
    NotMet = 4,
    /// Several contexts: the run ended as for [`Exit::Ok`], but at least one context was
    /// left out (it failed for good, or had not synced at --timeout) while the others
    /// were watched.
    NotAllSynced = 5,
    /// Hung up (128 + SIGHUP): the terminal went away.
    HungUp = 129,
    /// Interrupted by Ctrl-C (128 + SIGINT).
    Interrupted = 130,
    /// Terminated (128 + SIGTERM), as `kill` and `timeout(1)` stop a process.
    Terminated = 143,
}

/// An error already worded as the whole line to print, as kubectl words it (`Error from
/// server (Forbidden): …`): printed as it is, without kwatch's `error: `.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Worded(pub String);

/// Bad usage found only once the kubeconfig is read (the flags and the kubeconfig
/// together): exit [`Exit::Usage`], as the command line's own errors.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Usage(pub String);

/// The exit code of a failed run: [`Exit::Usage`] for a [`Usage`] error, else
/// [`Exit::Error`].
pub fn code(err: &anyhow::Error) -> Exit {
    if err.chain().any(|e| e.is::<Usage>()) {
        Exit::Usage
    } else {
        Exit::Error
    }
}

/// The line to print for `err`: a [`Worded`] error as it is, anything else as
/// `error: ` and [`one_line`].
pub fn message(err: &anyhow::Error) -> String {
    match err.chain().find_map(|e| e.downcast_ref::<Worded>()) {
        Some(w) => w.0.clone(),
        None => format!("error: {}", one_line(err)),
    }
}

/// A broken pipe anywhere in the error chain: the reader went away, which is not an error.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// The error and its causes on one line, each cause once (many errors already quote
/// their source in their own message).
pub fn one_line(err: &anyhow::Error) -> String {
    let mut out = String::new();
    for e in err.chain() {
        let text = e.to_string().replace('\n', " ");
        if out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

/// How a watch ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A stop condition was met (--max-events, --until-synced, --timeout) or the
    /// output was closed by its reader; without --until.
    Done,
    /// The --until condition was met.
    Met,
    /// --until was given and --timeout elapsed first.
    TimedOut,
    /// --until was given and the watch ended otherwise first (--max-events,
    /// --until-synced, output closed).
    NotMet,
    /// Several contexts, without --until: the run ended as [`Outcome::Done`] would, but
    /// not every context synced (one failed for good, or had not synced at --timeout).
    NotAllSynced,
    /// SIGINT (Ctrl-C).
    Interrupted,
    /// SIGTERM.
    Terminated,
    /// SIGHUP.
    HungUp,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_drops_repeated_causes() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file");
        let err = anyhow::Error::new(io)
            .context("failed to read kubeconfig: No such file")
            .context("cannot load kubeconfig");
        assert_eq!(
            one_line(&err),
            "cannot load kubeconfig: failed to read kubeconfig: No such file"
        );
        let broken = anyhow::Error::new(std::io::Error::from(std::io::ErrorKind::BrokenPipe))
            .context("writing output");
        assert!(is_broken_pipe(&broken));
        assert!(!is_broken_pipe(&err));
    }
}
