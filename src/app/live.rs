//! `--live`'s terminal: raw mode, the alternate screen, mouse capture, and the render loop
//! (a thread of its own: it reads keys and draws the shared model at most ~30 frames/s,
//! so the informer never waits on the terminal). The model and the screens are the
//! output layer's (src/output/live/).
//!
//! Invariant: the terminal is restored on every way out — [`Screen`]'s drop (`q`, Ctrl-C,
//! a signal, `--timeout`, a failure, the end of the watch) and a panic (the hook restores
//! before main's hook prints its line).

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Once};
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::{Context, Result};
use crossterm::event::{
    self, DisableMouseCapture, EnableMouseCapture, Event, KeyCode, KeyEventKind, KeyModifiers,
    MouseEventKind,
};
use crossterm::terminal::{self, EnterAlternateScreen, LeaveAlternateScreen};
use ratatui::backend::CrosstermBackend;
use ratatui::Terminal;
use tokio::sync::mpsc::UnboundedSender;

use crate::app::exit::Outcome;
use crate::output::live::view::{Action, Ui};
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
    /// `q`/Esc and `Interrupted` on Ctrl-C (raw mode delivers it as a key, not SIGINT).
    pub fn start(model: Shared, color: bool, quit: UnboundedSender<Outcome>) -> Result<Screen> {
        static HOOK: Once = Once::new();
        HOOK.call_once(|| {
            let prev = std::panic::take_hook();
            std::panic::set_hook(Box::new(move |info| {
                restore();
                prev(info);
            }));
        });
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
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("live".into())
            .spawn(move || run(model, color, quit, &flag))
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

/// The render loop: keys and mouse between frames, a frame every [`FRAME`], until
/// `stop` or a quit key.
fn run(model: Shared, color: bool, quit: UnboundedSender<Outcome>, stop: &AtomicBool) {
    let Ok(mut term) = Terminal::new(CrosstermBackend::new(io::stdout())) else {
        return;
    };
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
            return;
        }
        // Input until the next frame is due; a resize draws at once.
        let due = std::time::Instant::now() + FRAME;
        loop {
            let left = due.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() || !event::poll(left).unwrap_or(false) {
                break;
            }
            let Ok(ev) = event::read() else { return };
            let action = match ev {
                Event::Key(k) if k.kind != KeyEventKind::Release => {
                    if k.modifiers.contains(KeyModifiers::CONTROL) && k.code == KeyCode::Char('c') {
                        let _ = quit.send(Outcome::Interrupted);
                        return;
                    }
                    action_of(k.code, ui.editing)
                }
                Event::Mouse(m) => {
                    match m.kind {
                        MouseEventKind::ScrollUp => ui.wheel(-WHEEL),
                        MouseEventKind::ScrollDown => ui.wheel(WHEEL),
                        _ => {}
                    }
                    None
                }
                Event::Resize(..) => break,
                _ => None,
            };
            if let Some(a) = action {
                let keep = ui.act(a, &mut lock(&model));
                if !keep {
                    let _ = quit.send(Outcome::Done);
                    return;
                }
                break;
            }
        }
    }
}

/// The view's action for a key; while a filter is typed, letters are text.
fn action_of(code: KeyCode, editing: bool) -> Option<Action> {
    Some(match code {
        KeyCode::Up => Action::Up,
        KeyCode::Down => Action::Down,
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
        KeyCode::Char('?') => Action::Help,
        KeyCode::Char(c) => Action::Char(c),
        _ => return None,
    })
}
