//! The page itself: `page.html` with `page.css`, `page.js` and the data put in its place,
//! one file that needs no network. The data (a few bytes per delta, diffs as text) is
//! gzipped and base64-encoded into a `<script type="application/gzip+base64">` element, which the page
//! reads back with the browser's own `DecompressionStream` (Chrome 80, Firefox 113,
//! Safari 16.4): a recording of 100,000 deltas makes a page of a few megabytes, small
//! enough for an incident ticket.

use std::io::{self, Write as _};

use base64::Engine as _;

const HTML: &str = include_str!("page.html");
const CSS: &str = include_str!("page.css");
const JS: &str = include_str!("page.js");

/// Where `page.html` takes the style, the script and the data.
const CSS_AT: &str = "/*kwatch:css*/";
const JS_AT: &str = "/*kwatch:js*/";
const DATA_AT: &str = "kwatch:data";

/// What the file holds while the run goes on (a run killed before its end leaves it).
pub const PENDING: &str = "<!doctype html><meta charset=\"utf-8\"><title>kwatch timeline \
    (not written yet)</title><p>kwatch writes this timeline when its run ends; this run had \
    not ended when the file was read.</p>\n";

/// The page of `data` (the JSON of [`super::Story::json`]).
pub fn render(data: &str) -> io::Result<String> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(data.as_bytes())?;
    let packed = base64::engine::general_purpose::STANDARD.encode(gz.finish()?);
    let mut out = String::with_capacity(HTML.len() + CSS.len() + JS.len() + packed.len());
    let mut rest = HTML;
    for (at, with) in [(CSS_AT, CSS), (DATA_AT, packed.as_str()), (JS_AT, JS)] {
        let Some((before, after)) = rest.split_once(at) else {
            // Not reached: page.html holds each marker once (the test below).
            return Err(io::Error::other(format!("page.html lacks {at}")));
        };
        out.push_str(before);
        out.push_str(with);
        rest = after;
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_template_holds_each_marker_once_in_order_and_nothing_reaches_out() {
        let mut from = 0;
        for at in [CSS_AT, DATA_AT, JS_AT] {
            assert_eq!(HTML.matches(at).count(), 1, "{at}");
            let i = HTML.find(at).unwrap();
            assert!(i > from, "{at} out of order");
            from = i;
        }
        for part in [HTML, CSS, JS] {
            // One file that needs no network: no address, no import, no element that
            // loads something.
            for word in ["http://", "https://", "@import", "<link", " src=", "fetch("] {
                assert!(!part.contains(word), "{word} in the page");
            }
        }
        // The script is inlined: a closing tag inside it would end it.
        assert!(!JS.contains("</script"));
        assert!(!CSS.contains("</style"));
    }

    #[test]
    fn the_data_goes_in_gzipped_and_comes_back() {
        use std::io::Read as _;
        let page = render(r#"{"format":"kwatch-timeline/1"}"#).unwrap();
        let start = page.find("application/gzip+base64").unwrap();
        let body = &page[start..];
        let b64 = &body[body.find('>').unwrap() + 1..body.find("</script>").unwrap()];
        let gz = base64::engine::general_purpose::STANDARD
            .decode(b64.trim())
            .unwrap();
        let mut json = String::new();
        flate2::read::GzDecoder::new(&gz[..])
            .read_to_string(&mut json)
            .unwrap();
        assert_eq!(json, r#"{"format":"kwatch-timeline/1"}"#);
    }
}
