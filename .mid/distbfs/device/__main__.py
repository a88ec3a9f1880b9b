"""``python -m distbfs.device [--gpus N]``: the GPU this rank would take (``main``). A module of
its own, so that running it does not run a module the package has already imported."""

from . import main

if __name__ == "__main__":
    raise SystemExit(main())
