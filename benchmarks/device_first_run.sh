#!/usr/bin/env bash
# One device call on a single-GPU machine: the first run of `distbfs bfs luxembourg_osm.mtx.gz`
# with an empty kernel cache (cold: every module a search needs compiled by NVRTC) and again with
# the cache it left (warm), for this checkout and for AB_BEFORE, alternating; wall seconds of
# the whole command (/usr/bin/time). Then `distbfs warmup` into an empty cache. Carry .data and
# .before (`git archive REV distbfs kernels | tar -x -C .before`).
#   run with: bash benchmarks/device_first_run.sh
# Environment: AB_BEFORE (.before), ROUNDS (2).
set -uo pipefail
source benchmarks/device_env.sh
graph=$DISTBFS_DATA/luxembourg_osm.mtx.gz
base=${PYTHONPATH%%:*}
out=$(realpath "$OUT")
run() {  # run VERSION CACHE LABEL (from the version's folder: `python -m` imports from the cwd)
  (cd "$1" && CUPY_CACHE_DIR=$2 PYTHONPATH=$base:$PWD /usr/bin/time -f %e python3 -m distbfs bfs \
    "$graph" --source 0 -q >/dev/null 2>"$out/err.log")
  echo "$3 $(basename "$(realpath "$1")"): $(tail -n 1 "$out/err.log") s"
}
for round in $(seq "${ROUNDS:-2}"); do
  for version in "${AB_BEFORE:-.before}" .; do
    cache=$(mktemp -d)
    run "$version" "$cache" "round $round cold"
    run "$version" "$cache" "round $round warm"
    rm -rf "$cache"
  done
done
cache=$(mktemp -d)
echo "warmup into an empty cache: $( { CUPY_CACHE_DIR=$cache /usr/bin/time -f %e python3 -m \
  distbfs warmup >/dev/null; } 2>&1 | tail -n 1) s"
run . "$cache" "after warmup"
