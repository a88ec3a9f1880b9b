#!/usr/bin/env bash
# One device call on the 2-GPU machine (nvidia-h200-x2, see ../shared/DEVICE.md), under 8 minutes:
# the GPU binding, the multi-GPU tests (2 ranks), the planted-failure tests, a 2-GPU job through
# launch/run_node.sh, then the scaling benchmark on 1 and 2 GPUs and the comparison. Logs in $OUT.
#   run with: bash benchmarks/device_multi_gpu.sh          (carry .whl: pytest-mpi, ...)
# Environment: BENCH_GRAPHS (default: kron24 kron26 kron27 uniform25 grid2d), BENCH_ROOTS
# (64 searches per graph), BENCH_VALIDATE (validate the first 16 of them: all 64 at scale 27 take
# longer than this call has), BENCH_ARGS (more bench_multi_gpu.py arguments, e.g.
# "--counts host"), BENCH_TIMEOUT (seconds per benchmark run, 120).
set -uo pipefail
source benchmarks/device_env.sh
mpirun=(mpirun --bind-to none -n 2)
graphs=${BENCH_GRAPHS:-kron24 kron26 kron27 uniform25 grid2d}  # weak: kron26 x1 vs kron27 x2
roots=${BENCH_ROOTS:-64}
validate=${BENCH_VALIDATE:-16}
limit=${BENCH_TIMEOUT:-120}

device_info "${mpirun[@]}"
"${mpirun[@]}" python3 -c "from distbfs.comm.mpi_gpu import mpi_cuda_aware; \
from mpi4py import MPI; print('rank', MPI.COMM_WORLD.rank, 'CUDA-aware MPI:', mpi_cuda_aware())" \
  2>&1 | tee -a "$OUT/info.log"

echo "== multi-GPU tests (2 ranks)"
timeout 120 "${mpirun[@]}" python3 -m pytest -q -rs --with-mpi -m "mpi and multi_gpu" \
  -p no:cacheprovider tests/test_multi_gpu.py >"$OUT/tests.log" 2>&1
echo "pytest (2 ranks) exit $?"
echo "== planted failures (each launches its own 2-rank job)"
timeout 75 python3 -m pytest -q -rs -s -m "multi_gpu and not mpi" -p no:cacheprovider \
  tests/test_multi_gpu.py >>"$OUT/tests.log" 2>&1
echo "pytest (failures) exit $?"
grep -E "passed|failed|error|job ended" "$OUT/tests.log" | tail -n 8

echo "== 2-GPU job through launch/run_node.sh"
timeout 40 bash launch/run_node.sh 2 bench --backend cuda --comm nccl --scale 20 --roots 8 -q \
  --json "$OUT/main_job.json" >"$OUT/main_job.log" 2>&1
echo "run_node exit $?"
grep -E "backend|validation|harmonic_mean_TEPS|error" "$OUT/main_job.log"

echo "== benchmark: 1 GPU, then 2 GPUs"
p1_graphs=${graphs//weak26/}  # weak26 at one GPU is kron26 (compare reads it off that row)
# shellcheck disable=SC2086  # word lists on purpose
timeout "$limit" python3 benchmarks/bench_multi_gpu.py --graphs $p1_graphs --roots "$roots" \
  --validate-roots "$validate" ${BENCH_ARGS:-} --json "$OUT/bench_p1.json" >"$OUT/bench.log" 2>&1
echo "1 GPU exit $?"
# shellcheck disable=SC2086
timeout "$limit" "${mpirun[@]}" python3 benchmarks/bench_multi_gpu.py --graphs $graphs \
  --roots "$roots" --validate-roots "$validate" --levels ${BENCH_ARGS:-} \
  --json "$OUT/bench_p2.json" >>"$OUT/bench.log" 2>&1
echo "2 GPUs exit $?"
python3 benchmarks/bench_multi_gpu.py --compare "$OUT/bench_p1.json" "$OUT/bench_p2.json" \
  2>&1 | tee -a "$OUT/bench.log"
grep -E "^\| |communicator" "$OUT/bench.log" | head -n 40
