//! The programs the integration tests run besides kwatch, each looked for once before its
//! first use. A missing one fails the test with one line naming the command that installs
//! it, the same command README.md's test section gives.

use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// One program a test needs: how to tell it is there, and how to install it.
struct Tool {
    what: &'static str,
    probe: &'static [&'static str],
    install: &'static str,
    found: OnceLock<bool>,
}

impl Tool {
    /// Panics with one line when the program is missing.
    fn need(&self) {
        let found = *self.found.get_or_init(|| {
            Command::new(self.probe[0])
                .args(&self.probe[1..])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        });
        assert!(
            found,
            "{} not found: install it with `{}`",
            self.what, self.install
        );
    }
}

/// The program `what`, there when `probe` runs and succeeds; `install` installs it.
const fn tool(what: &'static str, probe: &'static [&'static str], install: &'static str) -> Tool {
    Tool {
        what,
        probe,
        install,
        found: OnceLock::new(),
    }
}

static KUBECTL: Tool = tool(
    "kubectl at /usr/bin/kubectl",
    &["/usr/bin/kubectl", "version", "--client"],
    "apt-get install -y kubernetes-client",
);
static TMUX: Tool = tool("tmux", &["tmux", "-V"], "apt-get install -y tmux");
static PYYAML: Tool = tool(
    "python3 with PyYAML",
    &["python3", "-c", "import yaml"],
    "python3 -m pip install pyyaml",
);
static CHROMIUM: Tool = tool(
    "chromium at /usr/bin/chromium",
    &["/usr/bin/chromium", "--version"],
    "apt-get install -y chromium",
);
static SCRIPT: Tool = tool(
    "script (util-linux)",
    &["/usr/bin/script", "--version"],
    "apt-get install -y bsdutils",
);

/// `/usr/bin/kubectl`, the real kubectl the tests check the simulator with.
pub fn kubectl() -> Command {
    KUBECTL.need();
    Command::new("/usr/bin/kubectl")
}

/// `tmux`, the terminal `--live` runs in.
pub fn tmux() -> Command {
    TMUX.need();
    Command::new("tmux")
}

/// `python3` that can `import yaml`: a YAML 1.1 reader for `-o yaml`.
pub fn python3_with_yaml() -> Command {
    PYYAML.need();
    Command::new("python3")
}

/// `/usr/bin/script`, a pseudo-terminal for kwatch's stdout.
pub fn script() -> Command {
    SCRIPT.need();
    Command::new("/usr/bin/script")
}

/// `/usr/bin/chromium`, the browser the timeline page is opened in (tests/util/browser.rs).
pub fn chromium() -> Command {
    CHROMIUM.need();
    Command::new("/usr/bin/chromium")
}
