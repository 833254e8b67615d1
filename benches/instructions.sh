#!/usr/bin/env bash
# Instruction counts (valgrind --tool=callgrind) of benchmark sections A and B for one
# kwatch binary, for comparing two trees where wall and CPU times are too noisy (a
# restructuring must stay within 5 %: benches/NOTES.md). Prints a TSV on stdout.
#
#   benches/instructions.sh [KWATCH]   # default: builds release and uses $CARGO_TARGET_DIR/release/kwatch
#
#   A: `pods -A -o json --until-synced --fifo delta --watch-list off|on`, 10k pods, stdout
#      to /dev/null: the whole process's instructions (Ir).
#   B: a watch flood (as run.sh's B: 1000 medium pods, `POST /_sim/flood {"rate":"max"}`),
#      `pods -A -o json --watch-only --fifo delta --watch-list off --max-events N`, run for
#      N = 1 and N = INSTR_EVENTS: instructions per event = the difference of the two totals
#      over the difference of the events (start-up, the initial list, the first event and
#      exit cancel out; N = INSTR_EVENTS/2 or 2·INSTR_EVENTS as the lower or upper run gives
#      the same figure within 0.5 %). The flood makes exactly N events (`"count":N`): an
#      open-ended one runs up to 9,000 events ahead, and how many of those the client had
#      read, decrypted and decoded but not printed when it exited varied the figure by ±25 %
#      from run to run (with the simulator's own binary: INSTR_SIM must know `count`).
#
# Environment:
#   INSTR_SIZES="small medium"  pod sizes of A (none: no section A, B only); `realistic`:
#                               a Deployment's pod half of which is managedFields
#   INSTR_B_SIZE=medium         pod size of B (`none`: no section B)
#   INSTR_FORMATS=              e.g. "name json json-mf yaml wide jsonpath": A (paged LIST
#                               only) and B once per output format (the client named
#                               `kwatch-list+W-o F`…): json-mf is `-o json
#                               --show-managed-fields`, jsonpath prints name and phase,
#                               diff and blame are `-o json --diff` and `-o json --blame`,
#                               table the default table;
#                               unset: `-o json` alone, with A's streaming list
#   INSTR_OBJECTS=10000         pods of A
#   INSTR_EVENTS=20000          events of B's larger run
#   INSTR_TWICE=1               0: no second run of A's first figure and of B (the spread)
#   INSTR_SIM=KWATCH            another binary for the simulator (default: the one measured)
#   INSTR_TIMEOUT=900           seconds allowed per measured run
#   INSTR_FLAGS=                more kwatch flags for every measured run, e.g.
#                               "--metrics 127.0.0.1:0" (the cost per event of a flag)
#   INSTR_WIRES=                e.g. "json protobuf": A and B once per wire (`--wire W`, the
#                               client named `kwatch-list+W`…); unset: no --wire (older trees)
#   CARGO_TARGET_DIR            where to build when no KWATCH is given (default: target)
#
# --fifo delta and --watch-list are always given, so that binaries whose defaults differ
# (the informer follows the server's release) do the same work. Every run gets an
# empty HOME (a cold discovery cache: one discovery request, as in each run of run.sh's A).
# The simulator listens on 127.0.0.1 only. Instruction counts do not depend on the load of
# the machine; the threads' interleaving and TLS make them vary a little (INSTR_TWICE).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
SIZES=${INSTR_SIZES:-small medium}
OBJECTS=${INSTR_OBJECTS:-10000}
EVENTS=${INSTR_EVENTS:-20000}
TWICE=${INSTR_TWICE:-1}
LIMIT=${INSTR_TIMEOUT:-900}
[ "$SIZES" = none ] && SIZES=
read -r -a FLAGS <<<"${INSTR_FLAGS:-}"
read -r -a WIRES <<<"${INSTR_WIRES:-}"
[ ${#WIRES[@]} -gt 0 ] || WIRES=("")
B_SIZE=${INSTR_B_SIZE:-medium}
read -r -a FORMATS <<<"${INSTR_FORMATS:-}"
[ ${#FORMATS[@]} -gt 0 ] || FORMATS=("")

bench_kwatch "$@"
# The simulator runs unpinned (its work is not measured).
SIM_BIN=${INSTR_SIM:-$K}
SIM_CORE=
[ -x "$SIM_BIN" ] || { echo "no kwatch binary at $SIM_BIN" >&2; exit 1; }
bench_need valgrind curl timeout
bench_work
row() { printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$@"; }

# ir OUT KWATCH-ARGS…: runs kwatch under callgrind (stdout to OUT, a fresh HOME) and prints
# its total instruction count; fails unless kwatch exits 0.
ir() {
    local out=$1 rc=0
    shift
    rm -rf "$WORK/home" "$WORK/cg.out"
    mkdir -p "$WORK/home"
    HOME=$WORK/home timeout -k 10 "$LIMIT" valgrind --tool=callgrind \
        --callgrind-out-file="$WORK/cg.out" "$K" "$@" ${FLAGS[@]+"${FLAGS[@]}"} --kubeconfig "$KC" \
        >"$out" 2>"$WORK/vg.log" || rc=$?
    if [ "$rc" != 0 ]; then
        tail -n 20 "$WORK/vg.log" >&2
        echo "kwatch $* exited $rc under callgrind" >&2
        return 1
    fi
    awk '/^(summary|totals):/ {print $2; exit}' "$WORK/cg.out"
}

# wire_args WIRE: into WIRE_ARGS the flag that asks for WIRE (none for ""), into WIRE_NAME
# the suffix of the client's name.
wire_args() {
    WIRE_ARGS=()
    WIRE_NAME=
    if [ -n "$1" ]; then
        WIRE_ARGS=(--wire "$1")
        WIRE_NAME=+$1
    fi
}

# format_args FORMAT: into FORMAT_ARGS the output flags of FORMAT ("": `-o json`), into
# FORMAT_NAME the suffix of the client's name, into FORMAT_COUNT the pattern of a line
# each printed Updated delta makes (empty: not checked).
format_args() {
    FORMAT_NAME=
    [ -n "$1" ] && FORMAT_NAME="-o $1"
    FORMAT_COUNT=
    case $1 in
    "" | json) FORMAT_ARGS=(-o json) FORMAT_COUNT='"type":"Updated"' ;;
    json-mf) FORMAT_ARGS=(-o json --show-managed-fields) FORMAT_COUNT='"type":"Updated"' ;;
    yaml) FORMAT_ARGS=(-o yaml) FORMAT_COUNT='^type: Updated$' ;;
    jsonpath) FORMAT_ARGS=(-o 'jsonpath={.metadata.name}{"\t"}{.status.phase}{"\n"}') ;;
    diff) FORMAT_ARGS=(-o json --diff) FORMAT_COUNT='"type":"Updated"' ;;
    blame) FORMAT_ARGS=(-o json --blame) FORMAT_COUNT='"type":"Updated"' ;;
    table) FORMAT_ARGS=() ;;
    *) FORMAT_ARGS=(-o "$1") ;;
    esac
}

