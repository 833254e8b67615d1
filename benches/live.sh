#!/usr/bin/env bash
# `--live` beside the other printers, on `kwatch sim` over HTTPS. Writes
# benches/live.tsv (section, client, measure, value) and benches/LIVE.md (the figures);
# a log on stderr. Nothing here asserts a time.
#
#   benches/live.sh [KWATCH]   # default: builds release and uses $CARGO_TARGET_DIR/release/kwatch
#
#   T: throughput. 10,000 medium pods, the watch benchmark's flood (`POST /_sim/flood
#      {"rate":"max"}`, as run.sh's B), `pods -A --max-events N` for N = 10000 + LIVE_LO and
#      10000 + LIVE_HI (the initial list's 10,000 Added count too): events popped per second
#      = the difference of the events over the difference of the wall times (start-up, the
#      list and exit cancel out); CPU µs per event the same way; peak RSS of the larger run.
#      Clients: `-o json` and the table to /dev/null, `--live` in a 120×40 tmux pane.
#   K: keystroke to screen. 100,000 small pods, `pods -A --live` in a 120×40 pane, synced;
#      then `/` and a pod's name typed one key at a time: each key's time from `send-keys`
#      until `capture-pane` shows the new filter (drawn in the same frame as the rows it
#      keeps: every frame filters and sorts the whole store). Polled every few ms, so each
#      figure includes tmux's round trips (a few ms).
#
# Environment:
#   LIVE_RUNS=3          runs per throughput measurement (the median is reported)
#   LIVE_LO=2000 LIVE_HI=42000   flood events of the two runs
#   LIVE_100K=1          0: no section K
#   CARGO_TARGET_DIR     where to build when no KWATCH is given (default: target)
#
# The simulator runs on core 0 and the client on core 1 (taskset), as in run.sh.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
RUNS=${LIVE_RUNS:-3}
LO=${LIVE_LO:-2000}
HI=${LIVE_HI:-42000}
DO100K=${LIVE_100K:-1}
bench_kwatch "$@"
bench_need tmux curl taskset /usr/bin/time bc
bench_work
SOCK=kwatch-bench-$$
trap 'tmux -L "$SOCK" kill-server 2>/dev/null || true; bench_cleanup' EXIT
row() { printf '%s\t%s\t%s\t%s\n' "$@"; }

pane() { tmux -L "$SOCK" "$@"; }

# run_client CLIENT N: one run popping N deltas under the flood; prints "wall user sys rss_kb".
run_client() {
    local client=$1 n=$2 args=(pods -A --kubeconfig "$KC" --max-events "$2")
    rm -rf "$WORK/home" "$WORK/t"
    mkdir -p "$WORK/home"
    ctl flood '{"rate":"max"}'
    case $client in
    json) HOME=$WORK/home /usr/bin/time -f '%e %U %S %M' -o "$WORK/t" taskset -c 1 \
        "$K" "${args[@]}" -o json >/dev/null 2>&1 ;;
    table) HOME=$WORK/home /usr/bin/time -f '%e %U %S %M' -o "$WORK/t" taskset -c 1 \
        "$K" "${args[@]}" >/dev/null 2>&1 ;;
    live)
        pane new-session -d -x 120 -y 40 "env HOME=$WORK/home TERM=xterm-256color \
            /usr/bin/time -f '%e %U %S %M' -o $WORK/t taskset -c 1 $K ${args[*]} --live \
            2>$WORK/live.err; tmux -L $SOCK wait-for -S done"
        pane wait-for done
        pane kill-server 2>/dev/null || true ;;
    esac
    ctl flood '{"rate":0}'
    sleep 0.5
    [ -s "$WORK/t" ] || { echo "$client: no timing (kwatch failed?)" >&2; exit 1; }
    tail -n1 "$WORK/t"
}

# ---------------------------------------------------------------- T: throughput
section_t() {
    log "T: 10000 medium pods, watch flood, $LO and $HI events after the list"
    start_sim 10000 medium --history 50000
    local client lo hi
    for client in json table live; do
        : >"$WORK/runs"
        for _ in $(seq "$RUNS"); do
            read -r lw lu ls _ < <(run_client "$client" $((10000 + LO)))
            read -r hw hu hs hr < <(run_client "$client" $((10000 + HI)))
            echo "$lw $lu $ls $hw $hu $hs $hr" >>"$WORK/runs"
        done
        # The median run by the wall-time difference.
        read -r lw lu ls hw hu hs hr < <(awk '{print $4 - $1, $0}' "$WORK/runs" | sort -n |
            awk -v m=$(((RUNS + 1) / 2)) 'NR == m {$1 = ""; print}')
        lo=$(echo "$HI - $LO" | bc)
        row T "$client" events_per_s "$(echo "$lo / ($hw - $lw)" | bc -l)"
        row T "$client" cpu_us_per_event "$(echo "(($hu + $hs) - ($lu + $ls)) * 1000000 / $lo" | bc -l)"
        row T "$client" peak_rss_mb "$(echo "$hr / 1024" | bc -l)"
        log "T: $client: $lo events in $(echo "$hw - $lw" | bc)s more, rss ${hr} kB"
    done
    stop_sim
}

