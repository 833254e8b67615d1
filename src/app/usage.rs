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
    let argv = subcommand_first(&cmd, std::env::args_os().collect());
    let mut name = cmd.get_bin_name().unwrap_or(cmd.get_name()).to_owned();
    if let Some(sub) = argv.get(1).and_then(|a| a.to_str()) {
        if cmd.find_subcommand(sub).is_some() {
            // Errors point to the subcommand's own help.
            name = format!("{name} {sub}");
        }
    }
    let matches = cmd
        .try_get_matches_from(argv)
        .unwrap_or_else(|e| usage_error(e, &name));
    if let Some(e) = timeline_conflict(&matches) {
        usage_error(e, &name);
    }
    let mut cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| usage_error(e, &name));
    if let Some(e) = refused_flags(&cli) {
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

/// `argv` with a subcommand named after flags moved before them, as kubectl takes its
/// global flags anywhere (`kubectl --kubeconfig X get pods`): `kwatch --kubeconfig X check
/// pods` is `kwatch check --kubeconfig X pods`. The subcommand is the first word that is
/// neither a flag nor a flag's value (the root's flags say which take one); a flag that
/// the subcommand does not take is then refused by clap in the subcommand's words.
fn subcommand_first(
    cmd: &clap::Command,
    mut argv: Vec<std::ffi::OsString>,
) -> Vec<std::ffi::OsString> {
    let takes_value = |word: &str| {
        let arg = match word.strip_prefix("--") {
            Some(long) => cmd.get_arguments().find(|a| a.get_long() == Some(long)),
            None => {
                let mut shorts = word.trim_start_matches('-').chars();
                let short = shorts.next();
                // `-nfoo`: the value is attached.
                if shorts.next().is_some() {
                    return false;
                }
                cmd.get_arguments().find(|a| a.get_short() == short)
            }
        };
        arg.is_some_and(|a| a.get_action().takes_values())
    };
    let mut i = 1;
    while i < argv.len() {
        let Some(word) = argv[i].to_str() else {
            return argv;
        };
        if word == "--" {
            return argv;
        }
        if !word.starts_with('-') || word == "-" {
            break;
        }
        i += if !word.contains('=') && takes_value(word) {
            2
        } else {
            1
        };
    }
    let is_sub = argv
        .get(i)
        .and_then(|w| w.to_str())
        .is_some_and(|w| cmd.find_subcommand(w).is_some());
    if is_sub && i > 1 {
        let sub = argv.remove(i);
        argv.insert(1, sub);
    }
    argv
}

/// Flags clap's `conflicts_with` and `requires` cannot state (they hang on a value, or on
/// one of two flags), refused as clap refuses those (exit 2).
fn refused_flags(cli: &Cli) -> Option<clap::Error> {
    use crate::cache::transform::Transform;
    let w = &cli.watch;
    let stripped = w.reflector.transform == Some(Transform::StripManagedFields);
    // --blame names managers from the managedFields this transform drops; together every
    // path would read `unowned`.
    if cli.command.is_none() && stripped && w.output.blame {
        return Some(crate::app::cli::command().error(
            clap::error::ErrorKind::ArgumentConflict,
            "the argument '--transform strip-managed-fields' cannot be used with '--blame'\n\n\
             tip: --blame names managers from the managedFields that transform drops",
        ));
    }
    let c = &w.cluster;
    (c.shard.is_some() && c.context.is_none() && !c.all_contexts).then(|| {
        crate::app::cli::command().error(
            clap::error::ErrorKind::MissingRequiredArgument,
            "--shard splits the contexts --all-contexts or --context names, and none was \
             given\n\ntip: add --all-contexts, or --context with names or a pattern",
        )
    })
}

/// The `kwatch replay` flags that print what `--timeline` draws instead: given together,
/// one line (clap's conflict, exit 2) naming the fix. `None` when the command line is fine.
fn timeline_conflict(m: &clap::ArgMatches) -> Option<clap::Error> {
    let (name, sub) = m.subcommand()?;
    if name != "replay" || sub.get_one::<std::path::PathBuf>("timeline").is_none() {
        return None;
    }
    let given = |id: &str| {
        sub.try_contains_id(id).unwrap_or(false)
            && sub.value_source(id) == Some(clap::parser::ValueSource::CommandLine)
    };
    let why = [("output", "-o"), ("live", "--live"), ("view", "--view")]
        .into_iter()
        .find(|(id, _)| given(id))
        .map(|(_, why)| why)?;
    Some(crate::app::cli::command().error(
        clap::error::ErrorKind::ArgumentConflict,
        format!(
            "the argument '--timeline <OUT.html>' cannot be used with '{why}'\n\n\
             tip: the page takes the place of the printed records: drop {why}, or replay \
             the file twice (once with {why}, once with --timeline)",
        ),
    ))
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
