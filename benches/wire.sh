#!/usr/bin/env bash
# The wire: kwatch's list as JSON and as protobuf, plain and gzipped, on loopback
# and through the simulator's slow link, beside the floors the simulator's own encodings
# allow (curl of the very same requests) and kubectl, on `kwatch sim` over HTTPS. Writes
# benches/wire.tsv (section, client, size, measure, value) and benches/WIRE.md; a log on
# stderr. Nothing here asserts a time.
#
#   benches/wire.sh [KWATCH]   # default: builds release and uses $CARGO_TARGET_DIR/release/kwatch
#
# For each pod size, 10,000 preloaded pods and `pods -A -o json --until-synced --watch-list
# off` to /dev/null: the informer's paged LIST (limit=500 at resourceVersion "0", which
# kube-apiserver and the simulator answer from the watch cache in one page).
#   L: loopback. kwatch `--wire json|protobuf`, each with `--disable-compression` (plain) and
#      without (gzip, as kwatch runs by default); curl replaying the list requests kwatch made
#      (GET /_sim/requests) in one process, with `Accept: application/json` (`pretty=false`)
#      or `application/vnd.kubernetes.protobuf`, plain and `--compressed`: TLS and the
#      transfer, no parsing; `kubectl get pods -A -o json` (JSON, gzip, 500 per page).
#   P: where L's time goes, per encoding: the server's time to the first byte (curl) and
#      kwatch's time for the list itself (its Listed records' ms), beside L's wall.
#   S: the same clients through `POST /_sim/slow-link {"mbps":WIRE_MBPS}` (the server-to-
#      client direction, after gzip and TLS: crates/sim/src/link.rs).
# Figures: wall, CPU, peak RSS (the median run by wall time), the body bytes each encoding
# puts on the wire (curl's size_download), and in S the bytes the link carried per run
# (`bytesPaced` of GET /_sim/state: TLS records, heads and bodies).
#
# Environment:
#   WIRE_SIZES="medium large"   pod sizes (~4.8 and ~12 KB; a genuine cluster's Deployment pods: 7.8 KB)
#   WIRE_SECTIONS="L S"
#   WIRE_RUNS=3                 runs per L figure (kubectl: 1)
#   WIRE_SLOW_RUNS=1            runs per S figure (the link sets the time)
#   WIRE_MBPS=25                the slow link's rate
#   WIRE_CLIENTS="…"            which clients (default: all nine of CLIENTS below)
#   CARGO_TARGET_DIR            where to build when no KWATCH is given (default: target)
#
# The simulator runs on core 0 and each client on core 1 (taskset), as in run.sh.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
SIZES=${WIRE_SIZES:-medium large}
SECTIONS=${WIRE_SECTIONS:-L S}
RUNS=${WIRE_RUNS:-3}
SLOW_RUNS=${WIRE_SLOW_RUNS:-1}
MBPS=${WIRE_MBPS:-25}
bench_kwatch "$@"
bench_need curl kubectl taskset /usr/bin/time python3
bench_work
OUT=$ROOT/benches/wire.tsv
printf 'section\tclient\tsize\tmeasure\tvalue\n' >"$OUT"
rec() { printf '%s\t%s\t%s\t%s\t%s\n' "$@" >>"$OUT"; }

paced() { sim_get state | python3 -c 'import json,sys; print(json.load(sys.stdin)["slowLink"]["bytesPaced"])'; }

# list_paths: the pod list requests (not watches) kwatch makes, as the request log shows them.
list_paths() {
    local from
    from=$(sim_get requests | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["requests"]))')
    HOME=$WORK/home "$K" pods -A -o json --until-synced --watch-list off --kubeconfig "$KC" >/dev/null
    sim_get requests | python3 -c '
import json, sys
for r in json.load(sys.stdin)["requests"][int(sys.argv[1]):]:
    p = r["path"]
    if p.startswith("/api/v1/pods") and "watch=" not in p:
        print(p)' "$from"
}

