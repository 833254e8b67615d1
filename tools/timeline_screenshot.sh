#!/usr/bin/env bash
# Makes docs/timeline.png, the README's picture of a --timeline page: a relist storm
# across three simulated clusters, recorded and replayed to a page, screenshot in headless
# Chromium with one update selected (the page's `#delta=ID` address), its colours reduced
# with pngquant when it is there (the PNG stays under 300 kB).
#
#   tools/timeline_screenshot.sh [KWATCH]   # default: target/debug/kwatch
#
# The storm: pods churning in kwatch-sim-1..3 (`kwatch sim --clusters 3`), 410 relists in
# all three at once (history compacted while the watches were held), a watch's connection
# cut in kwatch-sim-2, a stalled watch in kwatch-sim-3 (`--stall-after 2s`), more 410s.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
K=$(realpath "${1:-$ROOT/target/debug/kwatch}")
OUT=$ROOT/docs/timeline.png
WORK=$(mktemp -d)
SIM=
cleanup() { [ -z "$SIM" ] || kill "$SIM" 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
KC=$WORK/kc
"$K" sim --clusters 3 --objects 40 --churn 6 --write-kubeconfig "$KC" 2>"$WORK/sim.log" &
SIM=$!
for _ in $(seq 300); do grep -q current-context "$KC" 2>/dev/null && break; sleep 0.1; done
server() { awk -v c="kwatch-sim-$1" '$3 == c {f=1} f && /server:/ {print $2; exit}' "$KC"; }
token() { awk -v c="kwatch-sim-$1" '/^users:/ {u=1} u && $3 == c {f=1} f && /token:/ {print $2; exit}' "$KC"; }
ctl() { curl -sfk -o /dev/null -X POST -H "Authorization: Bearer $(token "$1")" -d "${3:-{\}}" "$(server "$1")/_sim/$2"; }
# A 410 by construction: watches held, history compacted past them, watches released.
expire() { ctl "$1" stall '{"until":"released"}'; sleep 0.7; ctl "$1" compact; ctl "$1" release '{"fault":"stall"}'; }
# expire in these clusters at once.
storm() { local pids=() c; for c in "$@"; do expire "$c" & pids+=($!); done; wait "${pids[@]}"; }
HOME=$WORK KUBECONFIG=$KC "$K" pods -A --all-contexts --stall-after 2s -o name \
    --record "$WORK/storm.jsonl" >/dev/null 2>"$WORK/kwatch.log" &
KW=$!
sleep 5
storm 1 2 3
sleep 3; ctl 2 drop-watches
sleep 2; ctl 3 stall '{"seconds":5}'
sleep 7; storm 1 2
sleep 3; ctl 1 drop-watches
sleep 3; storm 1 2 3
sleep 4
kill -INT "$KW"; wait "$KW" || true
"$K" replay "$WORK/storm.jsonl" --timeline "$WORK/storm.html"
# The first update with a diff a quarter into the recording: its details on the right.
pick=$(python3 - "$WORK/storm.html" <<'PY'
import base64, gzip, json, re, sys
page = open(sys.argv[1]).read()
d = json.loads(gzip.decompress(base64.b64decode(re.search(r'gzip\+base64">(.*?)</script>', page, re.S).group(1))))
x, t = d["deltas"]["x"], d["deltas"]["t"]
print(next((i for i in range(len(t)) if x[i] >= 0 and t[i] > d["end"] / 2.5), 0))
PY
)
chromium --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
    --disable-component-update --disable-sync --user-data-dir="$WORK/profile" \
    --window-size=1500,900 --hide-scrollbars --virtual-time-budget=3000 \
    --screenshot="$WORK/shot.png" "file://$WORK/storm.html#delta=$pick" 2>/dev/null
if command -v pngquant >/dev/null; then
    pngquant --quality 70-95 --speed 1 --force --output "$OUT" "$WORK/shot.png"
else
    cp "$WORK/shot.png" "$OUT"
fi
echo "wrote $OUT ($(stat -c %s "$OUT") bytes)"