# ---------------------------------------------------------------- A: initial list
section_a() {
    local size=$1 first=$2 wl mode v runs wire format modes=(off on)
    log "A: $OBJECTS pods, $size"
    start_sim "$OBJECTS" "$size"
    [ -n "${FORMATS[0]}" ] && modes=(off)
    for wire in "${WIRES[@]}"; do
        wire_args "$wire"
        for format in "${FORMATS[@]}"; do
            format_args "$format"
            for wl in "${modes[@]}"; do
                mode=list
                [ "$wl" = on ] && mode=stream
                runs=1
                [ "$first" = 1 ] && [ "$wl" = off ] && [ "$TWICE" = 1 ] && runs=2
                for run in $(seq "$runs"); do
                    v=$(ir /dev/null pods -A "${FORMAT_ARGS[@]}" --until-synced --fifo delta \
                        --watch-list "$wl" ${WIRE_ARGS[@]+"${WIRE_ARGS[@]}"})
                    row A "kwatch-$mode$WIRE_NAME$FORMAT_NAME" "$OBJECTS" "$size" Ir "run$run" "$v"
                    log "A: kwatch-$mode$WIRE_NAME$FORMAT_NAME $size run $run: $v"
                done
            done
        done
    done
    stop_sim
}

# ---------------------------------------------------------------- B: sustained watch
# watch_ir N: instructions of a watch-only run printing N flood events (checked).
watch_ir() {
    local n=$1 v got
    ctl flood "{\"rate\":\"max\",\"count\":$n}"
    v=$(ir "$WORK/b.out" pods -A "${FORMAT_ARGS[@]}" --watch-only --fifo delta --watch-list off \
        --max-events "$n" ${WIRE_ARGS[@]+"${WIRE_ARGS[@]}"}) || return 1
    ctl flood '{"rate":0}'
    if [ -n "$FORMAT_COUNT" ]; then
        got=$(grep -c -- "$FORMAT_COUNT" "$WORK/b.out" || true)
        [ "$got" = "$n" ] || { echo "B: $got Updated deltas, $n expected" >&2; return 1; }
    fi
    echo "$v"
}

section_b() {
    local runs=1 run lo hi per wire format client
    [ "$TWICE" = 1 ] && runs=2
    log "B: 1000 $B_SIZE pods, watch flood, 1 and $EVENTS events"
    start_sim 1000 "$B_SIZE" --history 50000
    for wire in "${WIRES[@]}"; do
        wire_args "$wire"
        for format in "${FORMATS[@]}"; do
            format_args "$format"
            client="kwatch-json$WIRE_NAME"
            [ -n "$format" ] && client="kwatch$WIRE_NAME$FORMAT_NAME"
            for run in $(seq "$runs"); do
                lo=$(watch_ir 1)
                hi=$(watch_ir "$EVENTS")
                per=$(((hi - lo) / (EVENTS - 1)))
                row B "$client" 1000 "$B_SIZE" Ir@1 "run$run" "$lo"
                row B "$client" 1000 "$B_SIZE" "Ir@$EVENTS" "run$run" "$hi"
                row B "$client" 1000 "$B_SIZE" Ir/event "run$run" "$per"
                log "B: $client run $run: $lo, $hi: $per per event"
            done
        done
    done
    stop_sim
}

printf 'section\tclient\tpods\tsize\tmeasure\trun\tvalue\n'
first=1
for size in $SIZES; do
    section_a "$size" "$first"
    first=0
done
[ "$B_SIZE" = none ] || section_b
