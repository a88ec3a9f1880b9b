#!/usr/bin/env bash
# One device call on nvidia-h100-x1 for the traversals beside BFS: their GPU tests (one GPU, and
# two MPI ranks sharing it), batched BFS against single searches (bench_batched.py), then
# connected components against GAP's cc on the identical graphs (bench_cc.py; GAP built here from
# the carried source). Logs and JSON go to $OUT.
# Carry: .whl (pytest-mpi), .data (luxembourg_osm.mtx.gz), .gapbs (prepared as device_sssp.sh says).
#   run with: bash benchmarks/device_traversals.sh
# Parts can be skipped: SKIP_TESTS=1, SKIP_BATCHED=1, SKIP_CC=1; CC_ARGS and BATCHED_ARGS pass
# arguments on (e.g. CC_ARGS="--graphs kron26").
set -uo pipefail
source benchmarks/device_env.sh
GAP_DIR=${GAP_DIR:-.gapbs}
shared=(mpirun --bind-to none -n 2 -x SLURM_GPUS_PER_TASK=1 -x CUDA_VISIBLE_DEVICES=0)
tests=(tests/test_cc.py tests/test_cli_cc.py tests/test_batched.py tests/test_sssp.py
  tests/test_cli_paths.py tests/test_multi_source.py)
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
(make -B -C "$GAP_DIR" -j"$(nproc)" cc converter >"$OUT/gap_build.log" 2>&1; echo $? >"$OUT/gap_build.rc") &

if [ "${SKIP_TESTS:-0}" != 1 ]; then
  echo "== GPU tests of the traversals"
  timeout 200 python3 -m pytest -q -m "gpu and not multi_gpu" -p no:cacheprovider -n 4 \
    --timeout=150 "${tests[@]}" >"$OUT/gpu_tests.log" 2>&1
  echo "pytest exit $?"; grep -E "passed|failed|^FAILED|^ERROR" "$OUT/gpu_tests.log" | tail -n 20
  echo "== the same, two MPI ranks sharing the GPU"
  timeout 120 "${shared[@]}" -x DISTBFS_TEST_COMM=mpi python3 -m pytest -q --with-mpi \
    -m "mpi and gpu and not multi_gpu" -p no:cacheprovider --timeout=100 "${tests[@]}" \
    >"$OUT/gpu_mpi_tests.log" 2>&1
  echo "pytest (2 ranks) exit $?"; grep -E "passed|failed|^FAILED|^ERROR" "$OUT/gpu_mpi_tests.log" | tail -n 12
fi

if [ "${SKIP_BATCHED:-0}" != 1 ]; then
  echo "== batched BFS against single searches"
  timeout 200 python3 benchmarks/bench_batched.py --scales 22 24 --json "$OUT/batched.json" \
    ${BATCHED_ARGS:-} 2>&1 | tee "$OUT/batched.log"
fi

wait
if [ "${SKIP_CC:-0}" != 1 ]; then
  if [ "$(cat "$OUT/gap_build.rc")" != 0 ]; then tail -n 20 "$OUT/gap_build.log"; exit 1; fi
  echo "== connected components against GAP's cc"
  timeout "${CC_TIMEOUT:-300}" python3 benchmarks/bench_cc.py --gap-dir "$GAP_DIR" \
    --gap-trials-serial 1 --work /tmp/ccw --json "$OUT/cc.json" ${CC_ARGS:-} 2>&1 | tee "$OUT/cc.log"
fi
