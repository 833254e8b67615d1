//! Reading the command line: clap's parse under the name kubectl runs the plugin by
//! (`kubectl-kwatch`), the checks clap cannot make, and bad usage as one line on stderr,
//! exit 2. Help and version requests print as clap prints them.

use crate::app::cli::{Cli, Command};

/// Parses the command line. Installed as `kubectl-kwatch` (kubectl runs plugins by that
/// name for `kubectl kwatch …`), help and errors say `kubectl kwatch`.
pub fn parse() -> Cli {
    use clap::{CommandFactory, FromArgMatches};
    let argv0 = std::env::args_os().next().unwrap_or_default();
    let plugin = std::path::Path::new(&argv0)
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("kubectl-"));
    let mut cmd = Cli::command();
    if plugin {
        cmd = cmd.name("kubectl kwatch").bin_name("kubectl kwatch");
    }
    let name = cmd.get_bin_name().unwrap_or(cmd.get_name()).to_owned();
    let mut cli = cmd
        .try_get_matches()
        .and_then(|m| Cli::from_arg_matches(&m))
        .unwrap_or_else(|e| usage_error(e, &name));
    if let Some(e) = value_conflict(&cli) {
        usage_error(e, &name);
    }
    let checked = match &cli.command {
        None => cli.watch.normalize(),
        Some(Command::Replay(r)) => r.check(),
        Some(Command::Check(c)) => c.check(),
        Some(_) => Ok(()),
    };
    if let Err(e) = checked {
        // Bad usage, as clap's own errors: one line, exit 2.
        eprintln!("error: {}", crate::text::sanitize(&e.to_string()));
        std::process::exit(crate::app::exit::Exit::Usage as i32);
    }
    cli
}

/// A pair of flags clap's `conflicts_with` cannot state because it hangs on a value,
/// refused as clap refuses a conflict (its ArgumentConflict error, exit 2).
fn value_conflict(cli: &Cli) -> Option<clap::Error> {
    use crate::cache::transform::Transform;
    let w = &cli.watch;
    let stripped = w.reflector.transform == Some(Transform::StripManagedFields);
    // --blame names managers from the managedFields this transform drops; together every
    // path would read `unowned`.
    (cli.command.is_none() && stripped && w.output.blame).then(|| {
        crate::app::cli::command().error(
            clap::error::ErrorKind::ArgumentConflict,
            "the argument '--transform strip-managed-fields' cannot be used with '--blame'\n\n\
             tip: --blame names managers from the managedFields that transform drops",
        )
    })
}

/// clap's error as one line, exit 2: its `error: …` line, its tip and possible values,
/// and where the help is (clap prints them on up to eight lines, the offending value as
/// given, control characters included). Help and version requests print as clap prints
/// them.
fn usage_error(e: clap::Error, name: &str) -> ! {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        e.exit()
    }
    // Paragraphs: the error (and its possible values), the tip, the usage, the pointer to
    // the help. The offending value may hold newlines of its own: sanitize escapes them.
    let text = e.render().to_string();
    let mut paragraphs = text.trim_end().split("\n\n");
    let first = paragraphs.next().unwrap_or("error: invalid arguments");
    let (error, values) = match first.rsplit_once("\n  [possible values: ") {
        Some((error, values)) => (error, Some(values)),
        None => (first, None),
    };
    let mut line = error.to_owned();
    if e.kind() == ErrorKind::MissingRequiredArgument {
        // "…not provided:" and then one indented line per argument (clap's own names).
        line = line.replace("\n  ", " ");
    }
    if let Some(values) = values {
        line.push_str(&format!(" [possible values: {values}"));
    }
    for tip in paragraphs.filter_map(|p| p.trim().strip_prefix("tip: ")) {
        line.push_str(&format!("; {tip}"));
    }
    eprintln!("{}; see '{name} --help'", crate::text::sanitize(&line));
    std::process::exit(crate::app::exit::Exit::Usage as i32)
}
