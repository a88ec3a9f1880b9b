# Sourced by the benchmarks/device_*.sh scripts (not run): the environment of one device call.
# Installs the carried wheels (.whl: pytest-mpi, pytest-timeout, hypothesis, ... for cp312) into
# /tmp/site, puts the working tree on PYTHONPATH, points DISTBFS_DATA at the carried real graphs
# (.data; ../shared stays behind), keeps CuPy's kernel cache in one place, lets Open MPI run as
# root, and creates $OUT for the logs. Defines device_info (below).
OUT=${OUT:-out}
mkdir -p "$OUT"
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site:$PWD
else
  export PYTHONPATH=$PWD
fi
export PYTHONUNBUFFERED=1 CUPY_CACHE_DIR=/tmp/cupy-cache
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1  # Open MPI as root
if [ -d .data ]; then
  export DISTBFS_DATA=$PWD/.data
fi

# device_info LAUNCHER...: the GPUs, their links, the software and every rank's GPU binding
# (LAUNCHER: how the job's ranks start, e.g. mpirun --bind-to none -n 4), into $OUT/info.log
# and on stdout.
device_info() {
  {
    nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader
    nvidia-smi topo -m
    python3 -c "import cupy, numpy; from cupy.cuda import nccl; print('cupy', cupy.__version__, \
'numpy', numpy.__version__, 'nccl', nccl.get_version())"
    mpirun --version | head -n 1
    echo "NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE-<unset>}"
    "$@" python3 -m distbfs.device
  } >"$OUT/info.log" 2>&1
  cat "$OUT/info.log"
}
