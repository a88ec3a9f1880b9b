"""``python -m distbfs``: the command line (see ``distbfs.cli``)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
