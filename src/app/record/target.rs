//! Where `--record` writes and `kwatch replay` reads: a JSON-lines file, or a database
//! named by a URL (`sqlite:PATH`, `postgres://…`, `postgres:` with libpq's `PG*`
//! variables or its `key=value` words). Parsing only: no I/O, no connection.
//!
//! A PostgreSQL URL may carry a password: [`Target`]'s `Display` masks it, and every line
//! kwatch writes names a target through it.

use std::fmt;
use std::path::PathBuf;

/// A recording's place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A JSON-lines file (`-` for stdin, replay only).
    File(PathBuf),
    /// An SQLite database file (`sqlite:PATH`, `sqlite://PATH`).
    Sqlite(PathBuf),
    /// A PostgreSQL database: a `postgres://` or `postgresql://` URL, or libpq's
    /// `key=value` words after `postgres:` (empty: the `PG*` variables alone).
    Postgres(Postgres),
}

/// How a PostgreSQL database is named, as psql takes it.
#[derive(Clone, PartialEq, Eq)]
pub enum Postgres {
    /// `postgres://user:password@host:port/db?sslmode=…`: what the URL leaves out comes
    /// from the `PG*` variables, as libpq fills it in.
    Url(String),
    /// libpq's keyword/value form (`host=db dbname=kwatch sslmode=require`); empty: every
    /// setting from the `PG*` variables and their defaults.
    Words(Vec<(String, String)>),
}

impl fmt::Debug for Postgres {
    /// Masked: a password never reaches a log line either.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Postgres({self})")
    }
}

/// A `--record`/`replay` argument that names a database wrongly: one line naming the
/// fix (exit 2).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum BadTarget {
    #[error("{0:?}: sqlite: needs a file, e.g. sqlite:kwatch.db or sqlite:///var/lib/kwatch.db")]
    SqliteWithoutPath(String),
    #[error(
        "{url}: kwatch records into PostgreSQL (postgres://USER@HOST/DB), SQLite \
         (sqlite:PATH) or a JSON-lines file, not {scheme}://"
    )]
    UnknownScheme { url: String, scheme: String },
    #[error(
        "{0}: expected libpq's key=value words after postgres:, e.g. \
         postgres:host=db.example dbname=kwatch (or a postgres:// URL)"
    )]
    BadWords(String),
    #[error("{url}: {why} (expected postgres://USER[:PASSWORD]@HOST[:PORT]/DB[?sslmode=…])")]
    BadUrl { url: String, why: String },
}

impl Target {
    /// Reads `--record`'s or `replay`'s argument. A path that is none of the database
    /// forms is a file (`./postgres:x` names a file of that name).
    pub fn parse(arg: &std::ffi::OsStr) -> Result<Target, BadTarget> {
        let Some(s) = arg.to_str() else {
            return Ok(Target::File(PathBuf::from(arg)));
        };
        if let Some(rest) = s.strip_prefix("sqlite:") {
            let path = rest.strip_prefix("//").unwrap_or(rest);
            // `sqlite::memory:` would record into nothing that outlives the run.
            if path.is_empty() || path.starts_with(':') {
                return Err(BadTarget::SqliteWithoutPath(s.to_owned()));
            }
            return Ok(Target::Sqlite(PathBuf::from(path)));
        }
        for scheme in ["postgres", "postgresql"] {
            if let Some(rest) = s.strip_prefix(scheme).and_then(|r| r.strip_prefix(':')) {
                if rest.starts_with("//") {
                    check_url(s)?;
                    return Ok(Target::Postgres(Postgres::Url(s.to_owned())));
                }
                return words(rest)
                    .map(|w| Target::Postgres(Postgres::Words(w)))
                    .ok_or_else(|| BadTarget::BadWords(mask_words(rest)));
            }
        }
        if let Some((scheme, _)) = s.split_once("://") {
            let plain = !scheme.is_empty()
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
            if plain {
                return Err(BadTarget::UnknownScheme {
                    url: mask_url(s),
                    scheme: scheme.to_owned(),
                });
            }
        }
        Ok(Target::File(PathBuf::from(s)))
    }

    /// A database, not a file.
    pub fn is_database(&self) -> bool {
        !matches!(self, Target::File(_))
    }
}

impl fmt::Display for Target {
    /// The target as lines name it: a PostgreSQL password masked.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::File(p) => write!(f, "{}", p.display()),
            Target::Sqlite(p) => write!(f, "sqlite:{}", p.display()),
            Target::Postgres(p) => write!(f, "{p}"),
        }
    }
}

impl fmt::Display for Postgres {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Postgres::Url(u) => f.write_str(&mask_url(u)),
            Postgres::Words(w) if w.is_empty() => f.write_str("postgres: (from the PG* variables)"),
            Postgres::Words(w) => {
                let words: Vec<String> = w
                    .iter()
                    .map(|(k, v)| match k.as_str() {
                        "password" => format!("{k}=***"),
                        _ => format!("{k}={v}"),
                    })
                    .collect();
                write!(f, "postgres:{}", words.join(" "))
            }
        }
    }
}

/// The checks a URL must pass before any connection: an authority, a port that is a
/// number. The rest (unknown parameters) is the driver's to refuse.
fn check_url(url: &str) -> Result<(), BadTarget> {
    let bad = |why: &str| BadTarget::BadUrl {
        url: mask_url(url),
        why: why.to_owned(),
    };
    let after = url.split_once("://").map_or("", |(_, a)| a);
    let authority = after.split(['/', '?']).next().unwrap_or("");
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    // `[::1]:5432`: the port after the bracket.
    let port = match host_port.rsplit_once(']') {
        Some((_, rest)) => rest.strip_prefix(':'),
        None => host_port.rsplit_once(':').map(|(_, p)| p),
    };
    if let Some(p) = port {
        if p.parse::<u16>().is_err() {
            return Err(bad(&format!("the port {p:?} is not a number")));
        }
    }
    if after.contains(char::is_whitespace) {
        return Err(bad("a URL has no spaces (percent-encode them as %20)"));
    }
    Ok(())
}

