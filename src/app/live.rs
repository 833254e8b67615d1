//! `--live`'s terminal: raw mode, the alternate screen, mouse capture, and the render loop
//! (a thread of its own: it reads keys and draws the shared model at most ~30 frames/s,
//! so the informer never waits on the terminal). The model is the output layer's
//! (crates/core/src/output/live/), the screens drawn from it src/app/live/view.rs.
//!
//! Invariant: the terminal is restored on every way out — [`Screen`]'s drop (`q`, Ctrl-C,
//! a signal, `--timeout`, a failure, the end of the watch) and a panic (the hook restores
//! before main's hook prints its line).
//!
//! A terminal that goes away (end-of-file or an error reading keys, an error drawing) is a
//! hang-up: the run ends as on SIGHUP (exit 129), and nothing waits on that terminal again.

mod keys;
pub mod view;

use std::io::{self, IsTerminal, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Once};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use crossterm::event::{DisableMouseCapture, EnableMouseCapture, KeyCode, KeyModifiers};
use crossterm::terminal::{self, EnterAlternateScreen, LeaveAlternateScreen};
use ratatui::backend::CrosstermBackend;
use ratatui::Terminal;
use tokio::sync::mpsc::UnboundedSender;

use crate::app::exit::Outcome;
use crate::app::live::view::{Action, Ui};
use crate::output::live::{lock, Shared};

/// One frame at most every this long (~30 frames/s).
const FRAME: Duration = Duration::from_millis(33);
/// Rows the mouse wheel scrolls per notch.
const WHEEL: isize = 3;

