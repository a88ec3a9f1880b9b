#!/usr/bin/env bash
# One device call on nvidia-h100-x1 for graphs larger than a GPU's memory: the GPU tests of
# compressed and host-resident graphs, what compression makes of Kronecker scales 26-28
# (bench_compressed.py, counted on the GPU), then kron27 searched with its columns in host memory
# (--graph-memory host) against the same graph on the device, in the same call. Logs and JSON
# go to $OUT. Carry: .whl (pytest-mpi, ...), .data (the real graphs some tests read).
#   run with: bash benchmarks/device_placement.sh
# Environment: SCALE (the searched graph, 27), ROOTS (16), RATIO_SCALES ("26 27 28").
set -uo pipefail
source benchmarks/device_env.sh
scale=${SCALE:-27}
roots=${ROOTS:-16}
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader

echo "== GPU tests of compressed and host-resident graphs"
timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider --timeout=120 \
  tests/test_placement.py tests/test_compressed.py >"$OUT/tests.log" 2>&1
echo "pytest exit $?"; grep -E "passed|failed|^FAILED|^ERROR" "$OUT/tests.log" | tail -n 8

echo "== compressed columns of Kronecker graphs (counted on the GPU)"
timeout 200 python3 benchmarks/bench_compressed.py --scales ${RATIO_SCALES:-26 27 28} \
  --json "$OUT/compressed.json" 2>&1 | tee "$OUT/compressed.log"

echo "== kron$scale, direction-optimizing: columns on the device, then in host memory"
for memory in device host device host; do
  timeout 150 python3 -m distbfs bench --backend cuda --scale "$scale" --roots "$roots" \
    --strategy direction_optimizing --graph-memory "$memory" \
    --json "$OUT/kron${scale}_$memory.json" >"$OUT/kron${scale}_$memory.log" 2>&1
  echo "$memory: exit $?, $(grep -E "harmonic_mean_TEPS|^validation" \
    "$OUT/kron${scale}_$memory.log" | tr -s ' ' | tr '\n' ' ')"
done
