//! completions/ (the dynamic completion's registration scripts, and under static/ the
//! static scripts) and man/ are generated from the clap definition; these tests fail when
//! the committed files are stale. Regenerate with `KWATCH_BLESS=1 cargo test generated`.

use std::path::PathBuf;

use clap::CommandFactory;
use clap_complete::Shell;
use kwatch::app::cli::{completion, man_page, Cli};

fn check(path: &str, want: &[u8]) {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(path);
    if std::env::var_os("KWATCH_BLESS").is_some() {
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, want).unwrap();
        return;
    }
    let have = std::fs::read(&file).unwrap_or_default();
    assert!(
        have == want,
        "{path} is stale: run `KWATCH_BLESS=1 cargo test generated` and commit the result"
    );
}

#[test]
fn cli_definition_is_consistent() {
    Cli::command().debug_assert();
}

#[test]
fn completions_are_fresh() {
    for (shell, file) in [
        (Shell::Bash, "completions/kwatch.bash"),
        (Shell::Zsh, "completions/_kwatch"),
        (Shell::Fish, "completions/kwatch.fish"),
        (Shell::PowerShell, "completions/_kwatch.ps1"),
        (Shell::Elvish, "completions/kwatch.elv"),
    ] {
        check(file, &completion(shell, false));
        let fixed = file.replacen("completions/", "completions/static/", 1);
        check(&fixed, &completion(shell, true));
    }
}

#[test]
fn man_page_is_fresh() {
    check("man/kwatch.1", &man_page().unwrap());
}
