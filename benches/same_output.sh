#!/usr/bin/env bash
# Same output: two kwatch binaries print the same bytes for the same records, in every
# format and view. For a change that must not change what users see (a refactor), run
# with the binary before and the binary after:
#
#   benches/same_output.sh BEFORE AFTER
#
# 1. R: BEFORE records a churning watch of realistic pods (`kwatch sim --pod-size
#    realistic`, SAME_PODS pods, SAME_EVENTS watch events) with --record; both binaries
#    replay the recording in every format and view (`kwatch replay` prints the records'
#    own times, so the bytes must be equal). A replay renders through the same printers
#    as a watch.
# 2. L: both binaries watch the same idle simulator (no churn) to its sync, in every
#    format, over both wires; the records' `time` fields and the table's AGE column (the
#    clock's) and the lists' durations are masked, every other byte compared. --stats'
#    elapsed time is masked in R.
#
# Prints one line per comparison (`same` or `DIFFERENT` with the first differing line)
# and exits 1 if any differs. Needs python3 (the masks). Only loopback is used.
set -euo pipefail
cd "$(dirname "$0")/.."
BEFORE=$(realpath "$1")
AFTER=$(realpath "$2")
PODS=${SAME_PODS:-2000}
EVENTS=${SAME_EVENTS:-2000}
WORK=$(mktemp -d)
SIM_PID=
cleanup() {
    [ -n "$SIM_PID" ] && kill "$SIM_PID" 2>/dev/null && wait "$SIM_PID" 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

start_sim() { # start_sim ARGS...: a simulator of BEFORE's, its kubeconfig in $WORK/kc
    rm -f "$WORK/kc"
    "$BEFORE" sim --port 0 --objects "$PODS" --pod-size realistic --write-kubeconfig "$WORK/kc" "$@" \
        >/dev/null 2>"$WORK/sim.err" &
    SIM_PID=$!
    for _ in $(seq 1 600); do [ -s "$WORK/kc" ] && return; sleep 0.1; done
    echo "the simulator did not start: $(cat "$WORK/sim.err")" >&2
    exit 2
}
stop_sim() { kill "$SIM_PID" 2>/dev/null; wait "$SIM_PID" 2>/dev/null || true; SIM_PID=; }

FAILED=0
compare() { # compare NAME FILE_BEFORE FILE_AFTER
    if cmp -s "$2" "$3"; then
        echo "same       $1 ($(wc -c <"$2") bytes)"
    else
        FAILED=1
        echo "DIFFERENT  $1: $(diff "$2" "$3" | head -3 | tr '\n' ' ')"
    fi
}

FORMATS=(table wide json yaml name watch-events
    'custom-columns=NAME:.metadata.name,NODE:.spec.nodeName,RV:.metadata.resourceVersion'
    'jsonpath={.metadata.namespace}/{.metadata.name} {.status.phase}')

# R: a recording, replayed by both.
start_sim --churn 200 --seed 7
KUBECONFIG="$WORK/kc" "$BEFORE" pods -A -o name --record "$WORK/rec.jsonl" \
    --max-events "$((PODS + EVENTS))" >/dev/null 2>&1 || true
stop_sim
echo "R: $(wc -l <"$WORK/rec.jsonl") records, $(wc -c <"$WORK/rec.jsonl") bytes"
replay() { # replay NAME ARGS...
    local name=$1
    shift
    "$BEFORE" replay "$WORK/rec.jsonl" "$@" >"$WORK/b" 2>"$WORK/be" || true
    "$AFTER" replay "$WORK/rec.jsonl" "$@" >"$WORK/a" 2>"$WORK/ae" || true
    # The replay's own duration, under --stats.
    sed -i 's/^  elapsed: .*/  elapsed: E/' "$WORK/be" "$WORK/ae"
    compare "R $name stdout" "$WORK/b" "$WORK/a"
    compare "R $name stderr" "$WORK/be" "$WORK/ae"
}
for f in "${FORMATS[@]}"; do replay "-o $f" -o "$f"; done
replay "--show-managed-fields -o json" -o json --show-managed-fields
replay "--diff -o json" -o json --diff
replay "--diff -o table" --diff
replay "--diff-all -o yaml" -o yaml --diff-all
replay "--blame -o json" -o json --blame
replay "--blame -o table" --blame
replay "--view handlers -o json" -o json --view handlers
replay "--view handlers -o table" --view handlers
replay "--stats -o name" -o name --stats

# L: a live watch of an idle cluster to its sync, masked where the clock shows.
mask() { # mask FORMAT < stdout > masked
    python3 -c '
import re, sys
fmt = sys.argv[1]
text = sys.stdin.read()
text = re.sub(r"\"time\":\"[^\"]*\"", "\"time\":T", text)
text = re.sub(r"(?m)^time: .*$", "time: T", text)
text = re.sub(r"\"ms\":[0-9.]+", "\"ms\":M", text)
text = re.sub(r"(?m)^ms: [0-9.]+$", "ms: M", text)
if fmt in ("table", "wide"):
    lines = text.splitlines()
    if lines:
        head = lines[0]
        at = head.find(" AGE")
        if at >= 0:
            at += 1
            end = at + 3
            nxt = re.search(r"\S", head[end:])
            end = end + nxt.start() if nxt else None
            out = []
            for l in lines:
                out.append(l[:at] + "~" + (l[end:] if end is not None else ""))
            text = "\n".join(out) + "\n"
sys.stdout.write(text)
' "$1"
}
start_sim --scenario idle
for wire in json protobuf; do
    for f in "${FORMATS[@]}"; do
        KUBECONFIG="$WORK/kc" "$BEFORE" pods -A -o "$f" --wire "$wire" --until-synced >"$WORK/b" 2>/dev/null
        KUBECONFIG="$WORK/kc" "$AFTER" pods -A -o "$f" --wire "$wire" --until-synced >"$WORK/a" 2>/dev/null
        mask "$f" <"$WORK/b" >"$WORK/bm"
        mask "$f" <"$WORK/a" >"$WORK/am"
        compare "L --wire $wire -o $f" "$WORK/bm" "$WORK/am"
    done
done
stop_sim
exit "$FAILED"
