"""Traversals written against the engine (``distbfs.engine``): each a short loop over the
backend's stages and the communicator's exchanges, like its paper. ``bfs``: Merrill et al.'s
level-synchronous BFS with Beamer's direction optimization."""
