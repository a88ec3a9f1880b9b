#!/usr/bin/env bash
# One device call on the 4-GPU machine (nvidia-h200-x4, see ../shared/DEVICE.md), under 10
# minutes: what issue #6 asks of `mpirun -n 4 python -m distbfs`.
#   1. the GPU binding of 4 ranks and the multi-GPU tests at 4 ranks; the planted failures
#      (each starts its own 2-rank job: a failing rank must end the job with its message);
#   2. the default main job, `mpirun -n 4 python3 -m distbfs` (no arguments);
#   3. the Graph500-style benchmark at 1, 2 and 4 GPUs (bench_multi_gpu.py; --compare prints
#      strong scaling, weak scaling with 2**26 vertices per GPU, and the targets);
#   4. the single-node Slurm script's command line (slurm/one_node.sbatch), run by hand with
#      mpirun instead of srun: slurm/common.sh's environment, the binding, `python3 -m distbfs
#      bench`;
#   5. the node launcher, `launch/run_node.sh 2 bench` (CUPY_CACHE_DIR kept: no second compile).
#   run with: bash benchmarks/device_four_gpu.sh       (carry .whl: pytest-mpi, ...)
# Environment: BENCH_GRAPHS_1, BENCH_GRAPHS_2, BENCH_GRAPHS_4 (graphs at each GPU count; default
# kron26 kron27 kron28 / kron27 kron28 / kron27 kron28: one rank builds kron28 streamed, within
# one H200's memory), BENCH_GPUS (the GPU counts benchmarked, "1 2 4"), BENCH_STRATEGIES
# (default: hybrid direction_optimizing where the backend has bottom-up kernels), BENCH_ROOTS
# (64), BENCH_VALIDATE (validate the first 16 searches of each graph), BENCH_TIMEOUT (seconds
# per benchmark run: 110, twice that on one GPU), SKIP (steps to leave out, e.g. "tests
# failures slurm launch"), NGPUS (the ranks of steps 1, 2 and 4: 4; 2 on a 2-GPU machine).
set -uo pipefail
source benchmarks/device_env.sh
ngpus=${NGPUS:-4}
mpirun=(mpirun --bind-to none -n "$ngpus")
roots=${BENCH_ROOTS:-64}
validate=${BENCH_VALIDATE:-16}
limit=${BENCH_TIMEOUT:-110}
skip=" ${SKIP:-} "
if [ -z "${BENCH_STRATEGIES:-}" ]; then
  if python3 -c "from distbfs.engine import supports_bottom_up as s; \
from distbfs.backends.cuda.backend import CudaBackend as B; raise SystemExit(not s(B))"; then
    BENCH_STRATEGIES="hybrid direction_optimizing"
  else
    BENCH_STRATEGIES="hybrid"
  fi
fi

device_info "${mpirun[@]}"

if [[ $skip != *" tests "* ]]; then
  echo "== multi-GPU tests ($ngpus ranks)"
  timeout 240 "${mpirun[@]}" python3 -m pytest -q -rs --with-mpi -m "mpi and multi_gpu" \
    -p no:cacheprovider tests/test_multi_gpu.py >"$OUT/tests.log" 2>&1
  echo "pytest ($ngpus ranks) exit $?"
  grep -a -E "^FAILED|passed|failed|error" "$OUT/tests.log" | tail -n 8
fi

if [[ $skip != *" failures "* ]]; then
  echo "== planted failures (2-rank jobs started by pytest)"
  timeout 200 python3 -m pytest -q -rs -m multi_gpu -k failure_on_one_rank -s \
    -p no:cacheprovider tests/test_multi_gpu.py >"$OUT/failures.log" 2>&1
  echo "pytest exit $?"
  grep -a -E "^FAILED|job ended|passed|failed|error" "$OUT/failures.log" | tail -n 6
fi

if [[ $skip != *" main "* ]]; then
  echo "== main job: mpirun -n $ngpus python3 -m distbfs"
  timeout 60 "${mpirun[@]}" python3 -m distbfs >"$OUT/main_job.log" 2>&1
  echo "main job exit $?"
  grep -E "backend|ranks|validat|harmonic_mean_TEPS|error" "$OUT/main_job.log" | head -n 8
fi

if [[ $skip != *" bench "* ]]; then
  echo "== benchmark at ${BENCH_GPUS:-1 2 $ngpus} GPUs, strategies: $BENCH_STRATEGIES"
  jsons=()
  for p in ${BENCH_GPUS:-1 2 $ngpus}; do
    var=BENCH_GRAPHS_$p
    default="kron27 kron28"
    seconds=$limit
    [ "$p" = 1 ] && default="kron26 kron27 kron28" && seconds=$((2 * limit))
    graphs=${!var:-$default}
    launcher=()
    [ "$p" -gt 1 ] && launcher=(mpirun --bind-to none -n "$p")
    # shellcheck disable=SC2086  # word lists on purpose
    timeout "$seconds" "${launcher[@]}" python3 benchmarks/bench_multi_gpu.py --graphs $graphs \
      --strategies $BENCH_STRATEGIES --roots "$roots" --validate-roots "$validate" --levels \
      --json "$OUT/bench_p$p.json" >"$OUT/bench_p$p.log" 2>&1
    echo "$p GPU(s) exit $?"
    grep -a -E "^\| [a-z]|rror" "$OUT/bench_p$p.log" | head -n 12
    [ -f "$OUT/bench_p$p.json" ] && jsons+=("$OUT/bench_p$p.json")
  done
  python3 benchmarks/bench_multi_gpu.py --compare "${jsons[@]}" 2>&1 | tee "$OUT/compare.log"
fi

if [[ $skip != *" slurm "* ]]; then
  echo "== slurm/one_node.sbatch's command line by hand: mpirun instead of srun"
  (
    source slurm/common.sh  # keeps the CUPY_CACHE_DIR set above: no second compile
    DISTBFS_SRUN=("${mpirun[@]}")
    distbfs_show_binding
    timeout 60 "${DISTBFS_SRUN[@]}" "$DISTBFS_PYTHON" -m distbfs bench
  ) >"$OUT/slurm_line.log" 2>&1
  echo "slurm line exit $?"
  grep -E "rank|harmonic_mean_TEPS|validat|error" "$OUT/slurm_line.log" | head -n 8
fi

if [[ $skip != *" launch "* ]]; then
  echo "== launch/run_node.sh 2 bench"
  timeout 90 launch/run_node.sh 2 bench >"$OUT/run_node.log" 2>&1
  echo "run_node.sh exit $?"
  grep -E "rank|harmonic_mean_TEPS|validat|error" "$OUT/run_node.log" | head -n 8
fi