/// The live screen while it runs; dropping it stops the render loop and restores the
/// terminal.
pub struct Screen {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// Puts the terminal back as it was: idempotent, so the panic hook and the drop may both
/// run it.
fn restore() {
    let _ = terminal::disable_raw_mode();
    let _ = crossterm::execute!(
        io::stdout(),
        DisableMouseCapture,
        LeaveAlternateScreen,
        crossterm::cursor::Show
    );
}

impl Screen {
    /// Takes the terminal over and starts drawing `model`; `quit` receives `Done` on
    /// `q`/Esc, `Interrupted` on Ctrl-C (raw mode delivers it as a key, not SIGINT) and
    /// `HungUp` when the terminal is gone.
    pub fn start(model: Shared, color: bool, quit: UnboundedSender<Outcome>) -> Result<Screen> {
        static HOOK: Once = Once::new();
        HOOK.call_once(|| {
            let prev = std::panic::take_hook();
            std::panic::set_hook(Box::new(move |info| {
                restore();
                prev(info);
            }));
        });
        let tty = keyboard().context("--live: cannot read the terminal")?;
        terminal::enable_raw_mode().context("--live: cannot put the terminal in raw mode")?;
        let mut out = io::stdout();
        if let Err(e) = crossterm::execute!(
            out,
            EnterAlternateScreen,
            EnableMouseCapture,
            crossterm::cursor::Hide
        ) {
            restore();
            return Err(e).context("--live: cannot open the alternate screen");
        }
        let (key_tx, keys) = mpsc::channel();
        // Never joined: it blocks in read(2) until a key comes or the terminal goes; the
        // process's exit ends it.
        if let Err(e) = std::thread::Builder::new()
            .name("live-keys".into())
            .spawn(move || keys::read_keys(tty, &key_tx))
        {
            restore();
            return Err(e).context("--live: cannot start the key thread");
        }
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("live".into())
            .spawn(move || {
                let Ok(mut term) = Terminal::new(CrosstermBackend::new(io::stdout())) else {
                    let _ = quit.send(Outcome::HungUp);
                    return;
                };
                if !run(&mut term, model, color, &keys, &quit, &flag) {
                    let _ = quit.send(Outcome::HungUp);
                    // Dropped, ratatui's Terminal shows the cursor and reports a failure
                    // with eprintln!, which panics when stderr is that gone terminal too;
                    // restore() shows the cursor instead.
                    std::mem::forget(term);
                }
            })
            .inspect_err(|_| restore())
            .context("--live: cannot start the render thread")?;
        Ok(Screen {
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        restore();
        let _ = io::stdout().flush();
    }
}

/// Where keys come from: stdin when it is the terminal, else the process's terminal (as
/// crossterm's raw mode chooses).
fn keyboard() -> io::Result<Box<dyn Read + Send>> {
    if io::stdin().is_terminal() {
        Ok(Box::new(io::stdin()))
    } else {
        Ok(Box::new(std::fs::File::open("/dev/tty")?))
    }
}

/// The render loop: keys and mouse between frames, a frame every [`FRAME`], until `stop`
/// or a quit key (`true`), or until the terminal is gone (`false`: the key reader ended,
/// or a frame could not be drawn).
fn run(
    term: &mut Terminal<CrosstermBackend<io::Stdout>>,
    model: Shared,
    color: bool,
    keys: &Receiver<keys::Input>,
    quit: &UnboundedSender<Outcome>,
    stop: &AtomicBool,
) -> bool {
    let mut ui = Ui::new(color);
    while !stop.load(Ordering::Relaxed) {
        let now = jiff::Timestamp::now();
        // The model is locked only while the frame is laid out in memory, not while
        // the terminal is written.
        let drawn = term.draw(|f| {
            let mut m = lock(&model);
            m.prune(now);
            ui.draw(f, &mut m, now);
        });
        if drawn.is_err() {
            return false;
        }
        // Input until the next frame is due (a resize shows at the next frame: ratatui
        // reads the size each time it draws).
        let due = Instant::now() + FRAME;
        loop {
            let input = match keys.recv_timeout(due.saturating_duration_since(Instant::now())) {
                Ok(input) => input,
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => return false,
            };
            let action = match input {
                keys::Input::Key(KeyCode::Char('c'), KeyModifiers::CONTROL) => {
                    let _ = quit.send(Outcome::Interrupted);
                    return true;
                }
                keys::Input::Key(code, mods) => action_of(code, mods, ui.editing),
                keys::Input::Wheel(notches) => {
                    ui.wheel(notches * WHEEL, &lock(&model));
                    None
                }
            };
            if let Some(a) = action {
                let keep = ui.act(a, &mut lock(&model));
                if !keep {
                    let _ = quit.send(Outcome::Done);
                    return true;
                }
                break;
            }
        }
    }
    true
}

/// The view's action for a key; while a filter is typed, letters are text. Of the keys
/// with Ctrl or Alt, only a shell's line editing (Ctrl-U, Ctrl-W) does something.
fn action_of(code: KeyCode, mods: KeyModifiers, editing: bool) -> Option<Action> {
    if mods.contains(KeyModifiers::CONTROL) {
        return match code {
            KeyCode::Char('u') => Some(Action::ClearLine),
            KeyCode::Char('w') => Some(Action::DeleteWord),
            _ => None,
        };
    }
    if mods.contains(KeyModifiers::ALT) {
        return None;
    }
    Some(match code {
        KeyCode::Up => Action::Up,
        KeyCode::Down => Action::Down,
        KeyCode::Left => Action::Left,
        KeyCode::Right => Action::Right,
        KeyCode::PageUp => Action::PageUp,
        KeyCode::PageDown => Action::PageDown,
        KeyCode::Home => Action::Home,
        KeyCode::End => Action::End,
        KeyCode::Enter => Action::Enter,
        KeyCode::Esc => Action::Back,
        KeyCode::Backspace => Action::Backspace,
        KeyCode::Char(c) if editing => Action::Char(c),
        KeyCode::Char('k') => Action::Up,
        KeyCode::Char('j') => Action::Down,
        KeyCode::Char('/') => Action::Filter,
        KeyCode::Char('s') => Action::Sort,
        KeyCode::Char('S') => Action::Reverse,
        KeyCode::Char('y') => Action::Yaml,
        KeyCode::Char('p') => Action::Pause,
        KeyCode::Char('e') => Action::Events,
        KeyCode::Char('c') => Action::Collapse,
        KeyCode::Char('?') => Action::Help,
        KeyCode::Char(c) => Action::Char(c),
        _ => return None,
    })
}
