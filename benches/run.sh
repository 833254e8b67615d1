#!/usr/bin/env bash
# kwatch's benchmark: kwatch vs kubectl vs kube-runtime's watcher + reflector
# (examples/krt_watch.rs) on `kwatch sim`, side by side in one run, over HTTPS. Writes
# benches/REPORT.md (figures) and benches/results.tsv (raw measurements).
#
#   benches/run.sh                 # everything, about 13-16 minutes on 2 cores
#
# Environment:
#   BENCH_100K=0            skip N = 100k (A and C)
#   BENCH_KUBECTL_100K=1    also run kubectl at 100k (needs ~15+ GB and minutes; off by default)
#   BENCH_KRT_100K_LARGE=1  also run krt_watch at 100k x 12 KB (~11 GB; off by default)
#   BENCH_REPEAT=3          runs per kwatch/krt_watch measurement (the median is reported)
#   BENCH_KUBECTL_REPEAT=1  runs per kubectl measurement
#   BENCH_SIZES="small medium large"
#   BENCH_SECS=5            seconds per sustained-watch measurement (B)
#   BENCH_SECTIONS="A B D M"  which sections to run (C runs with A, on the medium pods)
#   BENCH_M_SIZES="medium large"  pod sizes of M (10k pods, with and without --metadata-only)
#   CARGO_TARGET_DIR        where to build (default: target)
#
# The simulator runs on core 0 and every client on core 1 (taskset); the small helpers
# that count lines run on core 0. Nothing here asserts a time.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
REPEAT=${BENCH_REPEAT:-3}
KREPEAT=${BENCH_KUBECTL_REPEAT:-1}
SIZES=${BENCH_SIZES:-small medium large}
SECS=${BENCH_SECS:-5}
DO100K=${BENCH_100K:-1}
SECTIONS=${BENCH_SECTIONS:-A B D M}
M_SIZES=${BENCH_M_SIZES:-medium large}
has() { case " $SECTIONS " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

cargo build --release --locked --bin kwatch --example krt_watch >&2
K=$CARGO_TARGET_DIR/release/kwatch
KRT=$CARGO_TARGET_DIR/release/examples/krt_watch
bench_need kubectl /usr/bin/time
bench_work

OUT=$ROOT/benches/results.tsv
printf 'section\tclient\tn\tsize\tmetric\tvalue\n' >"$OUT"
rec() { printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"$OUT"; }

# Bytes of the pod list as the clients get it (compact JSON, one body).
list_bytes() { curl -sfk -A bench -H "Authorization: Bearer $TOKEN" "$URL/api/v1/pods" | wc -c; }

# timed FILE CMD…: runs CMD on core 1 under GNU time; FILE gets "wall user sys maxrss_kb".
timed() {
    local f=$1
    shift
    /usr/bin/time -f '%e %U %S %M' -o "$f" taskset -c 1 "$@" || true
    tail -n1 "$f" >"$f.last" && mv "$f.last" "$f"
}

# median_of RUNS CMD…: runs CMD RUNS times; records the run with the median wall time
# into $WORK/median ("wall user sys maxrss_kb").
median_of() {
    local runs=$1
    shift
    : >"$WORK/runs"
    for _ in $(seq "$runs"); do
        timed "$WORK/t" "$@"
        cat "$WORK/t" >>"$WORK/runs"
    done
    sort -n -k1,1 "$WORK/runs" | awk -v m=$(((runs + 1) / 2)) 'NR == m' >"$WORK/median"
}

# record_timed SECTION CLIENT N SIZE: records the median run's wall, cpu, rss.
record_timed() {
    read -r wall user sys rss <"$WORK/median"
    rec "$1" "$2" "$3" "$4" wall_s "$wall"
    rec "$1" "$2" "$3" "$4" cpu_s "$(echo "$user + $sys" | bc -l)"
    rec "$1" "$2" "$3" "$4" peak_rss_mb "$(echo "$rss / 1024" | bc -l)"
}

# ---------------------------------------------------------------- A: initial list
section_a() {
    local n=$1 size=$2 kubectl_too=$3 krt_too=$4
    log "A: $n pods, $size"
    start_sim "$n" "$size"
    rec A wire "$n" "$size" bytes "$(list_bytes)"
    # The simulator's own floor: the same list fetched by curl (TLS, no parsing).
    median_of "$REPEAT" curl -sfk -A bench -H "Authorization: Bearer $TOKEN" -o /dev/null \
        "$URL/api/v1/pods"
    record_timed A curl "$n" "$size"
    median_of "$REPEAT" "$K" pods -A -o json --until-synced --watch-list off --kubeconfig "$KC" \
        >/dev/null
    record_timed A kwatch-list "$n" "$size"
    median_of "$REPEAT" "$K" pods -A -o json --until-synced --kubeconfig "$KC" >/dev/null
    record_timed A kwatch-stream "$n" "$size"
    if [ "$krt_too" = 1 ]; then
        median_of "$REPEAT" "$KRT" "$KC" pods
        record_timed A krt "$n" "$size"
    fi
    if [ "$kubectl_too" = 1 ]; then
        median_of "$KREPEAT" env HOME="$WORK/home" kubectl --kubeconfig "$KC" \
            --request-timeout 0 get pods -A -o json >/dev/null
        record_timed A kubectl "$n" "$size"
    fi
    # C: RSS after sync and during a forced relist (410), on the same simulator.
    if [ "$size" = medium ]; then
        section_c "$n" "$krt_too"
    fi
    stop_sim
}

# ---------------------------------------------------------------- C: memory
# rss_of PID FIELD: VmRSS or VmHWM in MB.
rss_of() { awk -v f="$2:" '$1 == f {printf "%.1f", $2 / 1024}' "/proc/$1/status"; }

# wait_for FILE PATTERN COUNT: until PATTERN occurs COUNT times in FILE (at most 300 s).
wait_for() {
    for _ in $(seq 3000); do
        [ "$(grep -c -- "$2" "$1" 2>/dev/null || true)" -ge "$3" ] && return 0
        sleep 0.1
    done
    return 1
}

# force_relist: the watch's resourceVersion is compacted away while it is down, so the
# next watch gets 410 Gone and the client relists.
force_relist() {
    ctl stall '{"seconds":2}'
    ctl flood '{"rate":1000}'
    sleep 0.2
    ctl flood '{"rate":0}'
    ctl compact '{}'
    ctl drop-watches '{}'
}

section_c() {
    local n=$1 krt_too=$2
    log "C: $n pods, memory after sync and during a relist"
    # kwatch, paged LIST (kubectl's way) and the streaming list (default).
    for mode in off auto; do
        local ev=$WORK/ev
        : >"$ev"
        taskset -c 1 "$K" pods -A -o json --watch-list "$mode" --kubeconfig "$KC" \
            --timeout 600s | taskset -c 0 grep --line-buffered -E '"type":"(Synced|Listed|List)"' >"$ev" &
        local gpid=$!
        sleep 0.2
        local pid
        pid=$(pgrep -n -f -- "--watch-list $mode --kubeconfig $KC" || true)
        wait_for "$ev" '"type":"Synced"' 1
        sleep 1
        rec C "kwatch-$mode" "$n" medium rss_synced_mb "$(rss_of "$pid" VmRSS)"
        rec C "kwatch-$mode" "$n" medium peak_initial_mb "$(rss_of "$pid" VmHWM)"
        echo 5 >"/proc/$pid/clear_refs"
        force_relist
        wait_for "$ev" '"type":"Listed"' 2
        sleep $((1 + n / 50000))
        rec C "kwatch-$mode" "$n" medium rss_after_relist_mb "$(rss_of "$pid" VmRSS)"
        rec C "kwatch-$mode" "$n" medium peak_relist_mb "$(rss_of "$pid" VmHWM)"
        kill "$pid" 2>/dev/null || true
        wait "$gpid" 2>/dev/null || true
    done
    if [ "$krt_too" = 1 ]; then
        local ev=$WORK/krt.ev
        : >"$ev"
        taskset -c 1 "$KRT" "$KC" pods --hold 2>"$ev" &
        local pid=$!
        wait_for "$ev" '^synced' 1
        sleep 1
        rec C krt "$n" medium rss_synced_mb "$(rss_of "$pid" VmRSS)"
        rec C krt "$n" medium peak_initial_mb "$(rss_of "$pid" VmHWM)"
        echo 5 >"/proc/$pid/clear_refs"
        force_relist
        wait_for "$ev" '^synced' 2 || log "krt_watch did not relist"
        sleep $((1 + n / 50000))
        rec C krt "$n" medium rss_after_relist_mb "$(rss_of "$pid" VmRSS)"
        rec C krt "$n" medium peak_relist_mb "$(rss_of "$pid" VmHWM)"
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    fi
}

# ---------------------------------------------------------------- B: sustained watch
# count_events CLIENT RATE: one run of SECS seconds; records events/s and CPU µs/event.
watch_run() {
    local client=$1 rate=$2 cmd counter
    case $client in
    kwatch-json) cmd=("$K" pods -A -o json --watch-only --kubeconfig "$KC" --timeout "${SECS}s")
        counter=(wc -l) ;;
    kwatch-table) cmd=("$K" pods -A --watch-only --kubeconfig "$KC" --timeout "${SECS}s")
        counter=(wc -l) ;;
    kubectl) cmd=(env HOME="$WORK/home" timeout -s INT "$SECS" kubectl --kubeconfig "$KC"
        --request-timeout 0 get pods -A -w --watch-only -o json)
        counter=(grep -c '^{') ;;
    esac
    ctl flood "{\"rate\":$( [ "$rate" = max ] && echo '"max"' || echo "$rate")}"
    local n
    n=$( { /usr/bin/time -f '%e %U %S %M' -o "$WORK/t" taskset -c 1 "${cmd[@]}" || true; } |
        taskset -c 0 "${counter[@]}" || true)
    ctl flood '{"rate":0}'
    sleep 0.5
    read -r wall user sys _ < <(tail -n1 "$WORK/t")
    echo "$n $wall $user $sys"
}

