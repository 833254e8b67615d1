//! The recording database, PostgreSQL or SQLite through sqlx: connecting (a PostgreSQL
//! target read as libpq reads it: its URL or words, then the `PG*` variables and
//! `~/.pgpass`), the schema's versioned migrations (`migrations/`, embedded), a batch of
//! rows written once whatever the retries (`ON CONFLICT DO NOTHING` on the record's
//! identity), and the queries `kwatch replay` pushes its filters into.

use std::collections::BTreeSet;
use std::str::FromStr as _;
use std::time::Duration;

use serde::Deserialize;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};

use super::target::{Postgres, Target};

/// The schema's migrations, in order: (version, name, PostgreSQL's SQL, SQLite's SQL).
/// A new version is a pair of files beside these and a line here; a database a newer
/// kwatch migrated is refused, not written into.
const MIGRATIONS: &[(i32, &str, &str, &str)] = &[(
    1,
    "init",
    include_str!("../../../migrations/postgres/0001_init.sql"),
    include_str!("../../../migrations/sqlite/0001_init.sql"),
)];

/// The advisory lock the PostgreSQL writers take to migrate one at a time ("kwatch").
const MIGRATION_LOCK: i64 = 0x6b77_6174_6368;

/// How long a connection may take to be made (or a pooled one handed out) before the
/// attempt counts as a failure: the writer then buffers and tries again.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// A statement that takes longer fails (PostgreSQL's `statement_timeout`): a hung server
/// is then an unreachable one, whose records go to the backlog.
const STATEMENT_TIMEOUT: &str = "60s";

/// An open database: a pool of at most two connections (the writer needs one), made on
/// first use.
#[derive(Clone)]
pub enum Db {
    Pg(PgPool),
    Sqlite(SqlitePool),
}

/// What a database is called in lines for people: no password, ever.
pub fn describe_pg(o: &PgConnectOptions) -> String {
    let db = o.get_database().unwrap_or(o.get_username());
    match o.get_socket() {
        Some(dir) => format!(
            "postgres://{}@/{db}?host={}",
            o.get_username(),
            dir.display()
        ),
        None if o.get_host().starts_with('/') => format!(
            "postgres://{}@/{db}?host={}",
            o.get_username(),
            o.get_host()
        ),
        None => {
            let host = o.get_host();
            let host = match host.contains(':') {
                true => format!("[{host}]"),
                false => host.to_owned(),
            };
            format!(
                "postgres://{}@{host}:{}/{db}",
                o.get_username(),
                o.get_port()
            )
        }
    }
}

/// PostgreSQL's connection options for `p`, as psql would read them: what `p` leaves
/// out from the `PG*` variables, the password from `~/.pgpass` (or `PGPASSFILE`) when
/// none is given. `Err`: what is wrong with them, the password masked.
pub fn pg_options(p: &Postgres) -> Result<PgConnectOptions, String> {
    let shown = Target::Postgres(p.clone()).to_string();
    let url = match p {
        Postgres::Url(u) => u.clone(),
        // libpq's words as the URL's parameters, which sqlx reads by the same names.
        Postgres::Words(words) => {
            let known = [
                "host",
                "hostaddr",
                "port",
                "user",
                "password",
                "dbname",
                "sslmode",
                "sslrootcert",
                "sslcert",
                "sslkey",
                "application_name",
                "options",
            ];
            if let Some((k, _)) = words.iter().find(|(k, _)| !known.contains(&k.as_str())) {
                return Err(format!(
                    "{shown}: {k} is not a libpq keyword kwatch reads ({})",
                    known.join(", ")
                ));
            }
            let query: Vec<String> = words
                .iter()
                .map(|(k, v)| format!("{k}={}", percent(v)))
                .collect();
            format!("postgres:///?{}", query.join("&"))
        }
    };
    let o = PgConnectOptions::from_str(&url).map_err(|e| {
        // The driver's words may quote what it read: never let a password through.
        let why = e.to_string();
        let secret = secrets(p)
            .into_iter()
            .any(|pw| !pw.is_empty() && why.contains(&pw));
        match secret {
            true => format!("{shown}: not a PostgreSQL connection string"),
            false => format!("{shown}: not a PostgreSQL connection string: {why}"),
        }
    })?;
    Ok(match o.get_application_name() {
        Some(_) => o,
        None => o.application_name("kwatch"),
    })
}

