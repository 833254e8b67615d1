#!/usr/bin/env bash
# --freshness on the simulator: the lag unstalled (median of the samples), how the lag
# grows with a stalled watch and how soon after the release it falls back under 100 ms,
# and what sampling costs the server (requests per second, the simulator's CPU seconds with
# and without it over the same time). Prints `name<TAB>value` lines.
#
#   benches/freshness.sh [KWATCH]   # default: $CARGO_TARGET_DIR/release/kwatch (build it first)
#
# Environment: FRESH_SECONDS=30 (each measured run), FRESH_CHURN=20 (changes per second),
# FRESH_STALL=5 (seconds the watches are held).
set -euo pipefail
cd "$(dirname "$0")/.."
KWATCH=${1:-${CARGO_TARGET_DIR:-target}/release/kwatch}
SECONDS_RUN=${FRESH_SECONDS:-30}
CHURN=${FRESH_CHURN:-20}
STALL=${FRESH_STALL:-5}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

"$KWATCH" sim --write-kubeconfig "$work/kc" --scenario steady --churn "$CHURN" >"$work/sim.log" 2>&1 &
sim=$!
for _ in $(seq 100); do [ -s "$work/kc" ] && break; sleep 0.1; done
server=$(awk '/server:/ {print $2; exit}' "$work/kc")
token=$(awk '/token:/ {print $2; exit}' "$work/kc")
control() { curl -sk -H "Authorization: Bearer $token" -X POST "$server/_sim/$1" -d "$2" >/dev/null; }
cpu() { awk '{print $14 + $15}' "/proc/$sim/stat"; }
hz=$(getconf CLK_TCK)

# The server's CPU over SECONDS_RUN with one watching kwatch, without and with sampling.
for flags in "" "--freshness"; do
  before=$(cpu)
  timeout "$SECONDS_RUN" "$KWATCH" --kubeconfig "$work/kc" pods -A -o json $flags >"$work/out.json" 2>/dev/null || true
  after=$(cpu)
  printf 'sim_cpu_seconds%s\t%s\n' "${flags:+_freshness}" "$(awk -v a="$after" -v b="$before" -v hz="$hz" 'BEGIN {printf "%.2f", (a - b) / hz}')"
done
python3 - "$work/out.json" "$SECONDS_RUN" <<'PY'
import json, sys, statistics
lags = [r["lagMs"] for r in map(json.loads, open(sys.argv[1])) if r.get("type") == "Freshness"]
print(f"samples_per_second\t{len(lags) / float(sys.argv[2]):.2f}")
print(f"lag_median_ms\t{statistics.median(lags):.3f}")
print(f"lag_p90_ms\t{sorted(lags)[int(len(lags) * 0.9) - 1]:.3f}")
PY

# A stall: the lag grows; after the release, when it is under 100 ms again.
"$KWATCH" --kubeconfig "$work/kc" pods -A -o json --freshness=100ms >"$work/stall.json" 2>/dev/null &
kw=$!
sleep 3
control stall '{"until":"released"}'
sleep "$STALL"
released=$(date +%s.%N)
control release '{"fault":"stall"}'
sleep 4
kill "$kw"
python3 - "$work/stall.json" "$released" <<'PY'
import json, sys, datetime
released = float(sys.argv[2])
recs = [r for r in map(json.loads, open(sys.argv[1])) if r.get("type") == "Freshness"]
def t(r):
    return datetime.datetime.fromisoformat(r["time"].replace("Z", "+00:00")).timestamp()
held = [r["lagMs"] for r in recs if t(r) < released]
print(f"lag_at_release_ms\t{max(held):.0f}")
back = next(t(r) - released for r in recs if t(r) >= released and r["lagMs"] < 100)
print(f"under_100ms_after_release_s\t{back:.3f}")
PY
