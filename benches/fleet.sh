#!/usr/bin/env bash
# What watching a fleet costs: `kwatch sim --clusters N --objects P` (N simulated
# clusters of P pods each in one simulator process, idle or churning C changes a second
# each), watched three ways, each to the sync of every cluster:
#
#   one-kwatch   one kwatch: `pods -A --all-contexts -o json --until-synced`
#   n-kwatch     S kwatch processes at once, one per context, `pods -A -o json --until-synced`
#   n-kubectl    S `kubectl get pods -A -w -o name` at once, one per context, stopped once
#                each has printed its P pods
#
# (S = N unless FLEET_SEPARATE says fewer: 500 kubectl do not fit in the machine's memory,
# their figures are then for S of the N contexts, to be scaled by N/S.)
#
# For each: the wall time from the start to the last cluster synced, and the peak RSS
# (VmHWM, /usr/bin/time's %M): of the one process, or the sum of the S processes' peaks
# (each peaks at its own sync, all within the same seconds). Then, for each way left
# watching after its sync (without --until-synced): the CPU it uses over IDLE_SECS
# seconds (with churn: per event printed then, too), the TCP connections it holds, and its
# RSS and PSS (shared pages divided among the processes) then.
#
# Writes benches/fleet.tsv (way, measure, value) and prints it. Nothing here asserts a
# figure. The figures in docs/benchmarks.md (section "A fleet") come from it.
#
#   benches/fleet.sh [KWATCH]   # default: builds release, $CARGO_TARGET_DIR/release/kwatch
#
# Environment: FLEET_N=50 clusters, FLEET_PODS=1000 pods each, FLEET_CHURN=0 changes a
# second per cluster, FLEET_SEPARATE=N processes for n-kwatch and n-kubectl,
# FLEET_IDLE_SECS=10, FLEET_OUT=benches/fleet.tsv, CARGO_TARGET_DIR.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
N=${FLEET_N:-50}
P=${FLEET_PODS:-1000}
IDLE_SECS=${FLEET_IDLE_SECS:-10}
CHURN=${FLEET_CHURN:-0}
S=${FLEET_SEPARATE:-$N}
bench_kwatch "$@"
bench_need kubectl /usr/bin/time ss pgrep
bench_work

log "starting $N simulated clusters of $P pods, churn $CHURN/s each"
scenario=idle
[ "$CHURN" = 0 ] || scenario=steady
"$K" sim --clusters "$N" --objects "$P" --scenario "$scenario" --churn "$CHURN" \
    --write-kubeconfig "$KC" 2>"$WORK/sim.log" &
SIM_PID=$!
for _ in $(seq 3000); do
    [ -s "$KC" ] && break
    kill -0 "$SIM_PID" 2>/dev/null || break
    sleep 0.1
done
[ -s "$KC" ] || { cat "$WORK/sim.log" >&2; echo "the simulator did not start" >&2; exit 1; }
export KUBECONFIG=$KC HOME=$WORK/home
CONTEXTS=$(seq -f 'kwatch-sim-%g' 1 "$S")
OUT=${FLEET_OUT:-benches/fleet.tsv}
printf 'way\tmeasure\tvalue\n' >"$OUT"
put() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$OUT"; }
now_ms() { date +%s%3N; }
put all clusters "$N"
put all separate_processes "$S"
put all churn_per_cluster "$CHURN"
# Warm kwatch's and kubectl's discovery caches (one run each), as a user's would be.
"$K" pods -A --all-contexts --until-synced -o json >/dev/null
for c in $CONTEXTS; do kubectl --context "$c" get ns -o name >/dev/null; done

log "one-kwatch"
t0=$(now_ms)
/usr/bin/time -f %M -o "$WORK/one.rss" "$K" pods -A --all-contexts --until-synced -o json >"$WORK/one.out"
put one-kwatch sync_ms $(($(now_ms) - t0))
put one-kwatch peak_rss_kib "$(tail -1 "$WORK/one.rss")"
put one-kwatch pods "$(grep -c '"type":"Replaced"' "$WORK/one.out" || true)"

log "n-kwatch"
t0=$(now_ms)
pids=()
for c in $CONTEXTS; do
    /usr/bin/time -f %M -o "$WORK/$c.rss" "$K" pods -A --context "$c" --until-synced -o json >"$WORK/$c.out" &
    pids+=($!)
done
wait "${pids[@]}"
put n-kwatch sync_ms $(($(now_ms) - t0))
put n-kwatch peak_rss_kib "$(for c in $CONTEXTS; do tail -1 "$WORK/$c.rss"; done | awk '{s+=$1} END {print s}')"
put n-kwatch pods "$(cat "$WORK"/kwatch-sim-*.out | grep -c '"type":"Replaced"' || true)"