/// The passwords `p` holds, in every form a parser's message might quote them.
fn secrets(p: &Postgres) -> Vec<String> {
    match p {
        Postgres::Url(u) => {
            let userinfo = u
                .split_once("://")
                .and_then(|(_, r)| r.split(['/', '?']).next())
                .and_then(|a| a.rsplit_once('@'))
                .and_then(|(user, _)| user.split_once(':'))
                .map(|(_, pw)| pw.to_owned());
            let param = u.split_once('?').and_then(|(_, q)| {
                q.split('&')
                    .find_map(|kv| kv.strip_prefix("password=").map(str::to_owned))
            });
            userinfo.into_iter().chain(param).collect()
        }
        Postgres::Words(w) => w
            .iter()
            .filter(|(k, _)| k == "password")
            .flat_map(|(_, v)| [v.clone(), percent(v)])
            .collect(),
    }
}

fn percent(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

impl Db {
    /// The database `target` names (a file is none), connected on first use. `create`:
    /// an SQLite file that does not exist is made (the recorder), else refused (replay).
    /// Must be called within a tokio runtime (the pool's). `Err`: bad options, in words.
    pub fn open(target: &Target, create: bool) -> Result<(Db, String), String> {
        match target {
            Target::File(p) => Err(format!("{} is a file, not a database", p.display())),
            Target::Sqlite(path) => {
                let o = SqliteConnectOptions::new()
                    .filename(path)
                    .create_if_missing(create)
                    // Readers (replay, sqlite3) while kwatch writes; other writers wait.
                    .journal_mode(SqliteJournalMode::Wal)
                    .synchronous(SqliteSynchronous::Normal)
                    .busy_timeout(Duration::from_secs(30));
                let pool = SqlitePoolOptions::new()
                    .max_connections(1)
                    .acquire_timeout(CONNECT_TIMEOUT)
                    .connect_lazy_with(o);
                Ok((Db::Sqlite(pool), target.to_string()))
            }
            Target::Postgres(p) => {
                let o = pg_options(p)?.options([("statement_timeout", STATEMENT_TIMEOUT)]);
                let name = describe_pg(&o);
                let pool = PgPoolOptions::new()
                    .max_connections(2)
                    .min_connections(0)
                    .acquire_timeout(CONNECT_TIMEOUT)
                    .connect_lazy_with(o);
                Ok((Db::Pg(pool), name))
            }
        }
    }

    /// Applies the migrations this database lacks, one writer at a time. `Err` also when
    /// the database holds a newer schema than this kwatch knows.
    pub async fn migrate(&self) -> Result<(), sqlx::Error> {
        match self {
            Db::Pg(pool) => {
                let mut tx = pool.begin().await?;
                sqlx::query("SELECT pg_advisory_xact_lock($1)")
                    .bind(MIGRATION_LOCK)
                    .execute(&mut *tx)
                    .await?;
                sqlx::raw_sql(
                    "CREATE TABLE IF NOT EXISTS kwatch_schema (version integer PRIMARY KEY, \
                     name text NOT NULL, applied timestamptz NOT NULL DEFAULT now())",
                )
                .execute(&mut *tx)
                .await?;
                let applied: Vec<i32> = sqlx::query_scalar("SELECT version FROM kwatch_schema")
                    .fetch_all(&mut *tx)
                    .await?;
                check_newer(&applied)?;
                for (version, name, pg, _) in MIGRATIONS {
                    if applied.contains(version) {
                        continue;
                    }
                    sqlx::raw_sql(pg).execute(&mut *tx).await?;
                    sqlx::query("INSERT INTO kwatch_schema (version, name) VALUES ($1, $2)")
                        .bind(version)
                        .bind(name)
                        .execute(&mut *tx)
                        .await?;
                }
                tx.commit().await
            }
            Db::Sqlite(pool) => {
                let mut conn = pool.acquire().await?;
                sqlx::raw_sql("BEGIN IMMEDIATE").execute(&mut *conn).await?;
                let applied = async {
                    sqlx::raw_sql(
                        "CREATE TABLE IF NOT EXISTS kwatch_schema (version integer PRIMARY KEY, \
                         name text NOT NULL, applied text NOT NULL DEFAULT CURRENT_TIMESTAMP)",
                    )
                    .execute(&mut *conn)
                    .await?;
                    let applied: Vec<i32> = sqlx::query_scalar("SELECT version FROM kwatch_schema")
                        .fetch_all(&mut *conn)
                        .await?;
                    check_newer(&applied)?;
                    for (version, name, _, lite) in MIGRATIONS {
                        if applied.contains(version) {
                            continue;
                        }
                        sqlx::raw_sql(lite).execute(&mut *conn).await?;
                        sqlx::query("INSERT INTO kwatch_schema (version, name) VALUES (?, ?)")
                            .bind(version)
                            .bind(name)
                            .execute(&mut *conn)
                            .await?;
                    }
                    Ok::<_, sqlx::Error>(())
                }
                .await;
                let end = if applied.is_ok() {
                    "COMMIT"
                } else {
                    "ROLLBACK"
                };
                sqlx::raw_sql(end).execute(&mut *conn).await?;
                applied
            }
        }
    }

    /// Says who writes (`writer`'s run) into `kwatch_runs`, once.
    pub async fn add_run(&self, run: &RunRow) -> Result<(), sqlx::Error> {
        match self {
            Db::Pg(pool) => {
                sqlx::query(
                    "INSERT INTO kwatch_runs (writer, started, host, contexts, kwatch) \
                     VALUES ($1, $2::text::timestamptz, $3, $4, $5) ON CONFLICT DO NOTHING",
                )
                .bind(&run.writer)
                .bind(&run.started)
                .bind(&run.host)
                .bind(&run.contexts)
                .bind(env!("CARGO_PKG_VERSION"))
                .execute(pool)
                .await?;
            }
            Db::Sqlite(pool) => {
                sqlx::query(
                    "INSERT OR IGNORE INTO kwatch_runs (writer, started, host, contexts, kwatch) \
                     VALUES (?, ?, ?, ?, ?)",
                )
                .bind(&run.writer)
                .bind(&run.started)
                .bind(&run.host)
                .bind(&run.contexts)
                .bind(env!("CARGO_PKG_VERSION"))
                .execute(pool)
                .await?;
            }
        }
        Ok(())
    }

    /// Writes `rows` in one transaction, each at most once ever: a row whose (writer,
    /// seq) is already there is skipped. Returns how many were new.
    pub async fn insert(&self, rows: &[Row]) -> Result<u64, sqlx::Error> {
        if rows.is_empty() {
            return Ok(0);
        }
        let objects: BTreeSet<(&str, &str, &str)> = rows
            .iter()
            .filter_map(|r| {
                Some((
                    r.context.as_str(),
                    r.resource.as_deref()?,
                    r.key.as_deref()?,
                ))
            })
            .collect();
        match self {
            Db::Pg(pool) => insert_pg(pool, rows, &objects).await,
            Db::Sqlite(pool) => insert_sqlite(pool, rows, &objects).await,
        }
    }

    /// The last record `writer` has in the database: its number and time (`None`: none).
    pub async fn last_of(&self, writer: &str) -> Result<Option<(i64, String)>, sqlx::Error> {
        match self {
            Db::Pg(pool) => {
                sqlx::query_as(
                    "SELECT seq, to_char(time AT TIME ZONE 'UTC', \
                     'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"') FROM kwatch_records \
                     WHERE writer = $1 ORDER BY seq DESC LIMIT 1",
                )
                .bind(writer)
                .fetch_optional(pool)
                .await
            }
            Db::Sqlite(pool) => {
                sqlx::query_as(
                    "SELECT seq, time FROM kwatch_records WHERE writer = ? \
                     ORDER BY seq DESC LIMIT 1",
                )
                .bind(writer)
                .fetch_optional(pool)
                .await
            }
        }
    }

    /// The records `sel` selects, each writer's in its order (writer, then seq).
    pub async fn records(&self, sel: &Select<'_>) -> Result<Vec<ReadRow>, sqlx::Error> {
        let mut q = Sql::new(self);
        q.sql.push_str(
            "SELECT writer, seq, context, record, object FROM kwatch_records r WHERE true",
        );
        q.filters(sel, "r", true);
        if let Some(t) = &sel.since {
            let p = q.bind_time(t);
            q.sql.push_str(&format!(" AND r.time >= {p}"));
        }
        if let Some(t) = &sel.until {
            let p = q.bind_time(t);
            q.sql.push_str(&format!(" AND r.time <= {p}"));
        }
        q.sql.push_str(" ORDER BY writer, seq");
        q.fetch(self).await
    }

    /// Every object's last record at `at` (before it, when not `inclusive`), unless that
    /// record is its deletion: the objects the informers held then. One index descent of
    /// `kwatch_records_object` per object of `kwatch_objects`.
    pub async fn state_at(
        &self,
        sel: &Select<'_>,
        at: &str,
        inclusive: bool,
    ) -> Result<Vec<ReadRow>, sqlx::Error> {
        let (q, _) = self.state_at_sql(sel, at, inclusive);
        q.fetch(self).await
    }

    /// [`Db::state_at`]'s query, and its text for `EXPLAIN`.
    fn state_at_sql(&self, sel: &Select<'_>, at: &str, inclusive: bool) -> (Sql, String) {
        let mut q = Sql::new(self);
        let p = q.bind_time(at);
        let cmp = if inclusive { "<=" } else { "<" };
        match self {
            Db::Pg(_) => q.sql.push_str(&format!(
                "SELECT r.writer, r.seq, r.context, r.record, r.object FROM kwatch_objects o \
                 CROSS JOIN LATERAL (SELECT x.writer, x.seq, x.context, x.record, \
                 x.object::text AS object, x.type FROM kwatch_records x \
                 WHERE x.context = o.context AND x.resource = o.resource AND x.key = o.key \
                 AND x.time {cmp} {p} \
                 ORDER BY x.time DESC, x.writer DESC, x.seq DESC LIMIT 1) r \
                 WHERE r.type <> 'Deleted'"
            )),
            Db::Sqlite(_) => q.sql.push_str(&format!(
                "SELECT r.writer, r.seq, r.context, r.record, r.object FROM kwatch_objects o \
                 JOIN kwatch_records r ON r.rowid = (SELECT x.rowid FROM kwatch_records x \
                 WHERE x.context = o.context AND x.resource = o.resource AND x.key = o.key \
                 AND x.time {cmp} {p} \
                 ORDER BY x.time DESC, x.writer DESC, x.seq DESC LIMIT 1) \
                 WHERE r.type <> 'Deleted'"
            )),
        }
        q.filters(sel, "o", false);
        let text = q.sql.clone();
        (q, text)
    }

    /// The plan of [`Db::state_at`] (PostgreSQL's `EXPLAIN`, SQLite's `EXPLAIN QUERY
    /// PLAN`), for the benchmark and the tests: it must read the index, not every row.
    pub async fn explain_state_at(
        &self,
        sel: &Select<'_>,
        at: &str,
    ) -> Result<String, sqlx::Error> {
        let (mut q, text) = self.state_at_sql(sel, at, true);
        q.sql = match self {
            Db::Pg(_) => format!("EXPLAIN {text}"),
            Db::Sqlite(_) => format!("EXPLAIN QUERY PLAN {text}"),
        };
        let lines: Vec<String> = match self {
            Db::Pg(pool) => {
                let mut query = sqlx::query_scalar::<_, String>(&q.sql);
                for b in &q.binds {
                    query = query.bind(b);
                }
                query.fetch_all(pool).await?
            }
            Db::Sqlite(pool) => {
                let mut query = sqlx::query_as::<_, (i64, i64, i64, String)>(&q.sql);
                for b in &q.binds {
                    query = query.bind(b);
                }
                let rows = query.fetch_all(pool).await?;
                rows.into_iter().map(|r| r.3).collect()
            }
        };
        Ok(lines.join("\n"))
    }
}

/// The schema versions applied are all known to this kwatch.
fn check_newer(applied: &[i32]) -> Result<(), sqlx::Error> {
    let known = MIGRATIONS.iter().map(|m| m.0).max().unwrap_or(0);
    match applied.iter().max() {
        Some(&v) if v > known => Err(sqlx::Error::Protocol(format!(
            "the database holds kwatch's recording schema version {v}, newer than this \
             kwatch knows ({known}): record with a newer kwatch"
        ))),
        _ => Ok(()),
    }
}

/// A query being built: its text with the engine's placeholders, and its values.
struct Sql {
    pg: bool,
    sql: String,
    binds: Vec<String>,
}

impl Sql {
    fn new(db: &Db) -> Sql {
        Sql {
            pg: matches!(db, Db::Pg(_)),
            sql: String::new(),
            binds: Vec::new(),
        }
    }

    /// The placeholder of a new value.
    fn bind(&mut self, v: &str) -> String {
        self.binds.push(v.to_owned());
        match self.pg {
            true => format!("${}", self.binds.len()),
            false => format!("?{}", self.binds.len()),
        }
    }

    /// A time's placeholder, compared as a time (PostgreSQL) or as the text every record's
    /// time is written in (SQLite).
    fn bind_time(&mut self, t: &str) -> String {
        let p = self.bind(t);
        match self.pg {
            true => format!("{p}::text::timestamptz"),
            false => p,
        }
    }

    /// `sel`'s filters on the table aliased `t` (`records`: kwatch_records, which has the
    /// name and namespace columns; else kwatch_objects, which has the key). Looser than
    /// replay's own (which it applies again), never stricter: a record about no object
    /// stays with a name or namespace.
    fn filters(&mut self, sel: &Select<'_>, t: &str, records: bool) {
        if !sel.contexts.is_empty() {
            let ps: Vec<String> = sel.contexts.iter().map(|c| self.bind(c)).collect();
            self.sql
                .push_str(&format!(" AND {t}.context IN ({})", ps.join(", ")));
        }
        if let Some(r) = sel.resource {
            let p = self.bind(r);
            let like = self.bind(&format!("{r}.%"));
            self.sql.push_str(&format!(
                " AND ({t}.resource IS NULL OR {t}.resource = {p} OR {t}.resource LIKE {like})"
            ));
        }
        match (records, sel.name) {
            (true, Some(n)) => {
                let p = self.bind(n);
                self.sql
                    .push_str(&format!(" AND ({t}.name IS NULL OR {t}.name = {p})"));
            }
            (false, Some(n)) => {
                let p = self.bind(n);
                let like = self.bind(&format!("%/{n}"));
                self.sql
                    .push_str(&format!(" AND ({t}.key = {p} OR {t}.key LIKE {like})"));
            }
            _ => {}
        }
        match (records, sel.namespace) {
            (true, Some(ns)) => {
                let p = self.bind(ns);
                self.sql.push_str(&format!(
                    " AND ({t}.namespace IS NULL OR {t}.namespace = {p})"
                ));
            }
            (false, Some(ns)) => {
                let like = self.bind(&format!("{ns}/%"));
                self.sql.push_str(&format!(
                    " AND ({t}.key LIKE {like} OR {t}.key NOT LIKE '%/%')"
                ));
            }
            _ => {}
        }
    }

    async fn fetch(self, db: &Db) -> Result<Vec<ReadRow>, sqlx::Error> {
        type Tuple = (String, i64, String, String, Option<String>);
        let rows: Vec<Tuple> = match db {
            Db::Pg(pool) => {
                // json → text: the object's exact bytes.
                let sql = self.sql.replacen(
                    "SELECT writer, seq, context, record, object FROM",
                    "SELECT writer, seq, context, record, object::text FROM",
                    1,
                );
                let mut query = sqlx::query_as::<_, Tuple>(&sql);
                for b in &self.binds {
                    query = query.bind(b);
                }
                query.fetch_all(pool).await?
            }
            Db::Sqlite(pool) => {
                let mut query = sqlx::query_as::<_, Tuple>(&self.sql);
                for b in &self.binds {
                    query = query.bind(b);
                }
                query.fetch_all(pool).await?
            }
        };
        Ok(rows
            .into_iter()
            .map(|(writer, seq, context, record, object)| ReadRow {
                writer,
                seq,
                context,
                record,
                object,
            })
            .collect())
    }
}

/// What `kwatch replay` asks of the database (times as records write them, UTC with
/// milliseconds).
#[derive(Debug, Default)]
pub struct Select<'a> {
    pub contexts: &'a [String],
    pub since: Option<String>,
    pub until: Option<String>,
    pub resource: Option<&'a str>,
    pub name: Option<&'a str>,
    pub namespace: Option<&'a str>,
}

