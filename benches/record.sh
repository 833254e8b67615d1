#!/usr/bin/env bash
# What recording costs and what a database gives back: `--record` into a file, SQLite and
# PostgreSQL (a private cluster of Debian's server, started here on a free loopback port
# with its default, durable settings: fsync and synchronous_commit on), beside no
# recording.
#
#   A  a sync of SYNC_PODS pods (default 10,000, the realistic-sized default pod), `pods -A
#      -o name --until-synced --stats`: the run's wall time (kwatch exits once every record
#      is written: the database's backlog included), the time to synced as the informer saw
#      it (--stats' `synced after`), the records written and records per second over the
#      wall time.
#   B  churn: CHURN_EVENTS MODIFIED events (POST /_sim/flood, as fast as the watch takes
#      them) on CHURN_PODS preloaded pods, `--max-events` ending the run once the last is
#      printed: the same figures.
#   C  `replay --at` on a recording of about AT_ROWS rows (default 1,000,000): a sync of
#      10,000 small pods recorded into PostgreSQL and SQLite, copied AT_COPIES times a
#      minute apart (times inside the records moved too), and the same lines as a file;
#      the wall time of `kwatch replay SOURCE --at T -o name` (T in the middle of the
#      history) from each, and its query plan (`--explain`: PostgreSQL's EXPLAIN, SQLite's
#      EXPLAIN QUERY PLAN).
#
# Writes benches/record.tsv (section, target, measure, value) and the plans in
# benches/record-plans.txt, and prints them. Nothing here asserts a figure: the figures
# in docs/benchmarks.md (section "Recording into a database") come from it.
#
#   benches/record.sh [KWATCH]   # default: builds release, $CARGO_TARGET_DIR/release/kwatch
#
# Environment: SYNC_PODS=10000, CHURN_PODS=1000, CHURN_EVENTS=20000, AT_COPIES=100,
# RECORD_SECTIONS="A B C", CARGO_TARGET_DIR.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
SYNC_PODS=${SYNC_PODS:-10000}
CHURN_PODS=${CHURN_PODS:-1000}
CHURN_EVENTS=${CHURN_EVENTS:-20000}
AT_COPIES=${AT_COPIES:-100}
SECTIONS=${RECORD_SECTIONS:-A B C}
bench_kwatch "$@"
bench_need /usr/bin/time curl sqlite3 python3
bench_work
# The server runs as postgres when this runs as root: it must reach its directory.
chmod 711 "$WORK"
export HOME=$WORK/home

PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$PGBIN/initdb" ] || { echo "no PostgreSQL server: apt-get install -y postgresql" >&2; exit 1; }
AS=()
[ "$(id -u)" != 0 ] || AS=(runuser -u postgres --)
PG=$WORK/pg
pg_stop() { [ -d "$PG/data" ] && "${AS[@]}" "$PGBIN/pg_ctl" -D "$PG/data" -m fast -w stop >/dev/null 2>&1 || true; }
trap 'pg_stop; bench_cleanup' EXIT
mkdir -p "$PG"
[ ${#AS[@]} = 0 ] || chown postgres: "$PG"
"${AS[@]}" "$PGBIN/initdb" -D "$PG/data" -U kwatch -A trust >/dev/null
PGPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"${AS[@]}" "$PGBIN/pg_ctl" -D "$PG/data" -l "$PG/log" -w \
    -o "-p $PGPORT -k $PG -c listen_addresses=127.0.0.1 -c max_wal_size=4GB" start >/dev/null
log "PostgreSQL $("$PGBIN/postgres" --version | awk '{print $3}') on 127.0.0.1:$PGPORT"
psql_() { psql -X -At -v ON_ERROR_STOP=1 "postgres://kwatch@127.0.0.1:$PGPORT/$1" -c "$2"; }
# A new database each time (called in $(…): the count is kept in a file).
new_pg() {
    local n=$(($(cat "$WORK/dbs" 2>/dev/null || echo 0) + 1))
    echo "$n" >"$WORK/dbs"
    psql_ postgres "CREATE DATABASE b$n" >/dev/null
    echo "postgres://kwatch@127.0.0.1:$PGPORT/b$n"
}

OUT=benches/record.tsv
PLANS=benches/record-plans.txt
printf 'section\ttarget\tmeasure\tvalue\n' >"$OUT"
: >"$PLANS"
put() { printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >>"$OUT"; }
now_ms() { date +%s%3N; }

# One run of kwatch ARGS… recording into TARGET (`none`: no --record): its figures as
# SECTION/NAME.
measure() {
    local section=$1 name=$2 target=$3
    shift 3
    local rec=()
    [ "$target" = none ] || rec=(--record "$target")
    local t0 t1
    t0=$(now_ms)
    "$K" --kubeconfig "$KC" "$@" "${rec[@]}" --stats >"$WORK/out" 2>"$WORK/err"
    t1=$(now_ms)
    local records
    records=$(wc -l <"$WORK/out")
    case $target in
    none) ;;
    sqlite:*) records=$(sqlite3 "${target#sqlite:}" 'SELECT count(*) FROM kwatch_records') ;;
    postgres:*) records=$(psql -X -At "$target" -c 'SELECT count(*) FROM kwatch_records') ;;
    *) records=$(wc -l <"$target") ;;
    esac
    put "$section" "$name" wall_ms $((t1 - t0))
    put "$section" "$name" synced_after_ms "$(awk '/synced after:/ {gsub("ms","",$3); print $3}' "$WORK/err")"
    put "$section" "$name" records "$records"
    put "$section" "$name" records_per_s "$(python3 -c "print(round($records * 1000 / max(1, $((t1 - t0)))))")"
    grep -h 'recorder:' "$WORK/err" | sed "s/^ */$section $name: /" >&2 || true
}

if [[ " $SECTIONS " == *" A "* ]]; then
    log "A: a sync of $SYNC_PODS pods"
    start_sim "$SYNC_PODS" -
    # A first run warms the discovery cache, as a user's would be.
    "$K" --kubeconfig "$KC" pods -A -o name --until-synced >/dev/null
    args=(pods -A -o name --until-synced)
    measure A none none "${args[@]}"
    measure A file "$WORK/a.jsonl" "${args[@]}"
    measure A sqlite "sqlite:$WORK/a.db" "${args[@]}"
    measure A postgres "$(new_pg)" "${args[@]}"
    stop_sim
fi

if [[ " $SECTIONS " == *" B "* ]]; then
    log "B: $CHURN_EVENTS events on $CHURN_PODS pods"
    start_sim "$CHURN_PODS" -
    "$K" --kubeconfig "$KC" pods -A -o name --until-synced >/dev/null
    args=(pods -A -o name --max-events $((CHURN_PODS + CHURN_EVENTS)))
    for t in none file sqlite postgres; do
        case $t in
        none) target=none ;;
        file) target=$WORK/b.jsonl ;;
        sqlite) target=sqlite:$WORK/b.db ;;
        postgres) target=$(new_pg) ;;
        esac
        # The flood starts once the watch opened after this call reports in.
        ctl flood "{\"rate\":\"max\",\"count\":$CHURN_EVENTS}"
        measure B "$t" "$target" "${args[@]}"
    done
    stop_sim
fi

