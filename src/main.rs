//! The `kwatch` binary: wires the command line to the library and maps the result to an
//! exit code (see README "Exit codes"). A closed stdout (`kwatch … | head -1`) is a
//! quiet success.

use std::io::Write;
use std::process::ExitCode;

use kwatch::app::cli::{Cli, Command, SimArgs};
use kwatch::app::exit::Exit;
use kwatch::app::exit::Outcome;

// A list allocates several small blocks per object and frees few until exit; glibc's
// malloc spent about a fifth of the CPU of a 100k-pod list on them (perf), mimalloc a
// fraction of that. Built without transparent huge pages (feature `no_thp`): with them a
// 10-pod watch held 23 MB instead of 14 MB, for ~10% less CPU only on 100k-object lists.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    install_panic_hook();
    // `COMPLETE=bash kwatch -- …`, from the completion scripts: candidates, then exit.
    kwatch::app::complete::complete_if_asked();
    let cli = kwatch::app::usage::parse();
    init_tracing(cli.watch.verbose);
    let exit = match run(cli) {
        Ok(e) => e,
        Err(err) if kwatch::app::exit::is_broken_pipe(&err) => Exit::Ok,
        Err(err) => {
            let msg = kwatch::app::exit::message(&err);
            let _ = writeln!(std::io::stderr(), "{}", kwatch::text::sanitize(&msg));
            kwatch::app::exit::code(&err)
        }
    };
    ExitCode::from(exit as u8)
}

fn run(cli: Cli) -> anyhow::Result<Exit> {
    let rt = tokio::runtime::Runtime::new()?;
    // A test hook (kwatch_core::hooks): a tokio task that panics while main waits on it for
    // ever, to pin the panic hook (tests/failures.rs).
    if kwatch::hooks::panic_in_task() {
        rt.block_on(async {
            let _task = tokio::spawn(async { panic!("a test panic\non two lines") });
            std::future::pending::<()>().await
        });
    }
    match cli.command {
        Some(Command::Sim(args)) => {
            rt.block_on(sim(args))?;
            Ok(Exit::Ok)
        }
        Some(Command::Completions { shell, fixed }) => {
            std::io::stdout().write_all(&kwatch::app::complete::completion(shell, fixed))?;
            Ok(Exit::Ok)
        }
        Some(Command::Man) => {
            std::io::stdout().write_all(&kwatch::app::man::man_page()?)?;
            Ok(Exit::Ok)
        }
        Some(Command::Replay(args)) => Ok(exit_of(kwatch::app::replay::run(*args)?)),
        Some(Command::Check(args)) => rt.block_on(kwatch::app::check::run(*args)),
        None => Ok(exit_of(rt.block_on(kwatch::app::watch::run(cli.watch))?)),
    }
}

/// The exit code of how a watch (or a replay) ended.
fn exit_of(outcome: Outcome) -> Exit {
    match outcome {
        Outcome::Done | Outcome::Met => Exit::Ok,
        Outcome::TimedOut => Exit::TimedOut,
        Outcome::NotMet => Exit::NotMet,
        Outcome::NotAllSynced => Exit::NotAllSynced,
        Outcome::Interrupted => Exit::Interrupted,
        Outcome::Terminated => Exit::Terminated,
        Outcome::HungUp => Exit::HungUp,
    }
}

/// `kwatch sim`: runs the simulated API server until interrupted.
#[cfg(feature = "sim")]
async fn sim(args: SimArgs) -> anyhow::Result<()> {
    let clusters = usize::from(args.clusters);
    let opts = kwatch::app::sim::sim_options(args);
    if clusters > 1 {
        return kwatch::sim::fleet::run(opts, clusters).await;
    }
    kwatch::sim::run(opts).await
}

/// `kwatch sim` in a kwatch built without the simulator.
#[cfg(not(feature = "sim"))]
async fn sim(_: SimArgs) -> anyhow::Result<()> {
    anyhow::bail!(kwatch::app::sim::NO_SIMULATOR)
}

/// A panic anywhere, on any thread or tokio task, is a bug: one line on stderr (the
/// standard report with its backtrace too when RUST_BACKTRACE asks for it) and exit 1 at
/// once. Without the exit, a panicking tokio task would leave the process waiting for it
/// for ever (tokio catches the panic and only the task's JoinHandle would see it).
fn install_panic_hook() {
    let standard = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if std::env::var_os("RUST_BACKTRACE").is_some_and(|v| v != "0") {
            standard(info);
        }
        let payload = info.payload();
        let what = payload
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("(no message)");
        let place = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let line = format!(
            "error: kwatch panicked{place}: {} (a bug: please report it with the command \
             line; RUST_BACKTRACE=1 shows where)",
            what.replace('\n', " ")
        );
        let _ = writeln!(std::io::stderr(), "{}", kwatch::text::sanitize(&line));
        std::process::exit(Exit::Error as i32);
    }));
}

/// Diagnostics go to stderr: warnings by default, more with -v, or as RUST_LOG says.
fn init_tracing(verbose: u8) {
    let default = match verbose {
        0 => "kwatch=warn",
        1 => "kwatch=info",
        2 => "kwatch=debug,kube=info",
        _ => "kwatch=trace,kube=debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    use std::io::IsTerminal;
    let ansi = std::io::stderr().is_terminal()
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(ansi)
        .with_target(false)
        .init();
}
