#!/usr/bin/env bash
# One device call on a single-GPU machine for the kernels that decode compressed rows beside
# expansion and bottom-up (#20): delta-stepping and its tree (relax.cu), Afforest's link
# (link.cu), the batched lanes (lanes.cu) and the device-side decode points of a compressed
# file (decode.cu). The GPU tests of those stages (one rank; two ranks sharing the GPU), plain
# against compressed on kron$SCALE (bench_compressed_traversals.py), then the plain kernels
# A/B against AB_BEFORE (their plain entry points were reshaped; same graphs, alternating).
# Carry: .whl, .data, and .before (`git archive REV distbfs kernels | tar -x -C .before`).
#   run with: bash benchmarks/device_compressed_traversals.sh
# Environment: SCALE (25), REPEATS (3), AB_BEFORE (.before), AB_ROUNDS (1), AB_SSSP and AB_CC
# (graphs), SKIP (a list of: tests bench), TESTS.
set -uo pipefail
source benchmarks/device_env.sh
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader

if [[ " ${SKIP:-} " != *" tests "* ]]; then
  echo "== GPU tests: compressed, placement, SSSP, CC, batched"
  timeout 240 python3 -m pytest -q -n 4 -m "gpu and not multi_gpu" -p no:cacheprovider \
    --timeout=200 ${TESTS:-tests/test_compressed.py tests/test_placement.py tests/test_sssp.py \
    tests/test_cc.py tests/test_batched.py} >"$OUT/tests.log" 2>&1
  echo "pytest exit $?"; grep -E "passed|failed|^FAILED|^ERROR" "$OUT/tests.log" | tail -n 12

  echo "== two ranks sharing the GPU: every traversal on compressed rows"
  timeout 150 mpirun --bind-to none -n 2 -x SLURM_GPUS_PER_TASK=1 -x CUDA_VISIBLE_DEVICES=0 \
    -x DISTBFS_TEST_COMM=mpi python3 -m pytest -q --with-mpi -m gpu -p no:cacheprovider \
    tests/test_compressed.py -k every_traversal >"$OUT/tests_mpi.log" 2>&1
  echo "mpirun exit $?"; grep -aE "passed|failed|^FAILED|^ERROR" "$OUT/tests_mpi.log" | tail -n 6
fi

if [[ " ${SKIP:-} " != *" bench "* ]]; then
  echo "== kron${SCALE:-25}: plain against compressed (SSSP, CC, 64-source batched BFS)"
  timeout 150 python3 benchmarks/bench_compressed_traversals.py --scale "${SCALE:-25}" \
    --repeats "${REPEATS:-3}" --json "$OUT/compressed_traversals.json" 2>&1 \
    | tee "$OUT/compressed_traversals.log" | tail -n 8
fi

echo "== plain kernels: before against after, alternating (SSSP luxembourg, grid2d, kron22; CC kron24)"
for round in $(seq ${AB_ROUNDS:-1}); do
  for version in "${AB_BEFORE:-.before}" .; do
    base=${PYTHONPATH%%:*}
    PYTHONPATH=$base:$version timeout 120 python3 benchmarks/bench_sssp.py --no-gap \
      --graphs ${AB_SSSP:-luxembourg grid2d kron22} --roots 8 --validate-roots 1 \
      --json "$OUT/sssp_${round}_$(basename "$version").json" >"$OUT/sssp_${round}_$(basename "$version").log" 2>&1
    PYTHONPATH=$base:$version timeout 90 python3 benchmarks/bench_cc.py --no-gap \
      --graphs ${AB_CC:-kron24 luxembourg} --runs 8 --validate-runs 1 \
      --json "$OUT/cc_${round}_$(basename "$version").json" >"$OUT/cc_${round}_$(basename "$version").log" 2>&1
    echo "round $round $version:"
    python3 - "$OUT/sssp_${round}_$(basename "$version").json" "$OUT/cc_${round}_$(basename "$version").json" <<'PY'
import json, sys
for path in sys.argv[1:]:
    try:
        doc = json.load(open(path))
    except Exception as error:
        print("  ", path, "unreadable:", error); continue
    for g in doc.get("graphs", doc if isinstance(doc, list) else []):
        d = g.get("distbfs", g)
        print(f"   {path.split('/')[-1].split('_')[0]} {g.get('graph', g.get('name'))}: "
              f"{d.get('mean_ms', d.get('median_ms'))} ms")
PY
  done
done
