#!/usr/bin/env bash
# One device call on nvidia-h100-x1 for compressed columns on the GPU: the GPU tests of
# compressed and host-resident graphs and of the stages whose kernels decode rows (one rank,
# then two ranks sharing the GPU), then kron$SCALE searched plain and compressed from the same
# roots, alternating (bench_compressed_search.py). Logs and JSON go to $OUT.
# Carry: .whl (pytest-mpi, ...), .data (the real graphs some tests read).
#   run with: bash benchmarks/device_compressed.sh
# Environment: SCALE (27), ROOTS (16), REPEATS (2), STRATEGIES ("direction_optimizing hybrid"),
# TESTS (the test files).
set -uo pipefail
source benchmarks/device_env.sh
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader

echo "== GPU tests: compressed, placement, direction-optimizing, CUDA stages"
timeout 300 python3 -m pytest -q -m "gpu and not multi_gpu" -p no:cacheprovider --timeout=200 \
  ${TESTS:-tests/test_compressed.py tests/test_placement.py tests/test_direction_optimizing.py \
  tests/test_cuda.py} >"$OUT/tests.log" 2>&1
echo "pytest exit $?"; grep -E "passed|failed|^FAILED|^ERROR" "$OUT/tests.log" | tail -n 12

echo "== two ranks sharing the GPU: every traversal on compressed rows"
timeout 200 mpirun --bind-to none -n 2 -x SLURM_GPUS_PER_TASK=1 -x CUDA_VISIBLE_DEVICES=0 \
  -x DISTBFS_TEST_COMM=mpi python3 -m pytest -q --with-mpi -m gpu -p no:cacheprovider \
  tests/test_compressed.py -k every_traversal >"$OUT/tests_mpi.log" 2>&1
echo "mpirun exit $?"; grep -aE "passed|failed|^FAILED|^ERROR" "$OUT/tests_mpi.log" | tail -n 6

echo "== kron${SCALE:-27}: plain against compressed, same roots, alternating"
timeout 400 python3 benchmarks/bench_compressed_search.py --scale "${SCALE:-27}" \
  --roots "${ROOTS:-16}" --repeats "${REPEATS:-2}" \
  --strategies ${STRATEGIES:-direction_optimizing hybrid} \
  --json "$OUT/compressed_search.json" 2>&1 | tee "$OUT/compressed_search.log" | tail -n 12
