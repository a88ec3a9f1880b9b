# Sourced by the benchmarks/device_*.sh scripts (not run): the environment of one device call.
# Installs the carried wheels (.whl: pytest-mpi, pytest-timeout, hypothesis, ... for cp312) into
# /tmp/site, puts the working tree on PYTHONPATH, points DISTBFS_DATA at the carried real graphs
# (.data; ../shared stays behind), keeps CuPy's kernel cache in one place, lets Open MPI run as
# root, and creates $OUT for the logs.
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
