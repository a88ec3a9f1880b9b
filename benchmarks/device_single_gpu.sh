#!/usr/bin/env bash
# One device call on a single-GPU machine (see ../shared/DEVICE.md): the GPU tests, the default
# main job on the CUDA backend, then the single-GPU benchmark. Logs go to $OUT.
#   run with: bash benchmarks/device_single_gpu.sh [bench_gpu.py arguments]
# Carry .whl (pytest-mpi, pytest-timeout, hypothesis, sortedcontainers, tqdm wheels for cp312).
set -uo pipefail
source benchmarks/device_env.sh
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
python3 -c "import cupy, numpy; print('cupy', cupy.__version__, 'numpy', numpy.__version__)"

echo "== GPU tests"
timeout 230 python3 -m pytest -q -m "gpu and not multi_gpu" -p no:cacheprovider --timeout=150 tests/ \
  >"$OUT/gpu_tests.log" 2>&1
echo "pytest exit $?"; tail -n 25 "$OUT/gpu_tests.log"

echo "== main job (python -m distbfs, backend auto)"
timeout 80 python3 -m distbfs >"$OUT/main_job.log" 2>&1
echo "main job exit $?"; head -n 12 "$OUT/main_job.log"; grep -E "harmonic|median_time" "$OUT/main_job.log"

echo "== single-GPU benchmark"
timeout ${BENCH_TIMEOUT:-270} python3 benchmarks/bench_gpu.py --json "$OUT/bench_gpu.json" "$@" 2>&1 | tee "$OUT/bench_gpu.log"