/// A record read back.
#[derive(Debug)]
pub struct ReadRow {
    pub writer: String,
    pub seq: i64,
    pub context: String,
    record: String,
    object: Option<String>,
}

impl ReadRow {
    /// The record's JSON line, as `--record FILE` wrote it.
    pub fn line(&self) -> String {
        join(&self.record, self.object.as_deref())
    }
}

/// The record of `kwatch_runs`.
#[derive(Debug, Clone, serde::Serialize, Deserialize)]
pub struct RunRow {
    pub writer: String,
    pub started: String,
    pub host: String,
    pub contexts: String,
}

/// One record as a row.
#[derive(Debug, Clone)]
pub struct Row {
    pub writer: String,
    pub seq: i64,
    pub time: String,
    pub context: String,
    pub resource: Option<String>,
    pub namespace: Option<String>,
    pub name: Option<String>,
    pub key: Option<String>,
    pub kind: String,
    pub resource_version: Option<String>,
    pub record: String,
    pub object: Option<String>,
}

/// The fields of a record's line that are columns of its row.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Fields<'a> {
    #[serde(rename = "type", borrow)]
    kind: std::borrow::Cow<'a, str>,
    #[serde(default, borrow)]
    context: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, borrow)]
    resource: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, borrow)]
    key: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, borrow)]
    namespace: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, borrow)]
    name: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, borrow)]
    resource_version: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    time: std::borrow::Cow<'a, str>,
}

