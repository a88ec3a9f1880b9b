"""Progress reports (``distbfs.progress``): nothing for short steps or other ranks or --quiet;
on a non-terminal stderr, a line every LINE_SECONDS while a long step runs and one at its end."""

from __future__ import annotations

import time

import distbfs.progress as progress_module
from distbfs.progress import progress


def test_short_steps_and_other_ranks_print_nothing(capsys):
    for rank, quiet in ((0, False), (1, False), (0, True)):
        with progress(rank, "generating", total=10, quiet=quiet) as bar:
            bar.callback(10, 10)
    assert capsys.readouterr().err == ""


def test_long_steps_print_lines_on_a_log(monkeypatch, capsys):
    monkeypatch.setattr(progress_module, "LINE_SECONDS", 0.05)
    with progress(0, "generating kronecker", total=200) as bar:
        assert bar.active
        bar.callback(50, 200)
        time.sleep(0.3)
        bar.callback(200, 200)
        time.sleep(0.12)  # the counted work is done; the step is not: lines go on
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("generating kronecker: 25%, ")
    assert any(line.startswith("generating kronecker: 100%, ") for line in lines[1:-1])
    assert lines[-1].endswith("(done)") and len(lines) >= 4
