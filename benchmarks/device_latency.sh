#!/usr/bin/env bash
# One device call on a single-GPU machine for #21's latency figures: BFS on luxembourg_osm and
# the 4096^2 grid against GAP's bfs at 1 and 16 threads on the identical graphs
# (bench_latency.py; GAP built here from the carried source), then an A/B against the code
# before (ab_versions.py: Kronecker graphs unchanged?, the road network and the grid faster?).
# Carry: .whl, .data (luxembourg_osm.mtx.gz), .gapbs (GAP's source, device_sssp.sh says how),
# .before (`git archive REV distbfs kernels | tar -x -C .before`). Logs and JSON in $OUT.
#   run with: bash benchmarks/device_latency.sh     (SKIP_AB=1: the first part alone)
set -uo pipefail
source benchmarks/device_env.sh
GAP_DIR=${GAP_DIR:-.gapbs}
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
make -B -C "$GAP_DIR" -j"$(nproc)" bfs converter >"$OUT/gap_build.log" 2>&1 || {
  tail -n 20 "$OUT/gap_build.log"; exit 1; }

echo "== BFS on high-diameter graphs against GAP's bfs"
timeout "${LATENCY_TIMEOUT:-240}" python3 benchmarks/bench_latency.py --gap-dir "$GAP_DIR" \
  --json "$OUT/latency.json" ${LATENCY_ARGS:-} 2>&1 | tee "$OUT/latency.log"

if [ "${SKIP_AB:-0}" != 1 ]; then
  echo "== A/B against the code before"
  timeout "${AB_TIMEOUT:-300}" python3 benchmarks/ab_versions.py --before .before --after . \
    --graphs ${AB_GRAPHS:-kron24 kron26 luxembourg grid2d} --rounds ${AB_ROUNDS:-2} \
    --roots ${AB_ROOTS:-16} --json "$OUT/ab.json" 2>&1 | tee "$OUT/ab.log"
fi
