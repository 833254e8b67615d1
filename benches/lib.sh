# Sourced by the benchmark scripts (run.sh, live.sh, instructions.sh, wire.sh, follow.sh):
# what each of them needs done the same way. Nothing here measures.
#
#   bench_kwatch [KWATCH]       K: that binary, or kwatch built release in $CARGO_TARGET_DIR
#                               (default: target)
#   bench_need TOOL…            each one runnable, or exit naming it
#   bench_work                  WORK (a temporary directory, removed at exit with the
#                               simulator), KC (its kubeconfig), WORK/home (a client's HOME)
#   start_sim N SIZE [FLAG…]    an idle simulator with N preloaded pods of SIZE (`-`: the
#                               default pod) and FLAGs, as SIM_BIN (default K) on core
#                               SIM_CORE (default 0; empty: any); sets SIM_PID, TOKEN, URL
#   stop_sim                    stops it
#   sim_get ENDPOINT, ctl ENDPOINT BODY   GET and POST of the control API (`/_sim/…`)
#   log MESSAGE                 a timestamped line on stderr

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

log() { echo "[$(date -u +%H:%M:%S)] $*" >&2; }

bench_kwatch() {
    if [ $# -ge 1 ]; then
        K=$(realpath "$1")
    else
        export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
        cargo build --release --locked --bin kwatch >&2
        K=$CARGO_TARGET_DIR/release/kwatch
    fi
    [ -x "$K" ] || { echo "no kwatch binary at $K" >&2; exit 1; }
}

bench_need() {
    local tool
    for tool in "$@"; do
        command -v "$tool" >/dev/null || { echo "$tool is needed on PATH" >&2; exit 1; }
    done
}

SIM_PID=
bench_cleanup() {
    if [ -n "$SIM_PID" ]; then
        kill "$SIM_PID" 2>/dev/null || true
        wait "$SIM_PID" 2>/dev/null || true
    fi
    rm -rf "$WORK"
}

bench_work() {
    WORK=$(mktemp -d)
    KC=$WORK/kc
    mkdir -p "$WORK/home"
    trap bench_cleanup EXIT
    trap 'exit 130' INT TERM
}

start_sim() {
    local n=$1 size=$2 pin=()
    shift 2
    [ "$size" = - ] || set -- --pod-size "$size" "$@"
    [ -z "${SIM_CORE-0}" ] || pin=(taskset -c "${SIM_CORE-0}")
    rm -f "$KC"
    "${pin[@]}" "${SIM_BIN:-$K}" sim --objects "$n" --scenario idle \
        --write-kubeconfig "$KC" "$@" 2>"$WORK/sim.log" &
    SIM_PID=$!
    for _ in $(seq 1200); do
        [ -s "$KC" ] && break
        kill -0 "$SIM_PID" 2>/dev/null || break
        sleep 0.1
    done
    [ -s "$KC" ] || { cat "$WORK/sim.log" >&2; echo "the simulator did not start" >&2; exit 1; }
    TOKEN=$(awk '/token:/ {print $2}' "$KC")
    URL=$(awk '/server:/ {print $2}' "$KC")
    case $URL in
    https://127.0.0.1:*) ;;
    *) echo "the simulator is not on 127.0.0.1: $URL" >&2; exit 1 ;;
    esac
}

stop_sim() {
    kill "$SIM_PID" 2>/dev/null || true
    wait "$SIM_PID" 2>/dev/null || true
    SIM_PID=
}

sim_get() { curl -sfk -A bench -H "Authorization: Bearer $TOKEN" "$URL/_sim/$1"; }
ctl() { curl -sfk -A bench -H "Authorization: Bearer $TOKEN" -X POST -d "$2" "$URL/_sim/$1" >/dev/null; }
