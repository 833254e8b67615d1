//! The man page (`kwatch man`, the committed man/kwatch.1): clap_mangen's sections of the
//! command line's definition, with the help's tables as its own sections.

use crate::app::cli::command;
use crate::app::help::{ENVIRONMENT, EXAMPLES, EXIT_STATUS};

/// The man page: clap_mangen's title, NAME, SYNOPSIS (the usage lines `--help` shows),
/// DESCRIPTION and OPTIONS, then the subcommands (each with `kwatch NAME --help`, as there
/// is no page of their own), EXAMPLES, EXIT STATUS, ENVIRONMENT and VERSION, from the same
/// tables as `--help`.
pub fn man_page() -> std::io::Result<Vec<u8>> {
    use clap_mangen::roff::{bold, italic, roman, Roff};
    // clap_mangen prints an option's long help, else its short help unless that is hidden
    // from `-h`: a flag only `--help` lists has its one paragraph as its long help here.
    let mut cmd = command().mut_args(|a| match (a.get_long_help(), a.get_help()) {
        (None, Some(help)) if a.is_hide_short_help_set() => {
            let help = help.clone();
            a.long_help(help)
        }
        _ => a,
    });
    cmd.build();
    let man = clap_mangen::Man::new(cmd.clone());
    let mut out = Vec::new();
    man.render_title(&mut out)?;
    man.render_name_section(&mut out)?;
    let mut roff = Roff::default();
    roff.control("SH", ["SYNOPSIS"]);
    let usage = cmd.render_usage().to_string();
    for (i, line) in usage.lines().enumerate() {
        let line = line.trim_start_matches("Usage:").trim();
        if i > 0 {
            roff.control("br", []);
        }
        roff.text([roman(line)]);
    }
    roff.to_writer(&mut out)?;
    man.render_description_section(&mut out)?;
    man.render_options_section(&mut out)?;
    let mut roff = Roff::default();
    roff.control("SH", ["SUBCOMMANDS"]);
    let subcommands = cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help");
    for sub in subcommands {
        let name = sub.get_name();
        roff.control("TP", []);
        roff.text([bold(format!("kwatch {name}"))]);
        let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
        roff.text([
            roman(format!("{about}; its options: ")),
            bold(format!("kwatch {name} --help")),
        ]);
    }
    let rows = |roff: &mut Roff, title: &str, rows: &[(&str, &str)], term: fn(&str) -> _| {
        roff.control("SH", [title]);
        for (t, text) in rows {
            roff.control("TP", []);
            roff.text([term(t)]);
            roff.text([roman(*text)]);
        }
    };
    rows(&mut roff, "EXAMPLES", EXAMPLES, |t| bold(t));
    rows(&mut roff, "EXIT STATUS", EXIT_STATUS, |t| bold(t));
    rows(&mut roff, "ENVIRONMENT", ENVIRONMENT, |t| italic(t));
    roff.to_writer(&mut out)?;
    man.render_version_section(&mut out)?;
    Ok(out)
}
