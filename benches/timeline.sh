#!/usr/bin/env bash
# The --timeline page of 100,000 deltas: how big it is, how long `kwatch replay --timeline`
# takes to write it, and how long headless Chromium takes to load and draw it.
#
#   1. `kwatch sim --objects OBJECTS --scenario steady --churn CHURN`: default pods (~3.3 KB;
#      churn panics on `--pod-size small`'s, which have no container statuses), created,
#      scheduled, restarted, relabelled and deleted, CHURN changes a second;
#   2. `kwatch pods -A -o name --max-events DELTAS --record rec.jsonl`: the initial list's
#      OBJECTS deltas, then the churn's, DELTAS in all;
#   3. `kwatch replay rec.jsonl --timeline page.html`, timed (/usr/bin/time: wall, peak RSS);
#   4. the page opened RUNS times, each in a new headless Chromium (the integration test
#      `timeline::timeline_page_load`, ignored by `cargo test`, drives it over the DevTools
#      Protocol): the page's own measure of its load, `kwatchTimeline.loadMs`, from the
#      navigation's start (the data's parse, unzip and JSON included) to its first drawing.
#
# Writes benches/timeline.tsv (measure, value) and prints it. Nothing here asserts a
# figure; docs/benchmarks.md ("The --timeline page") has them.
#
#   benches/timeline.sh [KWATCH]   # default: builds release, $CARGO_TARGET_DIR/release/kwatch
#
# Environment: TIMELINE_DELTAS=100000, TIMELINE_OBJECTS=10000, TIMELINE_CHURN=2000,
# TIMELINE_RUNS=5, TIMELINE_KEEP (a directory: the page is copied there), CARGO_TARGET_DIR.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
DELTAS=${TIMELINE_DELTAS:-100000}
OBJECTS=${TIMELINE_OBJECTS:-10000}
CHURN=${TIMELINE_CHURN:-2000}
RUNS=${TIMELINE_RUNS:-5}
bench_kwatch "$@"
bench_need chromium /usr/bin/time curl cargo
bench_work

log "starting a simulator of $OBJECTS pods churning at $CHURN changes/s"
"$K" sim --objects "$OBJECTS" --scenario steady --churn "$CHURN" \
    --write-kubeconfig "$KC" 2>"$WORK/sim.log" &
SIM_PID=$!
# Its last line at start says it serves (the kubeconfig is written before).
for _ in $(seq 1200); do
    grep -q 'Ctrl-C to stop' "$WORK/sim.log" 2>/dev/null && break
    kill -0 "$SIM_PID" 2>/dev/null || break
    sleep 0.1
done
grep -q 'Ctrl-C to stop' "$WORK/sim.log" || { cat "$WORK/sim.log" >&2; echo "the simulator did not start" >&2; exit 1; }

log "recording $DELTAS deltas"
REC=$WORK/rec.jsonl
start=$(date +%s%N)
HOME=$WORK/home "$K" --kubeconfig "$KC" pods -A -o name --max-events "$DELTAS" \
    --record "$REC" >/dev/null
recorded_ms=$((($(date +%s%N) - start) / 1000000))
stop_sim

log "writing the page"
PAGE=$WORK/page.html
/usr/bin/time -f '%e %M' -o "$WORK/time" "$K" replay "$REC" --timeline "$PAGE" 2>"$WORK/replay.log"
read -r write_s write_kib <"$WORK/time"
[ -z "${TIMELINE_KEEP-}" ] || cp "$PAGE" "$TIMELINE_KEEP/"

log "loading it $RUNS times in headless Chromium"
KWATCH_TIMELINE_PAGE=$PAGE KWATCH_TIMELINE_RUNS=$RUNS \
    cargo test --locked --test integration timeline::timeline_page_load -- \
    --ignored --exact --nocapture 2>/dev/null | grep '^timeline-load ' >"$WORK/loads"
loads=$(sed 's/^timeline-load //' "$WORK/loads" | python3 -c '
import json, sys
ms = sorted(json.loads(l)["loadMs"] for l in sys.stdin)
print(" ".join(f"{m:.0f}" for m in ms))')
deltas=$(sed -n 's/^timeline-load //p' "$WORK/loads" | head -1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["totals"]["deltas"])')
median=$(echo "$loads" | tr ' ' '\n' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')

OUT=$ROOT/benches/timeline.tsv
{
    printf 'measure\tvalue\n'
    printf 'deltas\t%s\n' "$deltas"
    printf 'recording_bytes\t%s\n' "$(stat -c %s "$REC")"
    printf 'recording_ms\t%s\n' "$recorded_ms"
    printf 'page_bytes\t%s\n' "$(stat -c %s "$PAGE")"
    printf 'page_write_seconds\t%s\n' "$write_s"
    printf 'page_write_peak_rss_kib\t%s\n' "$write_kib"
    printf 'load_ms_each\t%s\n' "$loads"
    printf 'load_ms_median\t%s\n' "$median"
    printf 'chromium\t%s\n' "$(chromium --version 2>/dev/null)"
} >"$OUT"
cat "$OUT"