# ---------------------------------------------------------------- K: keystroke to screen
now_ms() { date +%s%3N; }
section_k() {
    log "K: 100000 small pods, --live, filter keystrokes"
    start_sim 100000 small
    local name
    name=$(curl -sfk -A bench -H "Authorization: Bearer $TOKEN" \
        "$URL/api/v1/namespaces/default/pods?limit=1" |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["items"][0]["metadata"]["name"])')
    mkdir -p "$WORK/home"
    pane new-session -d -x 120 -y 40 "env HOME=$WORK/home TERM=xterm-256color \
        taskset -c 1 $K pods -A --kubeconfig $KC --live 2>$WORK/live.err; sleep 600"
    for _ in $(seq 1200); do
        pane capture-pane -p | grep -q 'synced rv=' && pane capture-pane -p | grep -q '100000 objects' && break
        sleep 0.25
    done
    pane capture-pane -p | grep -q '100000 objects' || { pane capture-pane -p >&2; echo "K: not synced" >&2; exit 1; }
    pane send-keys /
    local typed= t0 c ms
    : >"$WORK/keys"
    for ((i = 0; i < ${#name}; i++)); do
        c=${name:i:1}
        typed+=$c
        sleep 0.3
        t0=$(now_ms)
        pane send-keys -l "$c"
        until pane capture-pane -p | grep -qF "filter: /${typed}_"; do :; done
        ms=$(($(now_ms) - t0))
        echo "$ms" >>"$WORK/keys"
    done
    pane kill-server 2>/dev/null || true
    row K live keystroke_ms_median "$(sort -n "$WORK/keys" | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}')"
    row K live keystroke_ms_max "$(sort -n "$WORK/keys" | tail -n1)"
    row K live keystrokes "$(wc -l <"$WORK/keys")"
    log "K: ${#name} keys typed ($name): $(tr '\n' ' ' <"$WORK/keys")ms"
    stop_sim
}

{
    printf 'section\tclient\tmeasure\tvalue\n'
    section_t
    [ "$DO100K" = 1 ] && section_k
} >"$WORK/live.tsv"
cp "$WORK/live.tsv" "$ROOT/benches/live.tsv"
awk -F '\t' -v date="$(date -u +%Y-%m-%d)" '
    NR == 1 { next }
    { v[$1 "/" $2 "/" $3] = $4 }
    END {
        print "# --live beside the other printers (generated by benches/live.sh, " date ")"
        print ""
        print "T: 10,000 medium pods, the watch flood at its maximum; the figures are the difference"
        print "between a run popping " LO " and one popping " HI " flood events (after the 10,000 of the"
        print "list). Client on one core, the simulator on the other."
        print ""
        print "| printer | events popped/s | ÷ json | CPU µs/event | peak RSS MB |"
        print "|---|---|---|---|---|"
        n = split("json table live", c, " ")
        for (i = 1; i <= n; i++) {
            k = "T/" c[i] "/"
            printf "| %s | %.0f | %.2f | %.1f | %.0f |\n", c[i], v[k "events_per_s"],
                v[k "events_per_s"] / v["T/json/events_per_s"], v[k "cpu_us_per_event"], v[k "peak_rss_mb"]
        }
        if (("K/live/keystrokes") in v) {
            print ""
            print "K: 100,000 small pods in `--live`, synced; a pod name typed into `/` one key at a time:"
            printf "keystroke to screen (tmux `send-keys` until `capture-pane` shows it) median %d ms, max %d ms over %d keys.\n",
                v["K/live/keystroke_ms_median"], v["K/live/keystroke_ms_max"], v["K/live/keystrokes"]
        }
    }' LO="$LO" HI="$HI" "$WORK/live.tsv" >"$ROOT/benches/LIVE.md"
cat "$ROOT/benches/LIVE.md"