section_b() {
    log "B: sustained watch, 1000 medium pods"
    start_sim 1000 medium --history 50000
    for rate in max 1000 5000 20000; do
        for client in kwatch-json kwatch-table kubectl; do
            local runs=1
            [ "$rate" = max ] && [ "$client" != kubectl ] && runs=$REPEAT
            : >"$WORK/bruns"
            for _ in $(seq "$runs"); do
                watch_run "$client" "$rate" >>"$WORK/bruns"
            done
            # The median run by events.
            read -r n wall user sys < <(sort -n -k1,1 "$WORK/bruns" | awk -v m=$(((runs + 1) / 2)) 'NR == m')
            rec B "$client" 1000 "rate=$rate" events "$n"
            rec B "$client" 1000 "rate=$rate" events_per_s "$(echo "$n / $wall" | bc -l)"
            rec B "$client" 1000 "rate=$rate" cpu_us_per_event "$(echo "($user + $sys) * 1000000 / ($n + 0.000001)" | bc -l)"
            log "B: $client rate=$rate: $n events in ${wall}s, cpu $user+$sys"
        done
    done
    stop_sim
}

# ---------------------------------------------------------------- D: time to first line
# discovery_requests: how many discovery documents the simulator has served so far.
discovery_requests() {
    curl -sfk -A bench -H "Authorization: Bearer $TOKEN" "$URL/_sim/state" |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["discoveryRequests"])'
}

