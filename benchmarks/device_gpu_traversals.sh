#!/usr/bin/env bash
# One device call on nvidia-h200-x2 or -x4 (#22 items 2 and 3): shortest paths (weights 1..255)
# and connected components on kron$SCALE, at each GPU count of RANKS (mpirun, NCCL), each run
# validated by `distbfs bench`; a line per run with its statistics. Logs and JSON in $OUT.
# Carry: .whl.
#   run with: bash benchmarks/device_gpu_traversals.sh       (two GPUs: one, then two)
#             RANKS="1 4" SCALE=28 bash benchmarks/device_gpu_traversals.sh   (four GPUs)
# Environment: ALGORITHMS ("sssp cc"), SCALE (27), RANKS ("1 2"), SSSP_ROOTS (2), CC_RUNS (8),
# LIMIT (seconds a run, 120).
set -uo pipefail
source benchmarks/device_env.sh
scale=${SCALE:-27}
for algorithm in ${ALGORITHMS:-sssp cc}; do
  roots=${SSSP_ROOTS:-2}
  [ "$algorithm" = cc ] && roots=${CC_RUNS:-8}
  for ranks in ${RANKS:-1 2}; do
    launcher=()
    [ "$ranks" -gt 1 ] && launcher=(mpirun --bind-to none -n "$ranks")
    log=$OUT/${algorithm}_p$ranks
    timeout "${LIMIT:-120}" "${launcher[@]}" python3 -m distbfs bench --backend cuda \
      --scale "$scale" --algorithm "$algorithm" --roots "$roots" -q --json "$log.json" \
      >"$log.log" 2>&1
    echo "$algorithm kron$scale on $ranks GPU(s): exit $? $(grep -aE \
      '^(validation|mean_time|harmonic_mean_TEPS|construction_time):' "$log.log" | tr -s ' ' | \
      tr '\n' ' ')"
  done
done