/// libpq's `key=value` words (values may be single-quoted, `\'` and `\\` escaped), or
/// `None` if a word is not `key=value`.
fn words(s: &str) -> Option<Vec<(String, String)>> {
    let mut out = Vec::new();
    let mut chars = s.trim().chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        if chars.peek().is_none() {
            return Some(out);
        }
        let mut key = String::new();
        while let Some(&c) = chars.peek() {
            if c == '=' || c.is_whitespace() {
                break;
            }
            key.push(c);
            chars.next();
        }
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        if key.is_empty() || chars.next() != Some('=') {
            return None;
        }
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let mut value = String::new();
        if chars.peek() == Some(&'\'') {
            chars.next();
            loop {
                match chars.next()? {
                    '\\' => value.push(chars.next()?),
                    '\'' => break,
                    c => value.push(c),
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c.is_whitespace() {
                    break;
                }
                if c == '\\' {
                    chars.next();
                    value.push(chars.next()?);
                    continue;
                }
                value.push(c);
                chars.next();
            }
        }
        out.push((key, value));
    }
}

/// `url` with its password (userinfo's, or a `password=` parameter) as `***`.
pub fn mask_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let authority = match authority.rsplit_once('@') {
        Some((user, host)) => match user.split_once(':') {
            Some((name, _)) => format!("{name}:***@{host}"),
            None => format!("{user}@{host}"),
        },
        None => authority.to_owned(),
    };
    let tail = match tail.split_once('?') {
        Some((path, query)) => {
            let params: Vec<String> = query
                .split('&')
                .map(|p| match p.split_once('=') {
                    Some((k, _)) if k.eq_ignore_ascii_case("password") => format!("{k}=***"),
                    _ => p.to_owned(),
                })
                .collect();
            format!("{path}?{}", params.join("&"))
        }
        None => tail.to_owned(),
    };
    format!("{scheme}://{authority}{tail}")
}

/// libpq words as a line may show them: a `password=` value masked (also in words that
/// do not parse).
fn mask_words(s: &str) -> String {
    let mut out = Vec::new();
    let mut masking = false;
    for w in s.split_whitespace() {
        if masking {
            masking = false;
            out.push("***".to_owned());
            continue;
        }
        match w.split_once('=') {
            Some((k, v)) if k == "password" => {
                masking = v.is_empty();
                out.push(format!("{k}=***"));
            }
            _ => out.push(w.to_owned()),
        }
    }
    format!("postgres:{}", out.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Target, BadTarget> {
        Target::parse(std::ffi::OsStr::new(s))
    }

    #[test]
    fn paths_are_files_and_urls_databases() {
        assert_eq!(parse("rec.jsonl"), Ok(Target::File("rec.jsonl".into())));
        assert_eq!(parse("-"), Ok(Target::File("-".into())));
        assert_eq!(
            parse("./postgres:x"),
            Ok(Target::File("./postgres:x".into()))
        );
        assert_eq!(parse("sqlite:k.db"), Ok(Target::Sqlite("k.db".into())));
        assert_eq!(
            parse("sqlite:///var/k.db"),
            Ok(Target::Sqlite("/var/k.db".into()))
        );
        let url = "postgres://kw:secret@127.0.0.1:5433/rec?sslmode=disable";
        assert_eq!(
            parse(url),
            Ok(Target::Postgres(Postgres::Url(url.to_owned())))
        );
        assert!(matches!(
            parse("postgresql://db/rec"),
            Ok(Target::Postgres(Postgres::Url(_)))
        ));
        assert_eq!(
            parse("postgres:"),
            Ok(Target::Postgres(Postgres::Words(vec![])))
        );
        assert_eq!(
            parse("postgres:host=db dbname='my rec' password=p\\ w"),
            Ok(Target::Postgres(Postgres::Words(vec![
                ("host".into(), "db".into()),
                ("dbname".into(), "my rec".into()),
                ("password".into(), "p w".into()),
            ])))
        );
    }

    #[test]
    fn malformed_database_urls_say_what_to_write() {
        for (arg, want) in [
            ("sqlite:", "sqlite: needs a file"),
            ("sqlite::memory:", "sqlite: needs a file"),
            (
                "mysql://u:pw@db/x",
                "mysql://u:***@db/x: kwatch records into PostgreSQL",
            ),
            (
                "postgres://u:pw@db:54x2/x",
                "the port \"54x2\" is not a number",
            ),
            ("postgres:host", "expected libpq's key=value words"),
        ] {
            let err = parse(arg).unwrap_err().to_string();
            assert!(err.contains(want), "{arg}: {err}");
            assert!(!err.contains("pw@"), "{arg}: the password shows: {err}");
        }
    }

    #[test]
    fn passwords_are_masked_wherever_a_target_is_shown() {
        let t = parse("postgres://kw:s3cret@db:5432/rec?password=other&sslmode=require").unwrap();
        assert_eq!(
            t.to_string(),
            "postgres://kw:***@db:5432/rec?password=***&sslmode=require"
        );
        assert!(!format!("{t:?}").contains("s3cret"));
        let t = parse("postgres:host=db password=s3cret").unwrap();
        assert_eq!(t.to_string(), "postgres:host=db password=***");
        assert_eq!(
            mask_words("host=db password= s3cret x"),
            "postgres:host=db password=*** *** x"
        );
        assert_eq!(mask_url("postgres://kw@db/rec"), "postgres://kw@db/rec");
    }
}
