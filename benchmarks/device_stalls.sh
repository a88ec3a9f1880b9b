#!/usr/bin/env bash
# One device call on a single-GPU machine: where the one-block kernels' warps wait on a road
# network (#21, #18). Nsight Compute's full set on one warm search's block_levels_kernel (BFS
# from vertex 0) and delta_stepping_block_tied (shortest paths, weights 1..255) of
# luxembourg_osm, each exported per SASS instruction and summarized by stall_summary.py.
# Carry: .whl, .data. Reports (.ncu-rep), CSVs and summaries in $OUT.
#   run with: bash benchmarks/device_stalls.sh
set -uo pipefail
source benchmarks/device_env.sh
nvidia-smi --query-gpu=name --format=csv,noheader
ncu --version | tail -n 1

# $OUT/search.py KIND: three searches of luxembourg_osm from vertex 0 (the first compiles, so
# ncu profiles the kernel's second launch)
cat >"$OUT/search.py" <<'PY'
import sys
sys.path.insert(0, "benchmarks")
import bench_sssp
from bench_gpu import make_graph
import distbfs
if sys.argv[1] == "bfs":
    graph = make_graph("luxembourg")
    run = lambda: distbfs.bfs(graph, 0)
else:
    case = bench_sssp.parse_case("luxembourg", (1, 1))
    graph = bench_sssp.make_graph(case, "cuda", bench_sssp.DATA)
    run = lambda: distbfs.sssp(graph, 0, predecessors=True, gather=False)
for _ in range(3):
    run()
PY

for pair in "bfs block_levels_kernel" "sssp delta_stepping_block_tied"; do
  set -- $pair
  python3 "$OUT/search.py" "$1" >/dev/null 2>&1  # fill the kernel cache outside ncu
  timeout 300 ncu --set full -k "regex:^$2\$" --launch-skip 1 --launch-count 1 -f \
    -o "$OUT/$1" python3 "$OUT/search.py" "$1" >"$OUT/$1.ncu.log" 2>&1 || {
    tail -n 20 "$OUT/$1.ncu.log"; exit 1; }
  ncu --import "$OUT/$1.ncu-rep" --page details --csv >"$OUT/$1.details.csv"
  ncu --import "$OUT/$1.ncu-rep" --page source --csv --print-source sass >"$OUT/$1.sass.csv"
  echo "== $2 (luxembourg_osm, $1)"
  grep -E '"(Duration|SM Frequency|Registers Per Thread|L1/TEX Hit Rate|L2 Hit Rate)"' \
    "$OUT/$1.details.csv" | awk -F'","' '{print "  " $13 ": " $15 " " $14}'
  python3 benchmarks/stall_summary.py "$OUT/$1.sass.csv" --top 12 | tee "$OUT/$1.stalls.md"
done
