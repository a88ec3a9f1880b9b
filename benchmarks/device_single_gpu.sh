#!/usr/bin/env bash
# One device call on a single-GPU machine (see ../shared/DEVICE.md): the GPU tests, the default
# main job on the CUDA backend, two ranks sharing the GPU, then the single-GPU benchmark. Logs go
# to $OUT.
#   run with: bash benchmarks/device_single_gpu.sh [bench_gpu.py arguments]
# Carry .whl (pytest-mpi, pytest-timeout, hypothesis, sortedcontainers, tqdm wheels for cp312).
set -uo pipefail
source benchmarks/device_env.sh
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
python3 -c "import cupy, numpy; print('cupy', cupy.__version__, 'numpy', numpy.__version__)"

echo "== GPU tests"
timeout 300 python3 -m pytest -q -m "gpu and not multi_gpu" -p no:cacheprovider --timeout=150 tests/ \
  >"$OUT/gpu_tests.log" 2>&1
echo "pytest exit $?"; tail -n 25 "$OUT/gpu_tests.log"

echo "== main job (python -m distbfs, backend auto)"
timeout 80 python3 -m distbfs >"$OUT/main_job.log" 2>&1
echo "main job exit $?"; head -n 12 "$OUT/main_job.log"; grep -E "harmonic|median_time" "$OUT/main_job.log"

echo "== two ranks sharing the GPU (the multi-rank CUDA path, MPI transport), validated"
# Each task is told it has a GPU of its own (as under srun --gpus-per-task), the same one: this
# runs the striped levels, the two meeting bins and the exchange, not their speed.
for strategy in two_phase direction_optimizing; do
  timeout 90 mpirun --bind-to none -n 2 -x SLURM_GPUS_PER_TASK=1 -x CUDA_VISIBLE_DEVICES=0 \
    python3 -m distbfs bench --backend cuda --comm mpi --scale 21 --roots 8 --predecessors \
    --strategy "$strategy" >"$OUT/shared_gpu_$strategy.log" 2>&1
  echo "$strategy: exit $?, $(grep -E "^validation" "$OUT/shared_gpu_$strategy.log")"
done

echo "== single-GPU benchmark"
timeout ${BENCH_TIMEOUT:-270} python3 benchmarks/bench_gpu.py --json "$OUT/bench_gpu.json" "$@" 2>&1 | tee "$OUT/bench_gpu.log"