# ttfl CLIENT WHAT PATTERN CMD…: one time-to-first-line run on core 1, with the discovery
# requests it made.
ttfl() {
    local client=$1 what=$2 pattern=$3 before
    shift 3
    before=$(discovery_requests)
    rec D "$client" 10 "$what" ttfl_ms "$(taskset -c 1 python3 "$ROOT/benches/ttfl.py" "$pattern" "$@")"
    rec D "$client" 10 "$what" discovery_requests "$(($(discovery_requests) - before))"
}

section_d() {
    log "D: time to the first line, 10 pods / 2 deployments in a namespace"
    start_sim 20 default
    # cold: an empty ~/.kube/cache; warm: the cache the previous command left. kwatch-on-kubectl
    # reads the cache kubectl wrote.
    for what in pods deployments; do
        pattern=web-
        [ "$what" = deployments ] && pattern=web
        for i in $(seq 5); do
            rm -rf "$WORK/dhome" "$WORK/khome"
            mkdir -p "$WORK/dhome" "$WORK/khome"
            ttfl kubectl-cold "$what" "$pattern" env HOME="$WORK/dhome" kubectl --kubeconfig "$KC" get "$what" -n default
            ttfl kubectl-warm "$what" "$pattern" env HOME="$WORK/dhome" kubectl --kubeconfig "$KC" get "$what" -n default
            ttfl kwatch-on-kubectl "$what" "$pattern" env HOME="$WORK/dhome" "$K" "$what" -n default --kubeconfig "$KC" --until-synced
            ttfl kwatch-cold "$what" "$pattern" env HOME="$WORK/khome" "$K" "$what" -n default --kubeconfig "$KC" --until-synced
            ttfl kwatch-warm "$what" "$pattern" env HOME="$WORK/khome" "$K" "$what" -n default --kubeconfig "$KC" --until-synced
        done
    done
    stop_sim
}

