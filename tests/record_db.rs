//! `--record` into a database and `kwatch replay` from one, against a real PostgreSQL
//! started by the test ([`Postgres`]: Debian's server, a private cluster on a free
//! loopback port) and SQLite files: the same run replays the same from a file, PostgreSQL
//! and SQLite in every format and view; a database stopped mid-churn loses nothing and
//! holds every record once; two kwatch into one database are one fleet; `kill -9` loses
//! at most the last batch and the next run says what it resumed from; `--at` reads the
//! index; bad URLs and unreachable databases say so in one line.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::util::kwatch::{replay, Finished};
use crate::util::postgres::{Postgres, PASSWORD};
use crate::util::{eventually, SimProcess, LIMIT};

/// The most records a `kill -9` may lose: the writer's batch (src/app/record/writer.rs).
const BATCH: usize = 500;

/// A file's lines.
fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(str::to_owned)
        .collect()
}

/// `replay SOURCE ARGS` in `home`, with `source` a path or URL.
fn replay_of(home: &Path, source: &str, args: &[&str]) -> Finished {
    replay(home, Path::new(source), args)
}

/// The lines `replay --stats` writes, its elapsed time (the replay's own) left out.
fn stats_without_elapsed(stderr: &str) -> String {
    stderr
        .lines()
        .filter(|l| !l.trim_start().starts_with("elapsed:"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Asserts that no line kwatch wrote shows the test cluster's password.
#[track_caller]
fn masked(out: &Finished) {
    for text in [out.stdout.join("\n"), out.stderr.clone()] {
        assert!(!text.contains(PASSWORD), "the password shows:\n{text}");
    }
}

/// The value of the sample `name` (without labels) in an OpenMetrics exposition.
#[track_caller]
fn metric(body: &str, name: &str) -> f64 {
    body.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in:\n{body}"))
}

/// The time of the record in the middle of a recording.
fn middle_time(file: &Path) -> String {
    let recs: Vec<Value> = lines(file)
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    recs[recs.len() / 2]["time"].as_str().unwrap().to_owned()
}

#[test]
fn a_recording_replays_the_same_from_a_file_postgres_and_sqlite_in_every_format_and_view() {
    let pg = Postgres::shared();
    let url = pg.database();
    let sim = SimProcess::start(&["--scenario", "steady", "--churn", "40", "--objects", "12"]);
    let file = sim.dir().join("rec.jsonl");
    let sqlite = format!("sqlite:{}", sim.dir().join("rec.db").display());
    let run = sim.kwatch([
        "pods,deployments",
        "-A",
        "-o",
        "name",
        "--max-events",
        "120",
        "--record",
        file.to_str().unwrap(),
        "--record",
        &url,
        "--stats",
    ]);
    let run = run.exits(0);
    masked(&run);
    assert!(run.stderr.contains("  recorder: "), "{}", run.stderr);
    // The same records again into SQLite: the file replayed into it is no recording of
    // its own, so record the file's run a second time through the recorder itself.
    let lite = sim.kwatch([
        "pods,deployments",
        "-A",
        "-o",
        "name",
        "--max-events",
        "120",
        "--record",
        sim.dir().join("rec2.jsonl").to_str().unwrap(),
        "--record",
        &sqlite,
    ]);
    lite.exits(0);
    let file2 = sim.dir().join("rec2.jsonl");
    let recorded = lines(&file);
    assert!(recorded.len() > 120, "{} records", recorded.len());
    let rows = pg.count(&url, "SELECT count(*) FROM kwatch_records");
    assert_eq!(rows as usize, recorded.len(), "a row per record, each once");
    let at = middle_time(&file);
    let at2 = middle_time(&file2);
    let views: Vec<Vec<String>> = [
        "-o json",
        "-o json --show-managed-fields",
        "-o yaml",
        "",
        "-o wide",
        "-o name",
        "-o watch-events",
        "-o custom-columns=NAME:.metadata.name,RV:.metadata.resourceVersion",
        "-o jsonpath={.metadata.name}",
        "-o json --diff",
        "--diff",
        "-o json --blame",
        "--blame",
        "--view handlers",
        "--view handlers -o json",
        "-o name --stats",
        "-o json pods",
        "-o name deployments",
        "-o json --at AT",
        "--at AT",
        "-o json --since AT --diff",
        "-o name --until AT",
        "-o json -n default",
        "--types Added,Deleted -o name",
    ]
    .iter()
    .map(|v| v.split_whitespace().map(str::to_owned).collect())
    .collect();
    for (source, other, time) in [(url.as_str(), &file, &at), (sqlite.as_str(), &file2, &at2)] {
        for view in &views {
            let args: Vec<&str> = view
                .iter()
                .map(|w| if w == "AT" { time.as_str() } else { w.as_str() })
                .collect();
            let from_file = replay_of(sim.dir(), other.to_str().unwrap(), &args);
            let from_db = replay_of(sim.dir(), source, &args);
            masked(&from_db);
            assert_eq!(from_file.code(), Some(0), "{args:?}: {}", from_file.stderr);
            assert_eq!(
                from_db.code(),
                Some(0),
                "{args:?} from {source}: {}",
                from_db.stderr
            );
            assert!(!from_file.stdout.is_empty(), "{args:?}: nothing printed");
            assert_eq!(
                from_db.stdout, from_file.stdout,
                "replay {args:?} of {source}"
            );
            assert_eq!(
                stats_without_elapsed(&from_db.stderr),
                stats_without_elapsed(&from_file.stderr),
                "replay {args:?} of {source}: stderr"
            );
        }
    }
    // The database gives the file back, byte for byte.
    let back = replay_of(sim.dir(), &url, &["-o", "json", "--show-managed-fields"]);
    assert_eq!(back.stdout, recorded);
}

#[test]
fn postgres_stopped_mid_churn_loses_nothing_and_holds_every_record_once() {
    let pg = Postgres::new();
    let url = pg.database();
    let sim = SimProcess::start(&["--scenario", "steady", "--churn", "60", "--objects", "20"]);
    let file = sim.dir().join("rec.jsonl");
    let kw = sim.start_kwatch([
        "pods",
        "-A",
        "-o",
        "json",
        "--record",
        file.to_str().unwrap(),
        "--record",
        &url,
        "--record-buffer",
        "16KiB",
        "--stats",
        "--metrics",
        "127.0.0.1:0",
    ]);
    eventually(LIMIT, "records in PostgreSQL", || match pg.records(&url) {
        Ok(n) if n >= 50 => Ok(n),
        other => Err(other),
    });
    pg.stop();
    let shown = pg.shown(&url);
    let printed = kw.lines().len();
    eventually(
        LIMIT,
        "kwatch saying the database cannot take the records",
        || {
            let e = kw.stderr();
            match e.contains(&format!("~ recording: cannot write to {shown}")) {
                true => Ok(()),
                false => Err(e),
            }
        },
    );
    // The watch goes on: some 30 s of churn (60 changes a second) printed while the
    // database is down, and past the memory bound, on disk.
    eventually(
        LIMIT,
        "records printed and spilled while PostgreSQL is down",
        || {
            let (e, n) = (kw.stderr(), kw.lines().len());
            match e.contains("the next go to") && n >= printed + 1800 {
                true => Ok(()),
                false => Err((n, e)),
            }
        },
    );
    assert!(!pg.answers(), "PostgreSQL was down all along");
    let addr = eventually(LIMIT, "the metrics address", || {
        match kw.stderr().contains("kwatch: metrics on http://") {
            true => Ok(crate::metrics::metrics_addr(&kw)),
            false => Err(kw.stderr()),
        }
    });
    let (_, _, down) = crate::metrics::scrape(&addr);
    assert_eq!(metric(&down, "recorder_database_up"), 0.0, "{down}");
    assert!(metric(&down, "recorder_backlog_rows") > 0.0, "{down}");
    assert!(metric(&down, "recorder_spilled_rows_total") > 0.0, "{down}");
    pg.start();
    eventually(LIMIT, "the backlog written", || {
        let e = kw.stderr();
        match e.contains(&format!("~ recording: {shown} is back")) {
            true => Ok(()),
            false => Err(e),
        }
    });
    let (_, _, back) = crate::metrics::scrape(&addr);
    assert_eq!(metric(&back, "recorder_database_up"), 1.0, "{back}");
    assert_eq!(metric(&back, "recorder_backlog_rows"), 0.0, "{back}");
    assert!(metric(&back, "recorder_rows_written_total") > 0.0, "{back}");
    assert!(metric(&back, "recorder_batches_total") > 0.0, "{back}");
    let out = kw.terminate(LIMIT);
    assert!(!out.stderr.contains(PASSWORD), "{}", out.stderr);
    let recorded = lines(&file);
    let rows = pg.count(&url, "SELECT count(*) FROM kwatch_records") as usize;
    assert_eq!(rows, recorded.len(), "every record once: {}", out.stderr);
    let seqs = pg.query(
        &url,
        "SELECT min(seq), max(seq), count(DISTINCT seq) FROM kwatch_records",
    );
    assert_eq!(
        seqs.trim(),
        format!("1|{rows}|{rows}"),
        "numbered 1 to N, none missing"
    );
    let back = replay_of(sim.dir(), &url, &["-o", "json", "--show-managed-fields"]);
    assert_eq!(
        back.stdout, recorded,
        "the database holds the file's records"
    );
    // kwatch printed all along: its stdout has every record too.
    assert_eq!(out.stdout.len(), recorded.len());
    let stats = out
        .stderr
        .lines()
        .find(|l| l.contains("recorder:"))
        .unwrap_or_default();
    assert!(stats.contains(&format!("recorder: {rows} rows")), "{stats}");
    assert!(
        stats.contains("backlog 0") && stats.contains("unreachable 1 times"),
        "{stats}"
    );
    assert!(!stats.contains("spilled 0"), "{stats}");
}

#[test]
fn two_kwatch_on_two_clusters_into_one_database_replay_as_one_fleet() {
    let pg = Postgres::shared();
    let url = pg.database();
    let sim = SimProcess::start(&["--clusters", "2", "--objects", "2"]);
    let runs: Vec<_> = ["kwatch-sim-1", "kwatch-sim-2"]
        .iter()
        .map(|c| {
            sim.start_kwatch([
                "deploy",
                "-A",
                "--context",
                c,
                "-o",
                "name",
                "--until-synced",
                "--record",
                &url,
            ])
        })
        .collect();
    for r in runs {
        r.finish(LIMIT).exits(0);
    }
    assert_eq!(
        pg.count(&url, "SELECT count(DISTINCT writer) FROM kwatch_runs"),
        2
    );
    assert_eq!(
        pg.count(&url, "SELECT count(DISTINCT context) FROM kwatch_records"),
        2
    );
    let fleet = replay_of(sim.dir(), &url, &["--view", "fleet"]).exits(0);
    let both = fleet
        .stdout
        .iter()
        .filter(|l| l.contains("kwatch-sim-1: gen") && l.contains("kwatch-sim-2: gen"))
        .count();
    assert!(
        both > 0,
        "no object seen in both clusters:\n{}",
        fleet.stdout.join("\n")
    );
    // One context's records, as a file recorded from it alone gives them (naming none).
    let one = replay_of(
        sim.dir(),
        &url,
        &["-o", "json", "--context", "kwatch-sim-2"],
    )
    .exits(0);
    let rows = pg.count(
        &url,
        "SELECT count(*) FROM kwatch_records WHERE context = 'kwatch-sim-2'",
    );
    assert!(rows > 0);
    assert_eq!(one.stdout.len() as u64, rows, "{}", one.stdout.join("\n"));
    assert!(one.json().iter().all(|r| r.get("context").is_none()));
}

#[test]
fn kill_9_loses_at_most_the_last_batch_and_the_next_run_says_what_it_resumed_from() {
    let pg = Postgres::shared();
    let url = pg.database();
    let sim = SimProcess::start(&["--scenario", "steady", "--churn", "40", "--objects", "20"]);
    let file = sim.dir().join("rec.jsonl");
    let kw = sim.start_kwatch([
        "pods",
        "-A",
        "-o",
        "name",
        "--record",
        file.to_str().unwrap(),
        "--record",
        &url,
    ]);
    eventually(LIMIT, "records in PostgreSQL", || match pg.records(&url) {
        Ok(n) if n >= 150 => Ok(n),
        other => Err(other),
    });
    kw.kill9(LIMIT);
    let recorded = lines(&file);
    let rows = pg.count(&url, "SELECT count(*) FROM kwatch_records") as usize;
    let last = pg.count(&url, "SELECT max(seq) FROM kwatch_records") as usize;
    assert_eq!(
        last, rows,
        "the records written are the first ones, none missing"
    );
    assert!(
        rows + BATCH >= recorded.len(),
        "{} records in the file, {rows} in the database",
        recorded.len()
    );
    let back = replay_of(sim.dir(), &url, &["-o", "json", "--show-managed-fields"]);
    assert_eq!(back.stdout[..], recorded[..rows.min(recorded.len())]);
    let shown = pg.shown(&url);
    let next = sim
        .kwatch([
            "pods",
            "-A",
            "-o",
            "name",
            "--until-synced",
            "--record",
            &url,
        ])
        .exits(0);
    masked(&next);
    let said = next
        .stderr
        .lines()
        .find(|l| l.starts_with("~ resuming: the run of "))
        .unwrap_or_else(|| panic!("no resuming line:\n{}", next.stderr));
    assert!(
        said.contains(&format!("{shown} has its records up to #{rows} ")),
        "{said}"
    );
    assert!(said.contains("nothing more to write"), "{said}");
}

#[test]
fn a_run_that_ends_while_the_database_is_down_leaves_its_records_to_the_next() {
    let pg = Postgres::new();
    let url = pg.database();
    let shown = pg.shown(&url);
    let sim = SimProcess::start(&["--objects", "5"]);
    // Migrated and known to be up, then down for the whole of the first run.
    sim.kwatch([
        "pods",
        "-A",
        "-o",
        "name",
        "--until-synced",
        "--record",
        &url,
    ])
    .exits(0);
    let first = pg.count(&url, "SELECT count(*) FROM kwatch_records");
    pg.stop();
    let down = sim
        .kwatch([
            "pods",
            "-A",
            "-o",
            "name",
            "--until-synced",
            "--record",
            &url,
        ])
        .exits(0);
    masked(&down);
    assert_eq!(down.stdout.len(), 5, "the watch went on: {}", down.stderr);
    assert!(
        down.stderr
            .contains(&format!("~ recording: cannot write to {shown}")),
        "{}",
        down.stderr
    );
    let left = down
        .stderr
        .lines()
        .find(|l| l.contains("records not written to"))
        .unwrap_or_else(|| panic!("{}", down.stderr));
    let n: u64 = left
        .trim_start_matches("~ recording: ")
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{left}"));
    pg.start();
    let next = sim
        .kwatch([
            "pods",
            "-A",
            "-o",
            "name",
            "--until-synced",
            "--record",
            &url,
        ])
        .exits(0);
    assert!(
        next.stderr.contains(&format!(
            "; {n} records of it not yet written: writing them first"
        )),
        "{}",
        next.stderr
    );
    assert_eq!(
        pg.count(&url, "SELECT count(DISTINCT writer) FROM kwatch_records"),
        3
    );
    // The run that could not write has all its records there now, each once.
    let per_run = pg.query(&url, "SELECT count(*) FROM kwatch_records GROUP BY writer");
    assert!(
        per_run.lines().any(|c| c == n.to_string()),
        "{per_run} (the first run: {first})"
    );
}

#[test]
fn replay_at_answers_from_the_index_in_postgres_and_sqlite() {
    let pg = Postgres::shared();
    let url = pg.database();
    let sim = SimProcess::start(&["--scenario", "steady", "--churn", "40", "--objects", "10"]);
    let sqlite = format!("sqlite:{}", sim.dir().join("rec.db").display());
    for target in [&url, &sqlite] {
        sim.kwatch([
            "pods",
            "-A",
            "-o",
            "name",
            "--max-events",
            "60",
            "--record",
            target,
        ])
        .exits(0);
    }
    // A long history, so that the planner has a reason to choose: 20,000 more rows of
    // 1,000 objects, an hour before the recording.
    pg.query(
        &url,
        "INSERT INTO kwatch_records (writer, seq, time, context, resource, namespace, name, key, \
         type, resource_version, record, object) \
         SELECT 'history', g, now() - interval '1 hour' + g * interval '1 ms', 'old', 'pods', \
         'h', 'p' || (g % 1000), 'h/p' || (g % 1000), 'Updated', g::text, '{}', NULL \
         FROM generate_series(1, 20000) g; \
         INSERT INTO kwatch_objects SELECT DISTINCT 'old', 'pods', 'h/p' || (g % 1000) \
         FROM generate_series(1, 20000) g; ANALYZE",
    );
    let at = "2100-01-01T00:00:00Z";
    for (target, index) in [
        (url.as_str(), "kwatch_records_object"),
        (sqlite.as_str(), "INDEX kwatch_records_object"),
    ] {
        let out = replay_of(
            sim.dir(),
            target,
            &[
                "--at",
                at,
                "--explain",
                "-o",
                "name",
                "--context",
                "kwatch-sim",
            ],
        );
        let out = out.exits(0);
        assert!(
            out.stderr.contains(index),
            "{target}: the plan reads no index:\n{}",
            out.stderr
        );
        assert!(
            !out.stderr.contains("Seq Scan on kwatch_records"),
            "{}",
            out.stderr
        );
    }
}

#[test]
fn bad_urls_and_unreachable_databases_say_so_in_one_line() {
    let pg = Postgres::shared();
    let url = pg.database();
    let sim = SimProcess::start(&["--objects", "2"]);
    let bad = sim
        .kwatch(["pods", "--until-synced", "--record", "mysql://kw:pw@db/x"])
        .exits(2);
    assert_eq!(bad.stderr.lines().count(), 1, "{}", bad.stderr);
    assert!(
        bad.stderr
            .contains("mysql://kw:***@db/x: kwatch records into PostgreSQL"),
        "{}",
        bad.stderr
    );
    let bad = sim
        .kwatch([
            "pods",
            "--until-synced",
            "--record",
            "postgres://kw@db:port/x",
        ])
        .exits(2);
    assert!(bad.stderr.contains("is not a number"), "{}", bad.stderr);
    // A wrong password never fixes itself: the run ends at once, the password unsaid.
    let wrong = url.replace(PASSWORD, "not-the-password");
    let denied = sim
        .kwatch(["pods", "--until-synced", "--record", &wrong])
        .exits(1);
    assert_eq!(denied.stderr.lines().count(), 1, "{}", denied.stderr);
    assert!(
        denied.stderr.contains("password authentication failed"),
        "{}",
        denied.stderr
    );
    assert!(
        !denied.stderr.contains("not-the-password"),
        "{}",
        denied.stderr
    );
    // Nobody listens: the watch goes on, its records left for the next run.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let nobody = format!("postgres://kwatch:{PASSWORD}@127.0.0.1:{port}/x");
    let down = sim
        .kwatch([
            "pods",
            "-n",
            "default",
            "-o",
            "name",
            "--until-synced",
            "--record",
            &nobody,
        ])
        .exits(0);
    masked(&down);
    assert!(!down.stdout.is_empty());
    assert!(
        down.stderr
            .contains("~ recording: cannot write to postgres://kwatch@127.0.0.1:"),
        "{}",
        down.stderr
    );
    // Replay: a database without a recording, an SQLite file that is not there.
    let empty = replay_of(sim.dir(), &url, &["-o", "name"]).exits(1);
    assert!(
        empty.stderr.contains("holds no kwatch recording"),
        "{}",
        empty.stderr
    );
    masked(&empty);
    let missing: PathBuf = sim.dir().join("none.db");
    let none = replay_of(sim.dir(), &format!("sqlite:{}", missing.display()), &[]).exits(1);
    assert_eq!(none.stderr.lines().count(), 1, "{}", none.stderr);
    assert!(
        none.stderr.contains("cannot read the recording in sqlite:"),
        "{}",
        none.stderr
    );
}
