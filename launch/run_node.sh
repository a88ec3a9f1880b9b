#!/usr/bin/env bash
# distbfs-node: run distbfs on the GPUs of one machine (a workstation or one node), one rank per
# GPU. Each rank binds the GPU of its node-local rank (distbfs/device/); with the cuda backend
# and several ranks the communicator is NCCL when every rank can use it (--comm auto).
#
# Usage: launch/run_node.sh NGPUS [distbfs arguments...]
#   launch/run_node.sh 2 bench --scale 26              # Graph500-style benchmark on 2 GPUs
#   launch/run_node.sh 4 bfs road.mtx --source 0 --validate
#   launch/run_node.sh 1 bench                         # one GPU: plain python, no MPI needed
#
# Environment:
#   PYTHON          interpreter (default: python3, else python)
#   MPIRUN          launcher (default: mpirun, else mpiexec, on PATH)
#   MPIRUN_ARGS     extra launcher arguments (e.g. "--bind-to numa" for Open MPI)
#   CUPY_CACHE_DIR  kept if set; otherwise ${XDG_CACHE_HOME:-$HOME/.cache}/distbfs-cupy, one per
#                   user and shared by every run (CuPy writes each cache file under a temporary
#                   name and renames it, so concurrent runs are safe; the first run compiles)
#   NCCL_*          passed through untouched (NCCL_NVLS_ENABLE=0 stays 0 if set; nothing forced)
#   DISTBFS_DRY_RUN=1  print the command instead of running it
set -euo pipefail

usage() {
  echo "usage: $0 NGPUS [distbfs arguments...]" >&2
  exit 2
}
[ $# -ge 1 ] || usage
ngpus=$1
shift
if ! [[ $ngpus =~ ^[1-9][0-9]*$ ]]; then
  echo "run_node.sh: error: NGPUS must be a positive integer, got '$ngpus'" >&2
  exit 2
fi

python=${PYTHON:-$(command -v python3 || command -v python || true)}
if [ -z "$python" ]; then
  echo "run_node.sh: error: no python3 or python on PATH (set PYTHON)" >&2
  exit 2
fi

# GPUs this machine shows us: CUDA_VISIBLE_DEVICES if set, else nvidia-smi (if installed).
visible=""
if [ -n "${CUDA_VISIBLE_DEVICES+x}" ]; then
  if [ -z "$CUDA_VISIBLE_DEVICES" ]; then
    visible=0
  else
    visible=$(tr ',' '\n' <<<"$CUDA_VISIBLE_DEVICES" | grep -c .)
  fi
elif command -v nvidia-smi >/dev/null 2>&1; then
  visible=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
fi
if [ -n "$visible" ] && [ "$ngpus" -gt "$visible" ]; then
  echo "run_node.sh: error: $ngpus ranks asked for but only $visible GPU(s) visible" \
    "(CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES-<unset>})" >&2
  exit 2
fi

export CUPY_CACHE_DIR=${CUPY_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/distbfs-cupy}
export PYTHONUNBUFFERED=1

if [ "$ngpus" -eq 1 ]; then
  command=("$python" -m distbfs "$@")
else
  mpirun=${MPIRUN:-$(command -v mpirun || command -v mpiexec || true)}
  if [ -z "$mpirun" ]; then
    echo "run_node.sh: error: $ngpus ranks need mpirun or mpiexec on PATH (install Open MPI" \
      "or MPICH, e.g. pip install mpich mpi4py; or set MPIRUN)" >&2
    exit 2
  fi
  launcher_args=()
  if "$mpirun" --version 2>/dev/null | grep -q "Open MPI\|OpenRTE"; then
    # Open MPI: one rank per GPU, not pinned to a single core (the host side is multi-threaded),
    # variables exported explicitly (they are inherited anyway on one node).
    launcher_args+=(--bind-to none -x CUPY_CACHE_DIR -x PYTHONUNBUFFERED)
    for var in $(compgen -e | grep '^NCCL_' || true); do launcher_args+=(-x "$var"); done
    if [ "$(id -u)" -eq 0 ]; then
      export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    fi
  fi
  # shellcheck disable=SC2206  # MPIRUN_ARGS is a list of words on purpose
  extra=(${MPIRUN_ARGS:-})
  command=("$mpirun" -n "$ngpus" ${launcher_args[@]+"${launcher_args[@]}"} ${extra[@]+"${extra[@]}"}
    "$python" -m distbfs "$@")
fi

if [ "${DISTBFS_DRY_RUN:-0}" = 1 ]; then
  echo "CUPY_CACHE_DIR=$CUPY_CACHE_DIR ${command[*]}"
  exit 0
fi
exec "${command[@]}"