if [[ " $SECTIONS " == *" C "* ]]; then
    log "C: replay --at on about $((AT_COPIES * 10000)) rows"
    start_sim 10000 small
    PGC=$(new_pg)
    "$K" --kubeconfig "$KC" pods -A -o name --until-synced --record "$WORK/c.jsonl" --record "$PGC" >/dev/null
    "$K" --kubeconfig "$KC" pods -A -o name --until-synced --record "sqlite:$WORK/c.db" >/dev/null
    stop_sim
    log "C: copying the sync $((AT_COPIES - 1)) times, a minute apart"
    t0=$(now_ms)
    psql_ "${PGC##*/}" "INSERT INTO kwatch_records (writer, seq, time, context, resource, namespace, name, key, type, resource_version, record, object)
        SELECT writer || ':copy' || g, seq, time - g * interval '1 minute', context, resource, namespace, name, key, type, resource_version,
               regexp_replace(record, '\"time\":\"[^\"]*\"', '\"time\":\"' || to_char((time - g * interval '1 minute') AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"') || '\"'),
               object
        FROM kwatch_records, generate_series(1, $((AT_COPIES - 1))) g WHERE writer NOT LIKE '%:copy%';
        ANALYZE" >/dev/null
    put C postgres copy_ms $(($(now_ms) - t0))
    t0=$(now_ms)
    sqlite3 "$WORK/c.db" "WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < $((AT_COPIES - 1)))
        INSERT INTO kwatch_records (writer, seq, time, context, resource, namespace, name, key, type, resource_version, record, object)
        SELECT writer || ':copy' || n, seq, strftime('%Y-%m-%dT%H:%M:%fZ', time, '-' || n || ' minutes'), context, resource, namespace, name, key, type, resource_version,
               replace(record, '\"time\":\"' || time || '\"', '\"time\":\"' || strftime('%Y-%m-%dT%H:%M:%fZ', time, '-' || n || ' minutes') || '\"'),
               object
        FROM kwatch_records, g WHERE writer NOT LIKE '%:copy%';
        ANALYZE;"
    put C sqlite copy_ms $(($(now_ms) - t0))
    # The file: the same copies, oldest first, as a recording of one run would hold them.
    python3 - "$WORK/c.jsonl" "$AT_COPIES" >"$WORK/c-all.jsonl" <<'PY'
import datetime, json, re, sys
lines = open(sys.argv[1]).read().splitlines()
copies = int(sys.argv[2])
pat = re.compile(r'"time":"([^"]*)"')
for g in range(copies - 1, -1, -1):
    for line in lines:
        def shift(m):
            t = datetime.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S.%fZ") - datetime.timedelta(minutes=g)
            return '"time":"%s.%03dZ"' % (t.strftime("%Y-%m-%dT%H:%M:%S"), t.microsecond // 1000)
        print(pat.sub(shift, line, count=1))
PY
    put C postgres rows "$(psql -X -At "$PGC" -c 'SELECT count(*) FROM kwatch_records')"
    put C sqlite rows "$(sqlite3 "$WORK/c.db" 'SELECT count(*) FROM kwatch_records')"
    put C file rows "$(wc -l <"$WORK/c-all.jsonl")"
    put C file bytes "$(stat -c %s "$WORK/c-all.jsonl")"
    # T: half-way through the history, between two copies.
    AT=$(python3 -c "
import datetime, json
t = json.loads(open('$WORK/c.jsonl').readline())['time']
t = datetime.datetime.strptime(t, '%Y-%m-%dT%H:%M:%S.%fZ') - datetime.timedelta(minutes=$((AT_COPIES / 2)), seconds=30)
print(t.strftime('%Y-%m-%dT%H:%M:%SZ'))")
    put C all at "$AT"
    for t in postgres sqlite file; do
        case $t in
        postgres) src=$PGC ;;
        sqlite) src=sqlite:$WORK/c.db ;;
        file) src=$WORK/c-all.jsonl ;;
        esac
        explain=()
        [ "$t" = file ] || explain=(--explain)
        # Three times: the first after the copies (the index not yet in the database's
        # cache, nor the file in the page cache), then twice more.
        for run in first second third; do
            t0=$(now_ms)
            /usr/bin/time -f %M -o "$WORK/rss" "$K" replay "$src" --at "$AT" -o name "${explain[@]}" >"$WORK/at.out" 2>"$WORK/at.err"
            put C "$t" "at_ms_$run" $(($(now_ms) - t0))
        done
        put C "$t" at_peak_rss_kib "$(tail -1 "$WORK/rss")"
        put C "$t" at_objects "$(wc -l <"$WORK/at.out")"
        if [ "$t" != file ]; then
            { echo "== $t: kwatch replay SOURCE --at $AT --explain"; cat "$WORK/at.err"; echo; } >>"$PLANS"
        fi
    done
fi

cat "$OUT"
cat "$PLANS"
