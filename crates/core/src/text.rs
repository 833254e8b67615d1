//! Text every layer writes. `sanitize` escapes control characters in server data before
//! it reaches a terminal: object names, labels and server messages may contain them (an
//! ESC could rewrite the screen); every layer that writes a line of its own (the client's
//! errors, the printers, the application's diagnostics) escapes it here.
//! `human_duration` is kubectl's way of writing an age, for the table and the simulator's
//! Tables. `name_suffix` is the apiserver's `generateName` suffix, for the simulator and
//! `--probe`'s ConfigMap. `human_bytes` is a byte count for the `~` lines and `--stats`.
//! [`Chain`] writes an error with its causes on one line; [`GoIo`] an I/O error in Go's
//! words, as kubectl says it; [`UnknownWord`] is the error of a word that is none of a
//! fixed vocabulary's. [`paint`] colours a span for a terminal;
//! [`format_time`] is a record's time.

use std::borrow::Cow;
use std::time::Duration;

/// Five characters of the alphabet apiserver's `generateName` uses (no vowels, no
/// look-alikes: `k8s.io/apimachinery/pkg/util/rand`).
pub fn name_suffix() -> String {
    use rand::Rng as _;
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut rng = rand::rng();
    (0..5)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
        .collect()
}

/// `text` in an SGR colour (`31` red, `90` dark grey…), then a full reset: explicit
/// codes, not a terminal library's, so `--color always` colours the same whatever
/// `NO_COLOR` says and every colour is closed by exactly one reset.
pub fn paint(text: &str, sgr: u8) -> String {
    format!("\x1b[{sgr}m{text}\x1b[0m")
}

/// RFC 3339 with milliseconds, UTC.
pub fn format_time(t: jiff::Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

/// `s` with every control character (C0, DEL, C1) written as `\u{…}` escapes.
pub fn sanitize(s: &str) -> Cow<'_, str> {
    if !s.chars().any(char::is_control) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if c.is_control() {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// An error and its causes (`source()`, outermost first) on one line, separated by `: `:
/// what a message that quotes a failure it wraps says.
pub struct Chain<'a>(pub &'a (dyn std::error::Error + 'static));

impl std::fmt::Display for Chain<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)?;
        let mut cause = self.0.source();
        while let Some(c) = cause {
            write!(f, ": {c}")?;
            cause = c.source();
        }
        Ok(())
    }
}

/// An I/O error in Go's words, as kubectl and client-go print it: the system's message
/// without Rust's ` (os error N)` and with Go's lowercase first letter. Rust writes
/// ECONNREFUSED `Connection refused (os error 111)` (strerror's text, then the number);
/// Go's `syscall.Errno` is its own table's lowercase text, `connection refused`
/// (`syscall/zerrors_linux_amd64.go`), which `net.OpError` (`dial tcp 127.0.0.1:6443:
/// connect: connection refused`) and `fs.PathError` (`open /c: no such file or directory`)
/// quote. An error of no errno (a message of Rust's or a library's) is its text, its
/// first letter lowercased unless a capital follows it (an acronym: `TLS …`).
pub struct GoIo<'a>(pub &'a std::io::Error);

impl std::fmt::Display for GoIo<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let text = self.0.to_string();
        let text = match self.0.raw_os_error() {
            Some(n) => text
                .strip_suffix(&format!(" (os error {n})"))
                .unwrap_or(&text),
            None => &text,
        };
        let mut chars = text.chars();
        match (chars.next(), chars.clone().next()) {
            (Some(first), next) if !next.is_some_and(char::is_uppercase) => {
                write!(f, "{}{}", first.to_lowercase(), chars.as_str())
            }
            _ => f.write_str(text),
        }
    }
}

/// A word that is none of a fixed vocabulary's: the error of an enum's `FromStr` whose
/// variants are named by a list of words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{word:?} is none of {}", .expected.join(", "))]
pub struct UnknownWord {
    pub word: String,
    /// The words the vocabulary has.
    pub expected: &'static [&'static str],
}

/// A byte count in decimal units with three significant digits at most (`812 B`,
/// `4.21 kB`, `78.0 MB`): the sizes of lists, as the benchmark reports them.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["kB", "MB", "GB", "TB"];
    if n < 1000 {
        return format!("{n} B");
    }
    let mut v = n as f64 / 1000.0;
    let mut unit = 0;
    while v >= 999.5 && unit + 1 < UNITS.len() {
        v /= 1000.0;
        unit += 1;
    }
    let digits = if v < 9.995 {
        2
    } else if v < 99.95 {
        1
    } else {
        0
    };
    format!("{v:.digits$} {}", UNITS[unit])
}

