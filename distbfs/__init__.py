"""distbfs: multi-GPU distributed breadth-first search after Merrill, Garland & Grimshaw (2012)."""

from .constants import UNREACHED

__version__ = "0.1.0"
__all__ = ["UNREACHED", "__version__"]