# curl_cmd ACCEPT [--compressed]: into CMD, one curl fetching every list request in turn on
# one connection; into $WORK/urls its URLs.
curl_cmd() {
    local accept=$1 extra=() p sep
    shift
    extra=("$@")
    : >"$WORK/urls"
    for p in "${PATHS[@]}"; do
        sep='?'
        case $p in *'?'*) sep='&' ;; esac
        case $accept in application/json) p="$p${sep}pretty=false" ;; esac
        echo "url = \"$URL$p\"" >>"$WORK/urls"
        echo 'output = "/dev/null"' >>"$WORK/urls"
    done
    CMD=(curl -sfk -A bench -H "Authorization: Bearer $TOKEN" -H "Accept: $accept"
        ${extra[@]+"${extra[@]}"} -K "$WORK/urls")
}

# The clients of L and S: name, then how to make CMD.
CLIENTS=${WIRE_CLIENTS:-curl-json curl-json+gzip curl-protobuf curl-protobuf+gzip kwatch-json kwatch-json+gzip kwatch-protobuf kwatch-protobuf+gzip kubectl}
client_cmd() {
    local kw=("$K" pods -A -o json --until-synced --watch-list off --kubeconfig "$KC")
    case $1 in
    curl-json) curl_cmd application/json ;;
    curl-json+gzip) curl_cmd application/json --compressed ;;
    curl-protobuf) curl_cmd application/vnd.kubernetes.protobuf ;;
    curl-protobuf+gzip) curl_cmd application/vnd.kubernetes.protobuf --compressed ;;
    kwatch-json) CMD=("${kw[@]}" --wire json --disable-compression) ;;
    kwatch-json+gzip) CMD=("${kw[@]}" --wire json) ;;
    kwatch-protobuf) CMD=("${kw[@]}" --wire protobuf --disable-compression) ;;
    kwatch-protobuf+gzip) CMD=("${kw[@]}" --wire protobuf) ;;
    kubectl) CMD=(kubectl --kubeconfig "$KC" --request-timeout 0 get pods -A -o json) ;;
    esac
}

# measure SECTION SIZE CLIENT RUNS: RUNS timed runs on core 1 (stdout to /dev/null, a fresh
# HOME: a cold discovery cache); records the median run's wall, CPU and peak RSS.
measure() {
    local section=$1 size=$2 client=$3 runs=$4 before
    client_cmd "$client"
    [ "$client" = kubectl ] && runs=1
    [ "$section" = S ] && before=$(paced)
    : >"$WORK/runs"
    for _ in $(seq "$runs"); do
        rm -rf "$WORK/home" && mkdir -p "$WORK/home"
        t0=$EPOCHREALTIME
        HOME=$WORK/home /usr/bin/time -f '%U %S %M' -o "$WORK/t" \
            taskset -c 1 "${CMD[@]}" >/dev/null || log "$client exited non-zero"
        # Wall to the millisecond (time's %e has ten).
        echo "$(python3 -c "print(round($EPOCHREALTIME - $t0, 4))") $(tail -n1 "$WORK/t")" >>"$WORK/runs"
    done
    read -r wall user sys rss < <(sort -n -k1,1 "$WORK/runs" | awk -v m=$(((runs + 1) / 2)) 'NR == m')
    rec "$section" "$client" "$size" wall_s "$wall"
    rec "$section" "$client" "$size" cpu_s "$(python3 -c "print($user + $sys)")"
    rec "$section" "$client" "$size" peak_rss_mb "$(python3 -c "print(round($rss / 1024, 1))")"
    if [ "$section" = S ]; then
        rec S "$client" "$size" link_bytes "$((($(paced) - before) / runs))"
    fi
    log "$section $size $client: ${wall}s, cpu $user+$sys, rss ${rss} KB"
}

