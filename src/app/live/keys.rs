//! `--live`'s keyboard and mouse: the bytes a terminal sends, read on a thread of their
//! own and parsed into [`Input`]s.
//!
//! Why not crossterm's `event::read`: its reader loops on `read(2)` for as long as the
//! terminal says "readable", and a terminal that went away is readable for ever with
//! `read` returning 0 (measured: 71,262 reads in 2 s, the render thread never returning,
//! so SIGTERM and SIGINT were never acted on). Here end-of-file and every
//! error but EINTR end the reader, which is the hang-up.

use std::io::{self, Read};
use std::sync::mpsc::Sender;

use crossterm::event::{KeyCode, KeyModifiers};

/// One thing the user did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    Key(KeyCode, KeyModifiers),
    /// The mouse wheel: rows down (negative: up), one per notch.
    Wheel(isize),
}

/// Reads `tty` until end-of-file or an error (the terminal is gone), sending what the
/// user types to `to`; returns then, or when `to`'s receiver is gone.
pub fn read_keys(mut tty: impl Read, to: &Sender<Input>) {
    let mut buf = [0u8; 4096];
    let mut parser = Parser::default();
    loop {
        let n = match tty.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return,
        };
        for input in parser.feed(&buf[..n]) {
            if to.send(input).is_err() {
                return;
            }
        }
    }
}

/// Terminal input bytes → [`Input`]s. A sequence cut between two reads is kept for the
/// next; an Esc at the end of a read is the Esc key (a terminal writes each escape
/// sequence whole, so a lone one is a key press).
#[derive(Debug, Default)]
pub struct Parser {
    /// The start of a sequence the last read cut.
    pending: Vec<u8>,
}

impl Parser {
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<Input> {
        self.pending.extend_from_slice(bytes);
        let mut out = Vec::new();
        let mut at = 0;
        while at < self.pending.len() {
            match parse_one(&self.pending[at..]) {
                Some((used, input)) => {
                    out.extend(input);
                    at += used;
                }
                None => break,
            }
        }
        self.pending.drain(..at);
        out
    }
}

fn key(code: KeyCode) -> Option<Input> {
    Some(Input::Key(code, KeyModifiers::NONE))
}

/// The first input of `b` (non-empty) and the bytes it took; `None`: `b` is an
/// incomplete sequence. Bytes that mean nothing here are taken with no input.
fn parse_one(b: &[u8]) -> Option<(usize, Option<Input>)> {
    let one = |input| Some((1, input));
    match b[0] {
        0x1b => escape(b),
        b'\r' | b'\n' => one(key(KeyCode::Enter)),
        0x7f | 0x08 => one(key(KeyCode::Backspace)),
        b'\t' => one(key(KeyCode::Tab)),
        c @ 0x01..=0x1a => one(Some(Input::Key(
            KeyCode::Char(char::from(b'a' + c - 1)),
            KeyModifiers::CONTROL,
        ))),
        0x00..=0x1f => one(None),
        lead => {
            let len = match lead {
                0x20..=0x7f => 1,
                0xc0..=0xdf => 2,
                0xe0..=0xef => 3,
                0xf0..=0xf7 => 4,
                _ => return one(None),
            };
            if b.len() < len {
                return None;
            }
            match std::str::from_utf8(&b[..len])
                .ok()
                .and_then(|s| s.chars().next())
            {
                Some(c) => Some((len, key(KeyCode::Char(c)))),
                None => one(None),
            }
        }
    }
}

/// `b` starts with ESC: a CSI or SS3 sequence, Alt and a key, or Esc alone.
fn escape(b: &[u8]) -> Option<(usize, Option<Input>)> {
    match b.get(1) {
        None => Some((1, key(KeyCode::Esc))),
        Some(b'[') => csi(b),
        Some(b'O') => {
            let code = match b.get(2)? {
                b'A' => KeyCode::Up,
                b'B' => KeyCode::Down,
                b'C' => KeyCode::Right,
                b'D' => KeyCode::Left,
                b'H' => KeyCode::Home,
                b'F' => KeyCode::End,
                _ => return Some((3, None)),
            };
            Some((3, key(code)))
        }
        Some(0x1b) => Some((1, key(KeyCode::Esc))),
        Some(_) => {
            // Alt and a key: the key, marked, so that no plain key's action runs.
            let (used, input) = parse_one(&b[1..])?;
            let alt = match input {
                Some(Input::Key(code, m)) => Some(Input::Key(code, m | KeyModifiers::ALT)),
                other => other,
            };
            Some((1 + used, alt))
        }
    }
}

