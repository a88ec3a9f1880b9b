"""Whitespace edge lists as SNAP ships them (``.txt``, ``.el``, ``.edges``, optionally ``.gz``).

One edge ``source target`` per line, or ``source target weight``: the first data line fixes 2
columns (an unweighted graph) or 3 (the third is the edge's weight, a non-negative finite number)
for the whole file, and a line with the other count is an error naming it. Lines whose first
token starts with ``#`` or ``%`` are comments; blank lines are skipped. Ids are kept as given
(0-based, sparse ids leave isolated vertices); ``n`` is the largest id plus one over all ranks.
Directed as stored.
"""

from __future__ import annotations

import numpy as np

from ..errors import GraphFormatError
from .text import Piece, TextFormat, TextHeader, header_lines
from .tokens import (
    Tokens,
    earliest,
    first_error,
    fixed_columns,
    id_error,
    parse_uints,
    parse_weights,
)

ID_LIMIT = 2**63


class EdgeListFormat(TextFormat):
    name = "edgelist"
    comment_chars = b"#%"
    record_word = "edges"

    def read_header(self, path: str) -> TextHeader:
        """Only the column count of the first data line (every line is parsed as data)."""
        number = 0
        for number, line, _ in header_lines(path):
            text = line.strip()
            if not text or text[:1] in (b"#", b"%"):
                continue
            columns = len(text.split())
            if columns not in (2, 3):
                raise GraphFormatError(
                    path,
                    f"expected 2 or 3 columns (source target [weight]), found {columns}",
                    number,
                )
            return TextHeader(
                n=None, directed=True, weighted=columns == 3, params={"columns": columns}
            )
        raise GraphFormatError(path, "empty file" if number == 0 else "no edges (only comments)")

    def parse(self, tok: Tokens, header: TextHeader, record_base: int) -> Piece:
        k = header.params["columns"]
        columns, record_lines, error = fixed_columns(tok, k, " (as on the first data line)")
        ids = []
        for j in (0, 1):
            values, valid = parse_uints(tok, columns[j])
            valid &= values < np.uint64(ID_LIMIT)
            ids.append(values)
            error = earliest(
                error, first_error(tok, columns[j], ~valid, j, lambda t: id_error(t, "vertex id"))
            )
        weights = None
        if k == 3:
            weights, weight_error = parse_weights(tok, columns[2], 2)
            error = earliest(error, weight_error)
        empty = np.zeros(0, dtype=np.int64)
        if error is not None:
            return Piece(empty, empty, 0, empty, error=error)
        src, dst = ids[0].astype(np.int64), ids[1].astype(np.int64)
        max_id = int(max(src.max(), dst.max())) if src.size else -1
        return Piece(src, dst, int(src.shape[0]), record_lines, max_id=max_id, weights=weights)
