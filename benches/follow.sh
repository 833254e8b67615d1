#!/usr/bin/env bash
# What `--follow` costs in memory, on `kwatch sim --objects 2N` (which puts half
# of its pods in `default`, all owned by the ReplicaSet of the seeded Deployment `web`, and
# half in `team-a`): N = 10,000 pods in the namespace by default. Peak
# RSS (VmHWM, /usr/bin/time's %M) of kwatch to its sync, `-o json` to /dev/null, for:
#
#   pods              `pods -n default`: the pods watched, the baseline
#   watch-three       `deployments,replicasets,pods -n default`: what a user runs without
#                     --follow (the three informers --follow starts, nothing filtered)
#   follow-web        `deploy/web -n default --follow`: the Deployment, its ReplicaSet
#                     and its N pods in the graph (three informers)
#   follow-other      `deploy/other -n default --follow`, a Deployment that owns nothing:
#                     every pod held, their owners never joining
#
# Writes benches/follow.tsv (client, run, peak RSS KiB) and prints the medians. Nothing here
# asserts a figure.
#
#   benches/follow.sh [KWATCH]   # default: builds release, $CARGO_TARGET_DIR/release/kwatch
#
# Environment: FOLLOW_N=10000 pods, FOLLOW_RUNS=3 runs each, CARGO_TARGET_DIR.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
N=${FOLLOW_N:-10000}
RUNS=${FOLLOW_RUNS:-3}
bench_kwatch "$@"
bench_need kubectl /usr/bin/time
bench_work
SIM_CORE=
start_sim "$((2 * N))" - --churn 0
export KUBECONFIG=$KC
kubectl apply -f - >&2 <<'EOF'
{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "other", "namespace": "default"},
 "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "other"}},
  "template": {"metadata": {"labels": {"app": "other"}},
   "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
EOF
OUT=benches/follow.tsv
printf 'client\trun\tpeak_rss_kib\n' >"$OUT"
run() {
    local name=$1
    shift
    for r in $(seq "$RUNS"); do
        /usr/bin/time -f %M -o "$WORK/rss" "$K" "$@" --until-synced -o json >/dev/null
        printf '%s\t%s\t%s\n' "$name" "$r" "$(tail -1 "$WORK/rss")" >>"$OUT"
    done
}
run pods pods -n default
run watch-three deployments,replicasets,pods -n default
run follow-web deploy/web -n default --follow
run follow-other deploy/other -n default --follow
echo "peak RSS (median of $RUNS), $N pods:"
for c in pods watch-three follow-web follow-other; do
    m=$(awk -F'\t' -v c="$c" '$1==c {print $3}' "$OUT" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
    printf '  %-13s %8s KiB\n' "$c" "$m"
done
