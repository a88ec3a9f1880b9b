#!/usr/bin/env bash
# One device call on a single-GPU machine (see ../shared/DEVICE.md): the GPU tests, the MPI
# tests on the CUDA backend with two ranks sharing the GPU, the default main job, two validated
# ranks of the command line sharing the GPU, then (unless SKIP_BENCH=1) the single-GPU
# benchmark. Logs go to $OUT.
#   run with: bash benchmarks/device_single_gpu.sh [bench_gpu.py arguments]
# Carry .whl (pytest-mpi for cp312) and .data (the real graphs of ../shared/data).
# Two ranks sharing the GPU: each is told, as under srun --gpus-per-task, that the GPU is its own
# (the same one), and MPI moves the bins (NCCL refuses two ranks on one device). This runs the
# multi-rank CUDA path (striped levels, meeting bins, the exchange), not its speed.
set -uo pipefail
source benchmarks/device_env.sh
shared=(mpirun --bind-to none -n 2 -x SLURM_GPUS_PER_TASK=1 -x CUDA_VISIBLE_DEVICES=0)
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
python3 -c "import cupy, numpy; print('cupy', cupy.__version__, 'numpy', numpy.__version__)"

echo "== GPU tests (TEST_WORKERS processes sharing the GPU, pytest-xdist)"
timeout ${TEST_TIMEOUT:-300} python3 -m pytest -q -m "gpu and not multi_gpu" -p no:cacheprovider \
  -n ${TEST_WORKERS:-4} --timeout=200 tests/ >"$OUT/gpu_tests.log" 2>&1
echo "pytest exit $?"; grep -E "passed|failed|^FAILED|^ERROR" "$OUT/gpu_tests.log" | tail -n 25

echo "== MPI tests on the CUDA backend, two ranks sharing the GPU"
timeout ${MPI_TEST_TIMEOUT:-150} "${shared[@]}" -x DISTBFS_TEST_COMM=mpi python3 -m pytest -q \
  --with-mpi -m "mpi and gpu and not multi_gpu" -p no:cacheprovider --timeout=120 tests/ \
  >"$OUT/gpu_mpi_tests.log" 2>&1
echo "pytest (2 ranks) exit $?"; grep -E "passed|failed|^FAILED|^ERROR" "$OUT/gpu_mpi_tests.log" | tail -n 12

echo "== main job (python -m distbfs, backend auto)"
timeout 80 python3 -m distbfs >"$OUT/main_job.log" 2>&1
echo "main job exit $?"; head -n 12 "$OUT/main_job.log"; grep -E "harmonic|median_time" "$OUT/main_job.log"

echo "== two ranks sharing the GPU (the command line), validated"
for strategy in two_phase direction_optimizing; do
  timeout 90 "${shared[@]}" python3 -m distbfs bench --backend cuda --comm mpi --scale 21 \
    --roots 8 --predecessors --strategy "$strategy" >"$OUT/shared_gpu_$strategy.log" 2>&1
  echo "$strategy: exit $?, $(grep -E "^validation" "$OUT/shared_gpu_$strategy.log")"
done

if [ "${SKIP_BENCH:-0}" != 1 ]; then
  echo "== single-GPU benchmark"
  timeout ${BENCH_TIMEOUT:-270} python3 benchmarks/bench_gpu.py --json "$OUT/bench_gpu.json" "$@" \
    2>&1 | tee "$OUT/bench_gpu.log"
fi