impl Row {
    /// The row of record number `seq` of `writer`, whose JSON line is `line`; `context`
    /// is the run's own, for a record that names none (a run of one context). `Err`: the
    /// line is no record (not reached: the recorder wrote it).
    pub fn of(writer: &str, context: &str, seq: i64, line: &str) -> Result<Row, String> {
        let f: Fields<'_> =
            serde_json::from_str(line).map_err(|e| format!("record #{seq}: {e}"))?;
        let (record, object) = split(line);
        // A record about an object has a key; a `Fleet` record's `key` is one too.
        let key = f.key.map(|k| k.into_owned());
        let name = key.as_ref().and(f.name.map(|n| n.into_owned()));
        Ok(Row {
            writer: writer.to_owned(),
            seq,
            time: f.time.into_owned(),
            context: f
                .context
                .map_or_else(|| context.to_owned(), |c| c.into_owned()),
            resource: f.resource.map(|r| r.into_owned()),
            namespace: key.as_ref().and(f.namespace.map(|n| n.into_owned())),
            name,
            key,
            kind: f.kind.into_owned(),
            resource_version: f.resource_version.map(|r| r.into_owned()),
            record,
            object,
        })
    }
}

/// The member every record that has an object ends with (`output::record`'s
/// `Line::write_json`).
const OBJECT_MEMBER: &str = ",\"object\":";

