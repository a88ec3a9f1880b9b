#!/usr/bin/env bash
# One device call on a single-GPU machine: an A/B of this checkout against another version of
# distbfs (AB_BEFORE: a folder holding that version's distbfs/ and kernels/, e.g. carried as
# .before, made by `git archive REV distbfs kernels | tar -x -C .before`), alternating rounds
# (benchmarks/ab_versions.py): one GPU on AB_GRAPHS, then two ranks sharing the GPU on
# AB_GRAPHS_2 (the multi-rank CUDA path; each rank told the GPU is its own, MPI moving the bins).
# Carry .before and .data. Logs and JSON in $OUT.
set -uo pipefail
source benchmarks/device_env.sh
before=${AB_BEFORE:-.before}
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader

echo "== A/B, one GPU"
timeout ${AB_TIMEOUT:-330} python3 benchmarks/ab_versions.py --before "$before" --after . \
  --graphs ${AB_GRAPHS:-kron26 grid2d luxembourg} --rounds ${AB_ROUNDS:-2} \
  --roots ${AB_ROOTS:-32} --json "$OUT/ab_one_gpu.json" 2>&1 | tee "$OUT/ab_one_gpu.log"

echo "== A/B, two ranks sharing the GPU"
timeout ${AB2_TIMEOUT:-200} python3 benchmarks/ab_versions.py --before "$before" --after . \
  --graphs ${AB_GRAPHS_2:-kron24 grid2d} --rounds ${AB_ROUNDS:-2} --roots ${AB_ROOTS:-32} \
  --ranks 2 --json "$OUT/ab_two_ranks.json" 2>&1 | tee "$OUT/ab_two_ranks.log"