log "n-kubectl"
t0=$(now_ms)
pids=()
for c in $CONTEXTS; do
    : >"$WORK/$c.kout"
    /usr/bin/time -f %M -o "$WORK/$c.krss" kubectl --context "$c" get pods -A -w -o name >"$WORK/$c.kout" 2>/dev/null &
    pids+=($!)
done
while :; do
    done_n=0
    for c in $CONTEXTS; do
        [ "$(wc -l <"$WORK/$c.kout")" -ge "$P" ] && done_n=$((done_n + 1))
    done
    [ "$done_n" -eq "$S" ] && break
    sleep 0.05
done
put n-kubectl sync_ms $(($(now_ms) - t0))
# Each /usr/bin/time's child, kubectl, stopped: /usr/bin/time then writes its figures.
kill $(pgrep -P "$(IFS=,; echo "${pids[*]}")") 2>/dev/null || true
wait "${pids[@]}" 2>/dev/null || true
put n-kubectl peak_rss_kib "$(for c in $CONTEXTS; do tail -1 "$WORK/$c.krss"; done | awk '{s+=$1} END {print s}')"

# CPU ticks (utime + stime) of PIDs, summed.
ticks() { for p in "$@"; do awk '{print $14 + $15}' "/proc/$p/stat"; done | awk '{s+=$1} END {print s}'; }
# TCP connections the PIDs hold (established).
sockets() { for p in "$@"; do ss -tnpH state established | grep -c "pid=$p," || true; done | awk '{s+=$1} END {print s}'; }
# Waits until FILE has COUNT Synced records.
synced() { until [ "$(grep -c '"type":"Synced"' "$1" || true)" -ge "$2" ]; do sleep 0.1; done; }
# Events printed so far in FILES: kwatch's deltas (JSON lines), kubectl's lines.
events() { cat "$@" | grep -c -E '"type":"(Added|Updated|Deleted|Replaced|Sync)"|^pod/' || true; }
idle() {
    local way=$1 files=$2
    shift 2
    local hz before after e0 e1
    hz=$(getconf CLK_TCK)
    before=$(ticks "$@")
    e0=$(events $files)
    sleep "$IDLE_SECS"
    after=$(ticks "$@")
    e1=$(events $files)
    put "$way" idle_cpu_percent "$(awk -v a="$after" -v b="$before" -v hz="$hz" -v s="$IDLE_SECS" 'BEGIN {printf "%.2f", 100 * (a - b) / hz / s}')"
    put "$way" events_in_window "$((e1 - e0))"
    [ "$((e1 - e0))" -gt 0 ] && put "$way" cpu_us_per_event "$(awk -v a="$after" -v b="$before" -v hz="$hz" -v e="$((e1 - e0))" 'BEGIN {printf "%.1f", 1e6 * (a - b) / hz / e}')"
    put "$way" sockets "$(sockets "$@")"
    put "$way" rss_idle_kib "$(for p in "$@"; do awk '/VmRSS/ {print $2}' "/proc/$p/status"; done | awk '{s+=$1} END {print s}')"
    # PSS: each shared page (the binary's text, shared libraries) divided among the
    # processes that map it, where RSS counts it in full in each.
    put "$way" pss_idle_kib "$(for p in "$@"; do awk '/^Pss:/ {print $2}' "/proc/$p/smaps_rollup"; done | awk '{s+=$1} END {print s}')"
}

log "one-kwatch, watching"
"$K" pods -A --all-contexts -o json >"$WORK/one-idle.out" &
one=$!
synced "$WORK/one-idle.out" "$N"
idle one-kwatch "$WORK/one-idle.out" "$one"
kill "$one"
wait "$one" 2>/dev/null || true

log "n-kwatch, watching"
pids=()
for c in $CONTEXTS; do
    "$K" pods -A --context "$c" -o json >"$WORK/$c.idle" &
    pids+=($!)
done
for c in $CONTEXTS; do synced "$WORK/$c.idle" 1; done
idle n-kwatch "$(for c in $CONTEXTS; do printf '%s ' "$WORK/$c.idle"; done)" "${pids[@]}"
kill "${pids[@]}"
wait "${pids[@]}" 2>/dev/null || true

log "n-kubectl, watching"
pids=()
for c in $CONTEXTS; do
    kubectl --context "$c" get pods -A -w -o name >"$WORK/$c.kidle" 2>/dev/null &
    pids+=($!)
done
for c in $CONTEXTS; do until [ "$(wc -l <"$WORK/$c.kidle")" -ge "$P" ]; do sleep 0.05; done; done
idle n-kubectl "$(for c in $CONTEXTS; do printf '%s ' "$WORK/$c.kidle"; done)" "${pids[@]}"
kill "${pids[@]}"
wait "${pids[@]}" 2>/dev/null || true

column -t -s "$(printf '\t')" "$OUT"
