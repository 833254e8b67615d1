//! The `kwatch` binary: wires the command line to the library and maps errors to exit codes.

use clap::Parser;
use kwatch::cli::{Cli, Command};

fn main() {
    let cli = Cli::parse();
    let code = match run(cli) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            1
        }
    };
    std::process::exit(code);
}

fn run(cli: Cli) -> anyhow::Result<i32> {
    let rt = tokio::runtime::Runtime::new()?;
    match cli.command {
        Some(Command::Sim(args)) => rt.block_on(kwatch::sim::run(args.into()))?,
        Some(Command::Completions { shell }) => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(shell, &mut cmd, "kwatch", &mut std::io::stdout());
        }
        None => anyhow::bail!("watching is not implemented yet"),
    }
    Ok(0)
}