# phases SIZE: where a loopback list's time goes (P). For each encoding, the server's time to
# the first byte of the list requests (curl's time_starttransfer, summed over the requests)
# and kwatch's own time for the list, request to last item (the `ms` of its Listed records,
# output to a file), medians of RUNS runs.
phases() {
    local size=$1 enc accept extra kwatch_client
    for enc in json json+gzip protobuf protobuf+gzip; do
        case $enc in json*) accept=application/json ;; *) accept=application/vnd.kubernetes.protobuf ;; esac
        case $enc in *gzip) extra=(--compressed) ;; *) extra=() ;; esac
        curl_cmd "$accept" ${extra[@]+"${extra[@]}"}
        for _ in $(seq "$RUNS"); do
            "${CMD[@]}" -w '%{time_starttransfer}\n' | awk '{s += $1} END {print s * 1000}'
        done | sort -n | awk -v m=$(((RUNS + 1) / 2)) 'NR == m' >"$WORK/p"
        rec P "curl-$enc" "$size" first_byte_ms "$(cat "$WORK/p")"
        kwatch_client=kwatch-$enc
        client_cmd "$kwatch_client"
        for _ in $(seq "$RUNS"); do
            rm -rf "$WORK/home" && mkdir -p "$WORK/home"
            HOME=$WORK/home taskset -c 1 "${CMD[@]}" >"$WORK/out"
            python3 -c '
import json, sys
print(sum(r["ms"] for r in map(json.loads, open(sys.argv[1])) if r.get("type") == "Listed"))' "$WORK/out"
        done | sort -n | awk -v m=$(((RUNS + 1) / 2)) 'NR == m' >"$WORK/p"
        rec P "$kwatch_client" "$size" list_ms "$(cat "$WORK/p")"
        log "P $size $enc: server's first byte $(awk -F'\t' -v c="curl-$enc" '$1 == "P" && $2 == c {v = $5} END {print v}' "$OUT") ms, kwatch's list $(cat "$WORK/p") ms"
    done
}

# wire_bytes ACCEPT [--compressed]: the body bytes of the list requests with that encoding.
wire_bytes() {
    curl_cmd "$@"
    "${CMD[@]}" -w '%{size_download}\n' | awk '{s += $1} END {print s}'
}

START=$(date +%s)
for size in $SIZES; do
    log "$size pods: 10,000"
    start_sim 10000 "$size"
    mapfile -t PATHS < <(list_paths)
    [ "${#PATHS[@]}" -gt 0 ] || { echo "kwatch made no list request" >&2; exit 1; }
    rec meta list-requests "$size" count "${#PATHS[@]}"
    rec meta list-requests "$size" first "${PATHS[0]}"
    rec bytes json "$size" body_bytes "$(wire_bytes application/json)"
    rec bytes json+gzip "$size" body_bytes "$(wire_bytes application/json --compressed)"
    rec bytes protobuf "$size" body_bytes "$(wire_bytes application/vnd.kubernetes.protobuf)"
    rec bytes protobuf+gzip "$size" body_bytes \
        "$(wire_bytes application/vnd.kubernetes.protobuf --compressed)"
    for section in $SECTIONS; do
        runs=$RUNS
        if [ "$section" = S ]; then
            runs=$SLOW_RUNS
            ctl slow-link "{\"mbps\":$MBPS}"
        fi
        for client in $CLIENTS; do
            measure "$section" "$size" "$client" "$runs"
        done
        [ "$section" = S ] && ctl slow-link '{"mbps":0}'
        [ "$section" = L ] && phases "$size"
    done
    stop_sim
done
rec meta all - seconds "$(($(date +%s) - START))"
rec meta all - mbps "$MBPS"
python3 "$ROOT/benches/wire_report.py" "$OUT" "$ROOT/benches/WIRE.md"
log "wrote benches/WIRE.md in $(($(date +%s) - START)) s"