/// A line cut into its record (the `object` member taken out) and its object: the
/// object is stored as a column of its own, queryable, and joined back by [`join`].
/// A line whose object is not its last member is kept whole.
fn split(line: &str) -> (String, Option<String>) {
    let object = kwatch_core::output::record::object_of(line).ok().flatten();
    if let Some(o) = object {
        let start = o.get().as_ptr() as usize - line.as_ptr() as usize;
        let end = start + o.get().len();
        let head = &line[..start];
        if line[end..].trim_end() == "}" && head.ends_with(OBJECT_MEMBER) {
            let record = format!("{}}}", &head[..head.len() - OBJECT_MEMBER.len()]);
            return (record, Some(o.get().to_owned()));
        }
    }
    (line.to_owned(), None)
}

/// [`split`] undone: a row's record and object as the line they were.
pub fn join_line(record: &str, object: Option<&str>) -> String {
    join(record, object)
}

/// [`split`] undone.
fn join(record: &str, object: Option<&str>) -> String {
    match object {
        Some(o) => {
            let fields = record.strip_suffix('}').unwrap_or(record);
            format!("{fields}{OBJECT_MEMBER}{o}}}")
        }
        None => record.to_owned(),
    }
}

/// Objects by (context, resource, key), as `kwatch_objects` holds them.
type Objects<'a> = BTreeSet<(&'a str, &'a str, &'a str)>;

