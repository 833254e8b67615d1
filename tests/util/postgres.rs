//! A real PostgreSQL for the tests: a private cluster made with Debian's `postgresql`
//! package (`initdb` in a temporary directory, `pg_ctl` to start and stop it), listening
//! on a free loopback port and a socket in that directory, with a password (so that the
//! tests see it masked everywhere kwatch names the database).
//!
//! PostgreSQL refuses to run as root: run as root (CI), the cluster's directory belongs
//! to the `postgres` user the package creates and every server command runs through
//! `runuser -u postgres --`; as anyone else, as that user.
//!
//! Stopped at the end whatever happens: a watchdog process holds the read end of a pipe
//! whose write end only this process holds; when the test's [`Postgres`] is dropped, or
//! the test binary dies, the pipe closes and the watchdog stops the server (`pg_ctl stop
//! -m immediate`) and removes the directory. [`Postgres::shared`] is one server for the
//! tests that do not stop theirs (each test its own database); a test that stops and
//! starts its server ([`Postgres::stop`], [`Postgres::start`]) makes its own.

#![allow(dead_code)]

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// The password of the `kwatch` superuser of every test cluster.
pub const PASSWORD: &str = "s3cret-Pw";

/// The install command CI runs when the server is missing (`.ci/run`).
const INSTALL: &str = "apt-get install -y postgresql";

pub struct Postgres {
    dir: PathBuf,
    bin: PathBuf,
    pub port: u16,
    /// Server commands run as `postgres` (the test runs as root).
    as_postgres: bool,
    watchdog: Option<Child>,
}

/// The newest PostgreSQL's binaries (`/usr/lib/postgresql/N/bin`, Debian's layout).
fn bindir() -> PathBuf {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let v = e.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((v, bin))
        })
        .collect();
    versions.sort();
    match versions.pop() {
        Some((_, bin)) => bin,
        None => panic!("no PostgreSQL server under /usr/lib/postgresql: {INSTALL}"),
    }
}

/// util-linux's runuser, which Debian keeps in /usr/sbin (off an ordinary user's PATH).
fn runuser() -> &'static str {
    ["/usr/sbin/runuser", "/sbin/runuser", "/usr/bin/runuser"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .unwrap_or("runuser")
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(1).map(|u| u == "0"))
        })
        .unwrap_or(false)
}

/// A port nobody listens on now.
fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    l.local_addr().expect("its address").port()
}

impl Postgres {
    /// A new cluster, started.
    pub fn new() -> Postgres {
        let bin = bindir();
        let as_postgres = is_root();
        let dir = tempfile::Builder::new()
            .prefix("kwatch-pg-")
            .tempdir()
            .expect("tempdir")
            .keep();
        if as_postgres {
            let ok = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(&dir)
                .status()
                .expect("chown");
            assert!(ok.success(), "chown {} to postgres", dir.display());
        }
        let mut pg = Postgres {
            dir,
            bin,
            port: 0,
            as_postgres,
            watchdog: None,
        };
        pg.watch();
        let pwfile = pg.dir.join("pw");
        std::fs::write(&pwfile, PASSWORD).expect("password file");
        pg.own(&pwfile);
        pg.run(
            "initdb",
            &[
                "-D",
                &pg.data(),
                "-U",
                "kwatch",
                "--pwfile",
                &pwfile.to_string_lossy(),
                "-A",
                "scram-sha-256",
                "--no-sync",
                "--no-instructions",
            ],
        );
        // A port that was free may be taken by the time the server binds it: try again.
        for _ in 0..5 {
            pg.port = free_port();
            if pg.try_start() {
                return pg;
            }
        }
        panic!("PostgreSQL did not start; its log:\n{}", pg.log());
    }

