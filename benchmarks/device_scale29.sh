#!/usr/bin/env bash
# One device call on nvidia-h100-x1: Kronecker scale 29 (a 72 GB CSR) generated, built through
# host memory and searched on ONE H100 80 GB (#20): compressed on the device (the default here)
# or with its columns in host memory (MEMORY=host). Prints the build time, the Graph500
# statistics, the peak host RSS (/usr/bin/time -v) and the peak GPU memory (nvidia-smi, sampled
# every 2 s). Logs and JSON go to $OUT. Carry: .whl.
#   run with: bash benchmarks/device_scale29.sh            (ROOTS=64 by default)
# On several GPUs (#22: scale 30 on four H200s): RANKS=4 SCALE=30 MEMORY=device; ranks whose
# held edge lists would not fit each replay the whole generated list and keep their rows; on two
# H200s scale 30 fits compressed (RANKS=2 SCALE=30 MEMORY=compress).
# Environment: SCALE (29), ROOTS (64), MEMORY (compress | host | device), RANKS (1), LIMIT
# (seconds, 540).
set -uo pipefail
source benchmarks/device_env.sh
scale=${SCALE:-29}
case "${MEMORY:-compress}" in
  compress) placement=(--compress) ;;
  host) placement=(--graph-memory host) ;;
  device) placement=() ;;
  *) echo "MEMORY must be compress, host or device" >&2; exit 2 ;;
esac
launcher=()
[ "${RANKS:-1}" -gt 1 ] && launcher=(mpirun --bind-to none -n "$RANKS")
nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 2000 >"$OUT/gpu_memory.log" &
sampler=$!
/usr/bin/time -v timeout "${LIMIT:-540}" "${launcher[@]}" python3 -m distbfs bench --backend cuda --scale "$scale" \
  --roots "${ROOTS:-64}" "${placement[@]}" --json "$OUT/kron$scale.json" \
  >"$OUT/kron$scale.log" 2>"$OUT/kron$scale.err"
echo "bench exit $?"
kill "$sampler"
grep -aE "compressed the|construction_time|^validation|harmonic_mean_TEPS|median_time" \
  "$OUT/kron$scale.log"
grep -aE "rror|needs" "$OUT/kron$scale.err" | head -n 5
grep -E "Maximum resident" "$OUT/kron$scale.err"
echo "peak GPU memory used: $(sort -n "$OUT/gpu_memory.log" | tail -n 1) MiB"
