#!/usr/bin/env bash
# The project's test command (README): the plain suite, then the MPI suite at 1, 2, 3 and 4 ranks.
# GPU tests skip with a reason where there is no GPU; run them on a GPU machine with
#   python -m pytest -m "gpu" tests/
set -euo pipefail
cd "$(dirname "$0")/.."
py=${PYTHON:-python}
mpiexec=${MPIEXEC:-$(dirname "$(command -v "$py")")/mpiexec}
[ -x "$mpiexec" ] || mpiexec=$(command -v mpiexec)

"$py" -m pytest -q --timeout=600 "$@"
for ranks in 1 2 3 4; do
  echo "== MPI tests at $ranks rank(s)"
  timeout 900 "$mpiexec" -n "$ranks" "$py" -m pytest -q --with-mpi -m mpi -p no:cacheprovider \
    --timeout=300 "$@"
done
