#!/usr/bin/env bash
# One device call on a one-GPU machine: batched BFS against the single searches
# (bench_batched.py: kron22 and kron24, 64 sources, medians of 3 rounds), ROUNDS times this
# checkout alternating with the code before (BEFORE: a folder with another commit's `distbfs`
# and `kernels`, e.g. `mkdir .before && git archive 0a357d4 distbfs kernels | tar -x -C
# .before`; left out when absent), then the per-level table of one batch with phase timers
# (`python3 -m distbfs bench --batched --scale 24`). Logs go to $OUT.
#   run with: bash benchmarks/device_batched.sh        (carry .whl, and .before for the A/B)
set -uo pipefail
source benchmarks/device_env.sh
BEFORE=${BEFORE:-.before}
rounds=${ROUNDS:-3}
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
for round in $(seq 1 "$rounds"); do
  for version in after before; do
    if [ "$version" = before ]; then
      [ -d "$BEFORE/distbfs" ] && [ "$round" -lt "$rounds" ] || continue
      path=$PWD/$BEFORE:/tmp/site
    else
      path=/tmp/site:$PWD
    fi
    echo "== round $round, $version"
    PYTHONPATH=$path timeout 200 python3 benchmarks/bench_batched.py --scales 22 24 --runs 3 \
      --json "$OUT/batched_${version}_$round.json" 2>&1 | tail -n 2
  done
done
echo "== per-level table, kron24"
timeout 120 python3 -m distbfs bench --batched --scale 24 --roots 64 2>&1 | tail -n 12