/// kubectl's `duration.HumanDuration` of a duration that is not negative (its callers
/// decide what a negative one prints: kwatch's ages clamp to 0, the simulator's Tables
/// print `<invalid>` as kube-apiserver does).
pub fn human_duration(d: Duration) -> String {
    let s = d.as_secs();
    let (m, h, days, years) = (s / 60, s / 3600, s / 86400, s / 86400 / 365);
    if s < 120 {
        format!("{s}s")
    } else if m < 10 {
        units(m, "m", s % 60, "s")
    } else if h < 3 {
        format!("{m}m")
    } else if h < 8 {
        units(h, "h", m % 60, "m")
    } else if h < 48 {
        format!("{h}h")
    } else if h < 24 * 8 {
        units(days, "d", h % 24, "h")
    } else if days < 365 * 2 {
        format!("{days}d")
    } else if days < 365 * 8 {
        units(years, "y", days % 365, "d")
    } else {
        format!("{years}y")
    }
}

/// `n` of the larger unit, then the rest in the smaller unit unless it is 0 (`2m30s`,
/// `4h`).
fn units(n: u64, unit: &str, rest: u64, rest_unit: &str) -> String {
    match rest {
        0 => format!("{n}{unit}"),
        r => format!("{n}{unit}{r}{rest_unit}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_bytes_keeps_three_digits() {
        let cases = [
            (0, "0 B"),
            (999, "999 B"),
            (1000, "1.00 kB"),
            (4214, "4.21 kB"),
            (99_949, "99.9 kB"),
            (99_950, "100 kB"),
            (999_499, "999 kB"),
            (999_500, "1.00 MB"),
            (78_012_345, "78.0 MB"),
            (3_200_000_000_000_000, "3200 TB"),
        ];
        for (n, text) in cases {
            assert_eq!(human_bytes(n), text, "{n}");
        }
    }

    #[test]
    fn name_suffixes_are_five_characters_of_generate_names_alphabet() {
        let s = name_suffix();
        assert_eq!(s.len(), 5, "{s}");
        assert!(
            s.bytes()
                .all(|c| b"bcdfghjklmnpqrstvwxz2456789".contains(&c)),
            "{s}"
        );
    }

    #[test]
    fn escapes_controls_only() {
        assert_eq!(sanitize("web-1"), "web-1");
        assert_eq!(sanitize("a\u{1b}[2Jb"), "a\\u{1b}[2Jb");
        assert_eq!(sanitize("tab\there\u{9b}"), "tab\\u{9}here\\u{9b}");
        assert_eq!(sanitize("größe-日本"), "größe-日本");
    }

    #[test]
    fn human_durations() {
        let h = |s| human_duration(Duration::from_secs(s));
        assert_eq!(h(53), "53s");
        assert_eq!(h(150), "2m30s");
        assert_eq!(h(3 * 60 * 60 + 5), "3h");
        assert_eq!(h(2 * 86400 + 3600), "2d1h");
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn io_errors_are_written_in_gos_words() {
        let errno = |n| GoIo(&std::io::Error::from_raw_os_error(n)).to_string();
        // ENOENT, ECONNREFUSED, ECONNRESET, EACCES (Linux numbers), as Go's table says them.
        assert_eq!(errno(2), "no such file or directory");
        assert_eq!(errno(111), "connection refused");
        assert_eq!(errno(104), "connection reset by peer");
        assert_eq!(errno(13), "permission denied");
        let other = |m: &str| GoIo(&std::io::Error::other(m.to_owned())).to_string();
        assert_eq!(other("Network unreachable"), "network unreachable");
        assert_eq!(other("TLS handshake eof"), "TLS handshake eof");
        assert_eq!(other("connection closed"), "connection closed");
        assert_eq!(other(""), "");
    }

    #[test]
    fn a_chain_writes_every_cause_and_an_unknown_word_the_vocabulary() {
        #[derive(Debug, thiserror::Error)]
        #[error("reading the list")]
        struct Outer(#[source] std::io::Error);
        let io = std::io::Error::other("connection reset");
        assert_eq!(
            Chain(&Outer(io)).to_string(),
            "reading the list: connection reset"
        );
        let unknown = UnknownWord {
            word: "x".into(),
            expected: &["delta", "real"],
        };
        assert_eq!(unknown.to_string(), r#""x" is none of delta, real"#);
    }
}
