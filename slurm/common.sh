# Shared by the distbfs sbatch scripts (sourced, not run): job environment and the srun line.
#
# Sets, unless already set by the user:
#   CUPY_CACHE_DIR   one per user, shared by every job: ${XDG_CACHE_HOME:-$HOME/.cache}/distbfs-cupy
#                    (CuPy compiles the CUDA stages on first use and writes each cache file under
#                    a temporary name that it then renames, so concurrent jobs are safe; only the
#                    first job pays the compile; `python -m distbfs warmup` pays it ahead)
#   NCCL_DEBUG       WARN (NCCL prints what goes wrong; INFO for the topology it picked)
#   DISTBFS_PYTHON   the interpreter (default: python3)
# NCCL_NVLS_ENABLE and the other NCCL_* variables are passed through as they are.
# Builds DISTBFS_SRUN: srun with one task per GPU, each task bound to its own GPU(s), the MPI
# plugin (DISTBFS_SRUN_MPI, default pmix; pmi2 or none on some sites) and --kill-on-bad-exit, so
# one failing rank ends the whole step.

export CUPY_CACHE_DIR=${CUPY_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/distbfs-cupy}
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export PYTHONUNBUFFERED=1
DISTBFS_PYTHON=${DISTBFS_PYTHON:-python3}

# The site may need these for multi-node NCCL (uncomment and edit):
# export NCCL_SOCKET_IFNAME=ib0        # interface for NCCL's bootstrap and socket transport
# export NCCL_IB_HCA=mlx5              # InfiniBand adapters NCCL may use
# export NCCL_CROSS_NIC=0

DISTBFS_SRUN=(
  srun
  "--mpi=${DISTBFS_SRUN_MPI:-pmix}"
  --kill-on-bad-exit=1
  "--gpus-per-task=${DISTBFS_GPUS_PER_TASK:-1}"
  "--gpu-bind=${DISTBFS_GPU_BIND:-per_task:${DISTBFS_GPUS_PER_TASK:-1}}"
  --export=ALL
)

distbfs_show_binding() {
  # One line per rank: node-local rank, where it came from, and the GPU it takes.
  "${DISTBFS_SRUN[@]}" "$DISTBFS_PYTHON" -m distbfs.device
}
