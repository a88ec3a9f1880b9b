#!/usr/bin/env bash
set -uo pipefail
source benchmarks/device_env.sh
mp=(mpirun --bind-to none -n 2)
nvidia-smi topo -m | head -4
echo "== one-GPU fused tests"
timeout 100 python3 -m pytest -q -x -p no:cacheprovider tests/test_cuda.py tests/test_fused_paths.py -k "small or fused or contract_expand" >"$OUT/one.log" 2>&1
echo "one-GPU exit $?"; tail -3 "$OUT/one.log"
echo "== peer tests (2 ranks)"
timeout 170 "${mp[@]}" python3 -m pytest -q -x -rs --with-mpi -m "mpi and multi_gpu" -p no:cacheprovider tests/test_multi_gpu.py -k "peer" >"$OUT/peer.log" 2>&1
echo "peer tests exit $?"; grep -E "passed|failed|Error|error" "$OUT/peer.log" | head -20
echo "== kron27"
b=(benchmarks/bench_multi_gpu.py --graphs kron27 --roots 64 --validate-roots 4 --strategies hybrid)
timeout 90 python3 "${b[@]}" --json "$OUT/p1.json" >"$OUT/b1.log" 2>&1; echo "1 GPU exit $?"
timeout 80 "${mp[@]}" python3 "${b[@]}" --levels --json "$OUT/p2.json" >"$OUT/b2.log" 2>&1; echo "2 GPU peers exit $?"
timeout 80 "${mp[@]}" python3 "${b[@]}" --levels --no-peer-levels --json "$OUT/p2off.json" >"$OUT/b2off.log" 2>&1; echo "2 GPU no peers exit $?"
grep -h "^| kron" "$OUT"/b1.log "$OUT"/b2.log "$OUT"/b2off.log
tail -5 "$OUT/b2.log"