    /// The server every test that keeps it running shares.
    pub fn shared() -> &'static Postgres {
        static SHARED: OnceLock<Postgres> = OnceLock::new();
        SHARED.get_or_init(Postgres::new)
    }

    fn data(&self) -> String {
        self.dir.join("data").to_string_lossy().into_owned()
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("log")).unwrap_or_default()
    }

    /// `path` given to the user the server runs as.
    fn own(&self, path: &Path) {
        if self.as_postgres {
            let _ = Command::new("chown")
                .arg("postgres:postgres")
                .arg(path)
                .status();
        }
    }

    /// A server command, as the user the server runs as.
    fn command(&self, program: &str) -> Command {
        let path = self.bin.join(program);
        let mut cmd = match self.as_postgres {
            true => {
                let mut c = Command::new(runuser());
                c.args(["-u", "postgres", "--"]).arg(path);
                c
            }
            false => Command::new(path),
        };
        cmd.env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("PGPASSWORD", PASSWORD)
            .current_dir(&self.dir)
            .stdin(Stdio::null());
        cmd
    }

    fn run(&self, program: &str, args: &[&str]) -> String {
        let out = self.command(program).args(args).output().expect(program);
        assert!(
            out.status.success(),
            "{program} {args:?} failed:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The watchdog: stops the server and removes the directory once this process no
    /// longer holds the pipe.
    fn watch(&mut self) {
        let stop = format!(
            "{} -D {} -m immediate stop",
            self.bin.join("pg_ctl").display(),
            self.data()
        );
        let stop = match self.as_postgres {
            true => format!("{} -u postgres -- {stop}", runuser()),
            false => stop,
        };
        let script = format!(
            "read _ignored; {stop} >/dev/null 2>&1; rm -rf {}",
            self.dir.display()
        );
        let child = Command::new("sh")
            .args(["-c", &script])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("the watchdog");
        self.watchdog = Some(child);
    }

    /// Starts the stopped server on its port; `false` if it did not come up.
    fn try_start(&self) -> bool {
        let opts = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off \
             -c full_page_writes=off -c max_connections=50",
            self.port,
            self.dir.display()
        );
        let log = self.dir.join("log");
        let out = self
            .command("pg_ctl")
            .args([
                "-D",
                &self.data(),
                "-l",
                &log.to_string_lossy(),
                "-o",
                &opts,
                "-w",
                "-t",
                "60",
                "start",
            ])
            .output()
            .expect("pg_ctl start");
        out.status.success()
    }

    /// Starts the server again after [`Postgres::stop`], on the same port.
    pub fn start(&self) {
        assert!(
            self.try_start(),
            "PostgreSQL did not start again; its log:\n{}",
            self.log()
        );
    }

    /// Stops the server (fast shutdown: connections cut), waiting until it is down.
    pub fn stop(&self) {
        self.run("pg_ctl", &["-D", &self.data(), "-m", "fast", "-w", "stop"]);
    }

    /// A new database of its own for a test; its URL (with the password).
    pub fn database(&self) -> String {
        static N: AtomicUsize = AtomicUsize::new(0);
        let name = format!(
            "t{}_{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        );
        self.run(
            "createdb",
            &[
                "-h",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-U",
                "kwatch",
                &name,
            ],
        );
        self.url(&name)
    }

    pub fn url(&self, db: &str) -> String {
        format!("postgres://kwatch:{PASSWORD}@127.0.0.1:{}/{db}", self.port)
    }

    /// The database of `url` as kwatch's lines name it: user, host, port and database,
    /// never the password.
    pub fn shown(&self, url: &str) -> String {
        url.replace(&format!(":{PASSWORD}@"), "@")
    }

    /// `psql -At -c SQL` against `url`: the rows, `|` between columns.
    pub fn query(&self, url: &str, sql: &str) -> String {
        let out = Command::new(self.bin.join("psql"))
            .args(["-X", "-At", "-v", "ON_ERROR_STOP=1", url, "-c", sql])
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .stdin(Stdio::null())
            .output()
            .expect("psql");
        assert!(
            out.status.success(),
            "psql {sql:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The number a one-value query answers.
    pub fn count(&self, url: &str, sql: &str) -> u64 {
        let out = self.query(url, sql);
        out.trim()
            .parse()
            .unwrap_or_else(|_| panic!("{sql:?} answered {out:?}"))
    }

    /// The rows of kwatch_records in `url`: `Err` with why while there is no such table
    /// (kwatch has not migrated the database yet).
    pub fn records(&self, url: &str) -> Result<u64, String> {
        let out = Command::new(self.bin.join("psql"))
            .args([
                "-X",
                "-At",
                url,
                "-c",
                "SELECT count(*) FROM kwatch_records",
            ])
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .stdin(Stdio::null())
            .output()
            .map_err(|e| e.to_string())?;
        let text = String::from_utf8_lossy(&out.stdout);
        match out.status.success() {
            true => text.trim().parse().map_err(|_| text.into_owned()),
            false => Err(String::from_utf8_lossy(&out.stderr).into_owned()),
        }
    }

    /// Whether the server answers now.
    pub fn answers(&self) -> bool {
        self.command("pg_isready")
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string()])
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }
}

impl Drop for Postgres {
    /// Closes the watchdog's pipe and waits for it: the server stopped, the directory gone.
    fn drop(&mut self) {
        if let Some(mut w) = self.watchdog.take() {
            if let Some(mut stdin) = w.stdin.take() {
                let _ = stdin.write_all(b"\n");
            }
            let _ = w.wait();
        }
    }
}
