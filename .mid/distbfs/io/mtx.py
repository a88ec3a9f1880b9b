"""Matrix Market coordinate files (``.mtx``, optionally ``.gz``) as graphs.

Banner ``%%MatrixMarket matrix coordinate <field> <symmetry>``: field ``pattern`` (two columns,
an unweighted graph), ``integer`` or ``real`` (a third column: the edge's weight, a non-negative
finite number); symmetry ``general`` (directed) or ``symmetric`` (undirected: the entry (i, j)
stands for both directions, with one weight). ``array`` files, ``complex`` fields and
``hermitian``/``skew-symmetric`` matrices are refused. ``%`` lines are comments; the size line
``M N NNZ`` follows the banner and the exact NNZ entries ``i j [value]`` follow it. A graph's
adjacency matrix is square: ``M != N`` is refused (naming both). 1-based indices become
0-based vertex ids; ``n = M``.
"""

from __future__ import annotations

import numpy as np

from ..errors import GraphFormatError
from .text import Piece, TextFormat, TextHeader, header_int, header_lines, split_tokens
from .tokens import (
    Tokens,
    earliest,
    first_error,
    fixed_columns,
    id_error,
    parse_uints,
    parse_weights,
)

FIELDS = {"pattern": 2, "integer": 3, "real": 3}
SYMMETRIES = {"general": True, "symmetric": False}  # -> directed


def _index_message(text: str, what: str, limit: int) -> str:
    if text.isascii() and text.isdigit() and len(text) <= 19:
        return f"{what} {int(text)} out of range 1..{limit}"
    return id_error(text, what)


class MatrixMarketFormat(TextFormat):
    name = "mtx"
    comment_chars = b"%"
    record_word = "entries"
    undirected_kind = "a symmetric Matrix Market file (undirected by definition)"

    def read_header(self, path: str) -> TextHeader:
        lines = header_lines(path)
        first = next(lines, None)
        if first is None:
            raise GraphFormatError(path, "empty file")
        banner = split_tokens(first[1])
        words = [w.lower() for w in banner]
        if len(words) != 5 or words[0] != "%%matrixmarket" or words[1] != "matrix":
            raise GraphFormatError(
                path,
                f"bad MatrixMarket banner {' '.join(banner)!r}: expected "
                "'%%MatrixMarket matrix coordinate <field> <symmetry>'",
                1,
            )
        fmt, fld, symmetry = words[2:]
        if fmt != "coordinate":
            raise GraphFormatError(
                path,
                f"MatrixMarket format {fmt!r} is not supported "
                "(only 'coordinate' sparse matrices are graphs)",
                1,
            )
        if fld not in FIELDS:
            raise GraphFormatError(
                path,
                f"MatrixMarket field {fld!r} is not supported (supported: {', '.join(FIELDS)})",
                1,
            )
        if symmetry not in SYMMETRIES:
            raise GraphFormatError(
                path,
                f"MatrixMarket symmetry {symmetry!r} is not supported "
                f"(supported: {', '.join(SYMMETRIES)})",
                1,
            )
        number = 1
        for number, line, end in lines:
            tokens = split_tokens(line)
            if not tokens or tokens[0].startswith("%"):
                continue
            if len(tokens) != 3:
                raise GraphFormatError(
                    path,
                    f"bad size line {line.decode(errors='replace').strip()!r}: expected 'M N NNZ'",
                    number,
                )
            names = ("row count M", "column count N", "NNZ")
            rows, cols, nnz = (
                header_int(path, number, t, w) for t, w in zip(tokens, names, strict=True)
            )
            if rows != cols:
                raise GraphFormatError(
                    path,
                    f"the matrix is {rows} x {cols}: a graph's adjacency matrix must be square "
                    "(M = N)",
                    number,
                )
            return TextHeader(
                n=rows,
                directed=SYMMETRIES[symmetry],
                weighted=FIELDS[fld] == 3,
                data_offset=end,
                lines=number,
                records=nnz,
                line=number,
                params={"rows": rows, "cols": cols, "columns": FIELDS[fld]},
            )
        raise GraphFormatError(path, "file ends before the size line 'M N NNZ'", number)

    def parse(self, tok: Tokens, header: TextHeader, record_base: int) -> Piece:
        p = header.params
        columns, record_lines, error = fixed_columns(tok, p["columns"])
        ids = []
        for j, (what, limit) in enumerate((("row index", p["rows"]), ("column index", p["cols"]))):
            values, valid = parse_uints(tok, columns[j])
            valid &= (values >= np.uint64(1)) & (values <= np.uint64(limit))
            ids.append(values)
            error = earliest(
                error,
                first_error(
                    tok, columns[j], ~valid, j, lambda t, w=what, m=limit: _index_message(t, w, m)
                ),
            )
        weights = None
        if p["columns"] == 3:
            weights, weight_error = parse_weights(tok, columns[2], 2, "value")
            error = earliest(error, weight_error)
        empty = np.zeros(0, dtype=np.int64)
        if error is not None:
            return Piece(empty, empty, 0, empty, error=error)
        src = ids[0].astype(np.int64) - 1
        dst = ids[1].astype(np.int64) - 1
        return Piece(src, dst, int(src.shape[0]), record_lines, weights=weights)