/// `ESC [ params final`: cursor and editing keys, and the mouse (SGR `ESC [ < b ; x ; y M`
/// and X10 `ESC [ M b x y`), of which only the wheel counts.
fn csi(b: &[u8]) -> Option<(usize, Option<Input>)> {
    if b.get(2) == Some(&b'M') {
        let button = *b.get(5).and(b.get(3))?;
        return Some((6, wheel(u32::from(button.wrapping_sub(32)))));
    }
    let end = 2 + b[2..].iter().position(|c| (0x40..=0x7e).contains(c))?;
    let params = &b[2..end];
    let used = end + 1;
    if let Some(sgr) = params.strip_prefix(b"<") {
        let button = std::str::from_utf8(sgr)
            .ok()
            .and_then(|s| s.split(';').next())
            .and_then(|n| n.parse().ok());
        return Some((used, button.and_then(wheel)));
    }
    let first: Option<u32> = std::str::from_utf8(params)
        .ok()
        .and_then(|s| s.split(';').next())
        .and_then(|n| n.parse().ok());
    let code = match (b[end], first) {
        (b'A', _) => KeyCode::Up,
        (b'B', _) => KeyCode::Down,
        (b'C', _) => KeyCode::Right,
        (b'D', _) => KeyCode::Left,
        (b'H', _) => KeyCode::Home,
        (b'F', _) => KeyCode::End,
        (b'Z', _) => KeyCode::BackTab,
        (b'~', Some(1 | 7)) => KeyCode::Home,
        (b'~', Some(4 | 8)) => KeyCode::End,
        (b'~', Some(3)) => KeyCode::Delete,
        (b'~', Some(5)) => KeyCode::PageUp,
        (b'~', Some(6)) => KeyCode::PageDown,
        _ => return Some((used, None)),
    };
    Some((used, key(code)))
}

/// A mouse button code: the wheel (64 up, 65 down, with modifier bits) or nothing.
fn wheel(button: u32) -> Option<Input> {
    if button & 64 == 0 || button & 32 != 0 {
        return None;
    }
    match button & 3 {
        0 => Some(Input::Wheel(-1)),
        1 => Some(Input::Wheel(1)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    fn k(c: char) -> Input {
        Input::Key(KeyCode::Char(c), KeyModifiers::NONE)
    }
    fn ctrl(c: char) -> Input {
        Input::Key(KeyCode::Char(c), KeyModifiers::CONTROL)
    }
    fn code(c: KeyCode) -> Input {
        Input::Key(c, KeyModifiers::NONE)
    }

    #[test]
    fn keys_a_terminal_sends() {
        let mut p = Parser::default();
        let got = p.feed(b"q/\x15\x17\x7f\x03\r\x1b[A\x1b[B\x1b[5~\x1b[6~\x1bOH\x1b[4~\x1b[1;5B");
        let want = vec![
            k('q'),
            k('/'),
            ctrl('u'),
            ctrl('w'),
            code(KeyCode::Backspace),
            ctrl('c'),
            code(KeyCode::Enter),
            code(KeyCode::Up),
            code(KeyCode::Down),
            code(KeyCode::PageUp),
            code(KeyCode::PageDown),
            code(KeyCode::Home),
            code(KeyCode::End),
            code(KeyCode::Down),
        ];
        assert_eq!(got, want);
        assert_eq!(p.feed("é✓".as_bytes()), vec![k('é'), k('✓')]);
        assert_eq!(p.feed(b"\x1b"), vec![code(KeyCode::Esc)]);
        assert_eq!(
            p.feed(b"\x1bq"),
            vec![Input::Key(KeyCode::Char('q'), KeyModifiers::ALT)]
        );
    }

    #[test]
    fn the_wheel_counts_and_other_mouse_reports_are_dropped() {
        let mut p = Parser::default();
        // SGR: wheel up, a motion, wheel down, a click and its release; then X10.
        let got = p.feed(b"\x1b[<64;10;5M\x1b[<35;3;4M\x1b[<65;1;1M\x1b[<0;1;1M\x1b[<0;1;1m");
        assert_eq!(got, vec![Input::Wheel(-1), Input::Wheel(1)]);
        assert_eq!(p.feed(b"\x1b[M`!!x"), vec![Input::Wheel(-1), k('x')]);
    }

    #[test]
    fn a_sequence_cut_between_reads_waits_for_its_end() {
        let mut p = Parser::default();
        assert_eq!(p.feed(b"\x1b[<64;1"), vec![]);
        assert_eq!(p.feed(b";1M"), vec![Input::Wheel(-1)]);
        let check = "✓".as_bytes();
        assert_eq!(p.feed(&check[..1]), vec![]);
        assert_eq!(p.feed(&check[1..]), vec![k('✓')]);
        assert_eq!(p.feed(b"\x1b[5"), vec![]);
        assert_eq!(p.feed(b"~"), vec![code(KeyCode::PageUp)]);
    }

    /// A terminal gone (end-of-file, or an error such as EIO) ends the
    /// reader at once, after what was typed before.
    #[test]
    fn end_of_file_or_an_error_ends_the_reader() {
        struct Gone(Vec<io::Result<Vec<u8>>>);
        impl Read for Gone {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                if self.0.is_empty() {
                    panic!("read again after the terminal was gone");
                }
                let bytes = self.0.remove(0)?;
                buf[..bytes.len()].copy_from_slice(&bytes);
                Ok(bytes.len())
            }
        }
        for end in [Ok(vec![]), Err(io::Error::from_raw_os_error(5))] {
            let (tx, rx) = mpsc::channel();
            let interrupted = Err(io::Error::from(io::ErrorKind::Interrupted));
            read_keys(Gone(vec![Ok(b"j".to_vec()), interrupted, end]), &tx);
            drop(tx);
            assert_eq!(rx.iter().collect::<Vec<_>>(), vec![k('j')]);
        }
    }
}
