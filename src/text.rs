//! Escapes control characters in server data before it reaches a terminal: object
//! names, labels and server messages may contain them (an ESC could rewrite the screen).
//! Every layer that writes a line of its own (the client's errors, the printers, the
//! application's diagnostics) escapes it here.

use std::borrow::Cow;

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

#[cfg(test)]
mod tests {
    use super::sanitize;

    #[test]
    fn escapes_controls_only() {
        assert_eq!(sanitize("web-1"), "web-1");
        assert_eq!(sanitize("a\u{1b}[2Jb"), "a\\u{1b}[2Jb");
        assert_eq!(sanitize("tab\there\u{9b}"), "tab\\u{9}here\\u{9b}");
        assert_eq!(sanitize("größe-日本"), "größe-日本");
    }
}
