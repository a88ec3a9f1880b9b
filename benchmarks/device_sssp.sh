#!/usr/bin/env bash
# One device call on nvidia-h100-x1: builds GAP (the GAP Benchmark Suite) from the carried source,
# then runs benchmarks/bench_sssp.py: distbfs's SSSP on the GPU and GAP's sssp on the host's
# cores (16 threads and 1), on the identical graphs, weights and roots. Logs and JSON go to $OUT.
#
# Carry: .gapbs (GAP's source, unpacked here and never committed; built there with make -B, so
# binaries built elsewhere are not used), .data (luxembourg_osm.mtx.gz for the road graph),
# .whl (optional: the wheels device_env.sh installs). Prepare .gapbs once, from the checkout root:
#   rm -rf .gapbs && mkdir .gapbs
#   git --git-dir=/work/.mirror/sbeamer+gapbs/repo archive HEAD | tar -x -C .gapbs
#   git --git-dir=/work/.mirror/sbeamer+gapbs/repo rev-parse HEAD > .gapbs/COMMIT
# (the mirror comes from the search tool's fetch of github:sbeamer/gapbs; .gitignore keeps
# .gapbs out of commits: name it in carry).
#
# run with: bash benchmarks/device_sssp.sh [bench_sssp.py arguments]
#   e.g.    bash benchmarks/device_sssp.sh --graphs kron20 kron22 grid2d luxembourg
#           bash benchmarks/device_sssp.sh --graphs kron26 --gap-roots 4 --gap-roots-serial 1
# One call is limited to 10 minutes: split the graphs over calls. GAP takes one source per
# process, so every root is a graph read plus --gap-warmup untimed trials; one-thread trials on
# the large Kronecker graphs are long (--gap-roots-serial bounds them).
set -uo pipefail
source benchmarks/device_env.sh
GAP_DIR=${GAP_DIR:-.gapbs}

nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
lscpu | grep -E "^(Model name|CPU\(s\)|Thread|Core|Socket|NUMA node\(s\))" | tee "$OUT/cpu.log"
python3 -c "import cupy, numpy; print('cupy', cupy.__version__, 'numpy', numpy.__version__)"
g++ --version | head -n 1

echo "== building GAP ($GAP_DIR, commit $(cat "$GAP_DIR/COMMIT" 2>/dev/null || echo unknown))"
if ! make -B -C "$GAP_DIR" -j"$(nproc)" sssp cc bfs converter >"$OUT/gap_build.log" 2>&1; then
  tail -n 20 "$OUT/gap_build.log"
  exit 1
fi
echo "built: $(cd "$GAP_DIR" && ls sssp cc bfs converter | tr '\n' ' ')"

echo "== bench_sssp.py $*"
timeout "${BENCH_TIMEOUT:-560}" python3 benchmarks/bench_sssp.py --gap-dir "$GAP_DIR" \
  --json "$OUT/bench_sssp.json" "$@" 2>&1 | tee "$OUT/bench_sssp.log"
status=${PIPESTATUS[0]}
echo "bench_sssp exit $status"
exit "$status"