/// [`Db::insert`] into PostgreSQL: each column an array, one statement for the rows and
/// one for their objects.
async fn insert_pg<'a>(
    pool: &PgPool,
    rows: &'a [Row],
    objects: &Objects<'a>,
) -> Result<u64, sqlx::Error> {
    let mut tx = pool.begin().await?;
    let col = |f: fn(&Row) -> Option<&str>| -> Vec<Option<&str>> { rows.iter().map(f).collect() };
    let added = sqlx::query(
        "INSERT INTO kwatch_records (writer, seq, time, context, resource, namespace, \
         name, key, type, resource_version, record, object) \
         SELECT * FROM UNNEST($1::text[], $2::int8[], $3::text[]::timestamptz[], \
         $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], \
         $10::text[], $11::text[], $12::text[]::json[]) \
         ON CONFLICT (writer, seq) DO NOTHING",
    )
    .bind(col(|r| Some(r.writer.as_str())))
    .bind(rows.iter().map(|r| r.seq).collect::<Vec<i64>>())
    .bind(col(|r| Some(r.time.as_str())))
    .bind(col(|r| Some(r.context.as_str())))
    .bind(col(|r| r.resource.as_deref()))
    .bind(col(|r| r.namespace.as_deref()))
    .bind(col(|r| r.name.as_deref()))
    .bind(col(|r| r.key.as_deref()))
    .bind(col(|r| Some(r.kind.as_str())))
    .bind(col(|r| r.resource_version.as_deref()))
    .bind(col(|r| Some(r.record.as_str())))
    .bind(col(|r| r.object.as_deref()))
    .execute(&mut *tx)
    .await?
    .rows_affected();
    if !objects.is_empty() {
        let column = |f: fn(&(&'a str, &'a str, &'a str)) -> &'a str| -> Vec<&'a str> {
            objects.iter().map(f).collect()
        };
        sqlx::query(
            "INSERT INTO kwatch_objects (context, resource, key) \
             SELECT * FROM UNNEST($1::text[], $2::text[], $3::text[]) \
             ON CONFLICT DO NOTHING",
        )
        .bind(column(|o| o.0))
        .bind(column(|o| o.1))
        .bind(column(|o| o.2))
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await?;
    Ok(added)
}

/// [`Db::insert`] into SQLite: a statement a row, in one transaction.
async fn insert_sqlite(
    pool: &SqlitePool,
    rows: &[Row],
    objects: &Objects<'_>,
) -> Result<u64, sqlx::Error> {
    let mut tx = pool.begin().await?;
    let mut added = 0;
    for r in rows {
        added += sqlx::query(
            "INSERT OR IGNORE INTO kwatch_records (writer, seq, time, context, \
             resource, namespace, name, key, type, resource_version, record, object) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(&r.writer)
        .bind(r.seq)
        .bind(&r.time)
        .bind(&r.context)
        .bind(&r.resource)
        .bind(&r.namespace)
        .bind(&r.name)
        .bind(&r.key)
        .bind(&r.kind)
        .bind(&r.resource_version)
        .bind(&r.record)
        .bind(&r.object)
        .execute(&mut *tx)
        .await?
        .rows_affected();
    }
    for (c, r, k) in objects {
        sqlx::query(
            "INSERT OR IGNORE INTO kwatch_objects (context, resource, key) VALUES (?, ?, ?)",
        )
        .bind(c)
        .bind(r)
        .bind(k)
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await?;
    Ok(added)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_split_into_record_and_object_joins_back_byte_for_byte() {
        let lines = [
            r#"{"type":"Added","resource":"pods","key":"d/a","namespace":"d","name":"a","kind":"Pod","apiVersion":"v1","resourceVersion":"5","time":"2026-11-21T10:05:30.250Z","initialList":true,"object":{"kind":"Pod", "metadata":{"name":"a","x":"}"}}}"#,
            r#"{"type":"List","resource":"pods","time":"2026-11-21T10:05:30.250Z","resourceVersion":"0","limit":500,"reason":"initial","streaming":true}"#,
            r#"{"type":"Deleted","resource":"pods","key":"d/gone","namespace":"d","name":"gone","kind":"Pod","apiVersion":"v1","resourceVersion":null,"time":"2026-11-21T10:05:37.000Z","initialList":false,"finalStateUnknown":true}"#,
        ];
        for line in lines {
            let (record, object) = split(line);
            assert_eq!(join(&record, object.as_deref()), line);
            let row = Row::of("w", "ctx", 1, line).unwrap();
            assert_eq!(row.context, "ctx");
            assert!(!row.record.contains("\"object\""), "{}", row.record);
        }
        let row = Row::of("w", "ctx", 1, lines[0]).unwrap();
        assert_eq!(
            row.object.as_deref(),
            Some(r#"{"kind":"Pod", "metadata":{"name":"a","x":"}"}}"#)
        );
        assert_eq!(
            (
                row.key.as_deref(),
                row.name.as_deref(),
                row.namespace.as_deref()
            ),
            (Some("d/a"), Some("a"), Some("d"))
        );
        let row = Row::of("w", "ctx", 2, lines[1]).unwrap();
        assert_eq!(
            (row.kind.as_str(), row.key, row.resource_version.as_deref()),
            ("List", None, Some("0"))
        );
    }
}
