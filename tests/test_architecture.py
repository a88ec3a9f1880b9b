"""The layout rules the code keeps, checked on its source (no import of the package needed):

- the BFS level loop is at most 60 lines, no function in ``distbfs/`` over 80, no file over 600;
- no import cycle among distbfs's modules (imports inside functions count too);
- layers point one way: cli -> api -> engine/traversals -> stages (backends) + comm -> kernels;
  comm depends on neither the backends nor GPU binding; the engine and the traversals import
  neither cupy nor mpi4py;
- no table keyed by ``id()`` anywhere (per-graph state lives in objects kept with the graph).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "distbfs"
MAX_FUNCTION_LINES = 80
MAX_FILE_LINES = 600
MAX_LEVEL_LOOP_LINES = 60


def modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its ``__init__``)."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = modules()


def tree(name: str) -> ast.Module:
    return ast.parse(MODULES[name].read_text(), filename=str(MODULES[name]))


def imported(name: str) -> set[str]:
    """The modules ``name`` imports (distbfs's by dotted name; others by top-level name)."""
    package = name if MODULES[name].name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(tree(name)):
        if isinstance(node, ast.Import):
            out |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:  # ``from . import io`` imports the module distbfs.io
                full = f"{base}.{alias.name}"
                out.add(full if full in MODULES else base)
    return out


def internal(name: str) -> set[str]:
    return {m for m in imported(name) if m in MODULES and m != name}


def test_no_import_cycle():
    graph = {name: internal(name) for name in MODULES}
    state: dict[str, int] = {}  # 1: on the path, 2: done

    def visit(name: str, path: list[str]) -> None:
        state[name] = 1
        for nxt in sorted(graph[name]):
            if state.get(nxt) == 1:
                cycle = [*path[path.index(nxt) :], nxt]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt, [*path, nxt])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])


FORBIDDEN = {
    "distbfs.comm": ("distbfs.backends", "distbfs.device", "distbfs.engine", "distbfs.api"),
    "distbfs.backends": ("distbfs.engine", "distbfs.traversals", "distbfs.api", "distbfs.cli"),
    "distbfs.engine": ("distbfs.api", "distbfs.cli", "distbfs.runtime", "cupy", "mpi4py"),
    "distbfs.traversals": ("distbfs.api", "distbfs.cli", "distbfs.runtime", "cupy", "mpi4py"),
    "distbfs.api": ("distbfs.cli",),
}


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_layers_point_one_way(layer):
    for name in MODULES:
        if name == layer or name.startswith(layer + "."):
            for target in imported(name):
                bad = [f for f in FORBIDDEN[layer] if target == f or target.startswith(f + ".")]
                assert not bad, f"{name} imports {target}"


def test_sizes():
    for name, path in MODULES.items():
        lines = path.read_text().count("\n")
        assert lines <= MAX_FILE_LINES, f"{path}: {lines} lines"
        for node in ast.walk(tree(name)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = node.end_lineno - node.lineno + 1
                assert length <= MAX_FUNCTION_LINES, f"{path}:{node.lineno} {node.name}: {length}"


def test_the_level_loop_reads_in_one_screen():
    loop = next(
        node
        for node in ast.walk(tree("distbfs.traversals.bfs"))
        if isinstance(node, ast.FunctionDef) and node.name == "run_levels"
    )
    assert loop.end_lineno - loop.lineno + 1 <= MAX_LEVEL_LOOP_LINES


def test_nothing_is_keyed_by_id():
    for name, path in MODULES.items():
        for node in ast.walk(tree(name)):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                assert node.func.id != "id", f"{path}:{node.lineno} calls id()"