# ---------------------------------------------------------------- M: --metadata-only
# The Accept headers kwatch sends under --metadata-only (crates/core/src/client/source.rs).
META_LIST='application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json'
META_WATCH='application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json'
# The streaming list kwatch opens (it ends after 1 s, the initial events sent in full).
STREAM='/api/v1/pods?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1'

# wire_bytes PATH ACCEPT: the size of the body the simulator sends for that request.
wire_bytes() {
    curl -sfk -A bench -H "Authorization: Bearer $TOKEN" -H "Accept: $2" -o /dev/null \
        -w '%{size_download}' "$URL$1"
}

section_m() {
    local n=$1 size=$2
    log "M: $n pods, $size, with and without --metadata-only"
    start_sim "$n" "$size"
    rec M wire-list "$n" "$size" bytes "$(wire_bytes /api/v1/pods application/json)"
    rec M wire-list-meta "$n" "$size" bytes "$(wire_bytes /api/v1/pods "$META_LIST")"
    rec M wire-stream "$n" "$size" bytes "$(wire_bytes "$STREAM" application/json)"
    rec M wire-stream-meta "$n" "$size" bytes "$(wire_bytes "$STREAM" "$META_WATCH")"
    for mode in list stream; do
        local wl=off
        [ "$mode" = stream ] && wl=on
        median_of "$REPEAT" "$K" pods -A -o json --until-synced --watch-list "$wl" \
            --kubeconfig "$KC" >/dev/null
        record_timed M "kwatch-$mode" "$n" "$size"
        median_of "$REPEAT" "$K" pods -A -o json --until-synced --watch-list "$wl" \
            --metadata-only --kubeconfig "$KC" >/dev/null
        record_timed M "kwatch-$mode-meta" "$n" "$size"
    done
    stop_sim
}

START=$(date +%s)
if has D; then section_d; fi
if has A; then
    for size in $SIZES; do
        section_a 10000 "$size" 1 1
    done
fi
if has A && [ "$DO100K" = 1 ]; then
    for size in $SIZES; do
        krt=1
        [ "$size" = large ] && [ "${BENCH_KRT_100K_LARGE:-0}" != 1 ] && krt=0
        section_a 100000 "$size" "${BENCH_KUBECTL_100K:-0}" "$krt"
    done
fi
if has B; then section_b; fi
if has M; then
    for size in $M_SIZES; do
        section_m 10000 "$size"
    done
fi
END=$(date +%s)
rec meta all 0 - seconds "$((END - START))"
BASE=()
[ -f "$ROOT/benches/baseline/results.tsv" ] && BASE=("$ROOT/benches/baseline/results.tsv")
python3 "$ROOT/benches/report.py" "$OUT" "$ROOT/benches/REPORT.md" "${BASE[@]}"
log "wrote benches/REPORT.md in $((END - START)) s"
