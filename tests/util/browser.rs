//! A page in a real browser: headless Chromium (Debian's `chromium`) driven over the Chrome
//! DevTools Protocol, for the tests of `--timeline`'s page. What a test needs of the
//! protocol is a dozen messages over one websocket (tungstenite), written here, not the
//! headless_chrome crate: it generates every type of the protocol at build time, minutes
//! of a 2-core machine for the few commands sent here, and launches the browser with flags
//! of its own.
//!
//! [`Browser::open`] starts `chromium --headless --remote-debugging-port=0` with a new
//! profile in a temp dir and without anything that reaches the network (no background
//! networking, component updates or sync: the machine has no network, and lookups would
//! hang it), reads the port from the profile's `DevToolsActivePort`, opens one page at a
//! fixed size and loads the file. [`Browser::eval`] runs JavaScript in it (promises
//! awaited), [`Browser::until`] polls an expression with a bound (never a sleep),
//! [`Browser::click`] and [`Browser::wheel`] send real input events at a point,
//! [`Browser::screenshot`] takes a PNG. Dropping it kills the browser.
//!
//! The protocol: <https://chromedevtools.github.io/devtools-protocol/> (Target,
//! Runtime.evaluate, Input.dispatchMouseEvent, Page.captureScreenshot,
//! Emulation.setDeviceMetricsOverride).

use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{json, Value};

use super::eventually;

/// How long one protocol command may take before the test fails.
const COMMAND: Duration = Duration::from_secs(60);

/// A headless Chromium showing one page.
pub struct Browser {
    child: Child,
    _profile: tempfile::TempDir,
    ws: tungstenite::WebSocket<TcpStream>,
    session: String,
    next: u64,
}

impl Browser {
    /// Starts Chromium and loads `page` (a local file) in a `width`×`height` viewport.
    pub fn open(page: &Path, width: u32, height: u32) -> Browser {
        let profile = tempfile::tempdir().expect("a profile dir");
        let child = super::tools::chromium()
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-extensions",
                "--hide-scrollbars",
                "--remote-debugging-port=0",
                "--remote-debugging-address=127.0.0.1",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting chromium");
        let active = profile.path().join("DevToolsActivePort");
        let (port, path) = eventually(COMMAND, "chromium's DevToolsActivePort", || {
            let text = std::fs::read_to_string(&active).map_err(|e| e.to_string())?;
            let mut lines = text.lines();
            match (
                lines.next().and_then(|p| p.parse::<u16>().ok()),
                lines.next(),
            ) {
                (Some(port), Some(path)) => Ok((port, path.to_owned())),
                _ => Err(format!("not written yet: {text:?}")),
            }
        });
        let stream = TcpStream::connect(("127.0.0.1", port)).expect("connecting to chromium");
        stream
            .set_read_timeout(Some(COMMAND))
            .expect("a read timeout");
        let url = format!("ws://127.0.0.1:{port}{path}");
        let (ws, _) = tungstenite::client(url.as_str(), stream).expect("chromium's websocket");
        let mut b = Browser {
            child,
            _profile: profile,
            ws,
            session: String::new(),
            next: 0,
        };
        let target = b.browser_call("Target.createTarget", json!({"url": "about:blank"}));
        let id = target["targetId"].as_str().expect("a target id").to_owned();
        let attached = b.browser_call(
            "Target.attachToTarget",
            json!({"targetId": id, "flatten": true}),
        );
        b.session = attached["sessionId"]
            .as_str()
            .expect("a session id")
            .to_owned();
        b.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}),
        );
        let url = format!(
            "file://{}",
            page.canonicalize().expect("the page").display()
        );
        b.call("Page.navigate", json!({"url": url}));
        b.until(
            "the page's document to load",
            "document.readyState === 'complete'",
        );
        b
    }

    /// Sends a command to the browser (no session) and returns its result.
    fn browser_call(&mut self, method: &str, params: Value) -> Value {
        self.send(method, params, None)
    }

    /// Sends a command to the page and returns its result.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let session = self.session.clone();
        self.send(method, params, Some(&session))
    }

    fn send(&mut self, method: &str, params: Value, session: Option<&str>) -> Value {
        self.next += 1;
        let id = self.next;
        let mut msg = json!({"id": id, "method": method, "params": params});
        if let Some(s) = session {
            msg["sessionId"] = json!(s);
        }
        self.ws
            .send(tungstenite::Message::text(msg.to_string()))
            .unwrap_or_else(|e| panic!("sending {method}: {e}"));
        let deadline = Instant::now() + COMMAND;
        loop {
            assert!(Instant::now() < deadline, "no answer to {method}");
            let text = match self.ws.read() {
                Ok(tungstenite::Message::Text(t)) => t.to_string(),
                Ok(_) => continue,
                Err(e) => panic!("reading chromium's answer to {method}: {e}"),
            };
            let answer: Value = serde_json::from_str(&text).expect("a JSON message");
            // Events (no id) and answers to other commands are not this one's.
            if answer["id"] != json!(id) {
                continue;
            }
            if let Some(err) = answer.get("error") {
                panic!("{method} failed: {err}");
            }
            return answer["result"].clone();
        }
    }

    /// The value of `expr` in the page (a promise awaited); panics with the exception.
    pub fn eval(&mut self, expr: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expr, "returnByValue": true, "awaitPromise": true}),
        );
        if let Some(e) = r.get("exceptionDetails") {
            panic!("{expr}\nthrew: {e}");
        }
        r["result"]["value"].clone()
    }

    /// Waits (bounded) until `expr` is truthy in the page, and returns its value.
    pub fn until(&mut self, what: &str, expr: &str) -> Value {
        let check = format!("(() => {{ const v = ({expr}); return v ? v : null; }})()");
        eventually(COMMAND, what, || {
            let v = self.eval(&check);
            if v.is_null() {
                Err(v)
            } else {
                Ok(v)
            }
        })
    }

    /// A left click at (`x`, `y`), CSS pixels of the viewport, as a mouse makes it.
    pub fn click(&mut self, x: f64, y: f64) {
        for kind in ["mouseMoved", "mousePressed", "mouseReleased"] {
            self.call(
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}),
            );
        }
    }

    /// The wheel turned by `delta_y` at (`x`, `y`), with Ctrl held when `ctrl`.
    pub fn wheel(&mut self, x: f64, y: f64, delta_y: f64, ctrl: bool) {
        let modifiers = if ctrl { 2 } else { 0 };
        self.call(
            "Input.dispatchMouseEvent",
            json!({"type": "mouseWheel", "x": x, "y": y, "deltaX": 0, "deltaY": delta_y,
                   "modifiers": modifiers}),
        );
    }

    /// A key pressed and released, as the keyboard sends it (`key` as the DOM names it).
    pub fn key(&mut self, key: &str) {
        for kind in ["keyDown", "keyUp"] {
            let mut params = json!({"type": kind, "key": key});
            if key.chars().count() == 1 && kind == "keyDown" {
                params["text"] = json!(key);
            }
            self.call("Input.dispatchKeyEvent", params);
        }
    }

    /// A PNG of the viewport.
    pub fn screenshot(&mut self) -> Vec<u8> {
        let r = self.call("Page.captureScreenshot", json!({"format": "png"}));
        base64::engine::general_purpose::STANDARD
            .decode(r["data"].as_str().expect("PNG data"))
            .expect("base64")
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
