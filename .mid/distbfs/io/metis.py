"""METIS/Chaco graph files (``.graph``, optionally ``.gz``): undirected adjacency lists.

The first non-comment line is ``n m [fmt [ncon]]``; then non-comment line ``i`` (1-based, an
empty line meaning no neighbours) lists vertex ``i``'s neighbours, 1-based. ``fmt`` is up to three
0/1 digits: vertex sizes, vertex weights (``ncon`` of them, default 1), edge weights (a weight
after each neighbour: fmt ``1``, ``11``, ``101``, ``111``). Edge weights are the graph's weights
(non-negative finite numbers; the two lists of an edge normally agree, and where they do not
the smaller weight is stored both ways); vertex sizes and weights are checked to be integers
and ignored. ``%`` lines are comments. Checks: exactly ``n`` vertex lines (extra empty lines at
the end are tolerated) and ``2 m`` adjacency entries in all.
"""

from __future__ import annotations

import numpy as np

from ..errors import GraphFormatError
from .text import Piece, TextFormat, TextHeader, header_int, header_lines, split_tokens
from .tokens import Tokens, earliest, first_error, id_error, parse_uints, parse_weights


def _neighbour_message(text: str, n: int) -> str:
    if text.isascii() and text.isdigit() and len(text) <= 19:
        return f"neighbour {int(text)} out of range 1..{n}"
    return id_error(text, "neighbour")


class MetisFormat(TextFormat):
    name = "metis"
    comment_chars = b"%"
    src_is_record = True
    record_word = "vertex lines"
    undirected_kind = "a METIS graph (undirected by definition)"

    def read_header(self, path: str) -> TextHeader:
        number = 0
        for number, line, end in header_lines(path):
            if line.startswith(b"%"):
                continue
            tokens = split_tokens(line)
            if not 2 <= len(tokens) <= 4:
                raise GraphFormatError(
                    path,
                    f"bad METIS header {line.decode(errors='replace').strip()!r}: "
                    "expected 'n m [fmt [ncon]]'",
                    number,
                )
            n = header_int(path, number, tokens[0], "vertex count n")
            m = header_int(path, number, tokens[1], "edge count m")
            fmt = tokens[2] if len(tokens) > 2 else "0"
            if len(fmt) > 3 or not set(fmt) <= {"0", "1"}:
                raise GraphFormatError(
                    path,
                    f"bad METIS fmt {fmt!r}: expected up to three "
                    "0/1 digits (vertex sizes, vertex weights, edge weights)",
                    number,
                )
            sizes, vertex_weights, edge_weights = (int(c) for c in fmt.zfill(3))
            ncon = 1
            if len(tokens) > 3:
                ncon = header_int(path, number, tokens[3], "ncon")
                if not vertex_weights or ncon < 1:
                    raise GraphFormatError(
                        path,
                        f"bad METIS ncon {ncon}: needs vertex weights in fmt and ncon >= 1",
                        number,
                    )
            return TextHeader(
                n=n,
                directed=False,
                weighted=bool(edge_weights),
                data_offset=end,
                lines=number,
                records=n,
                line=number,
                params={"m": m, "skip": sizes + vertex_weights * ncon, "group": 1 + edge_weights},
            )
        raise GraphFormatError(path, "empty file" if number == 0 else "no METIS header line")

    def parse(self, tok: Tokens, header: TextHeader, record_base: int) -> Piece:
        n, skip, group = header.n, header.params["skip"], header.params["group"]
        vertex_line = np.ones(tok.nlines, dtype=bool) if tok.comment is None else ~tok.comment
        record_lines = np.flatnonzero(vertex_line)
        vertex_of_line = np.cumsum(vertex_line) - 1 + record_base
        counts = tok.per_line()
        blank = counts[record_lines] == 0
        error = None
        edge_weights = None
        if skip == 0 and group == 1:
            neighbours: np.ndarray | slice = slice(0, tok.count, 1)
            line = tok.lines()
        else:
            wrong = np.flatnonzero(vertex_line & ((counts < skip) | ((counts - skip) % group != 0)))
            limit = tok.nlines
            if wrong.size:
                limit = int(wrong[0])
                extra = " with edge weights" if group > 1 else ""
                error = (
                    limit,
                    0,
                    f"expected {skip} vertex size/weight value(s) then neighbours"
                    f"{extra}, found {int(counts[limit])} tokens",
                )
            ntok = int(tok.bounds[limit])
            line = tok.lines()[:ntok]
            position = np.arange(ntok) - tok.bounds[line]
            is_neighbour = (position >= skip) & ((position - skip) % group == 0)
            neighbours = np.flatnonzero(is_neighbour)
            line = line[neighbours]
            vertex_values = np.flatnonzero(position < skip)
            _, valid = parse_uints(tok, vertex_values)
            error = earliest(
                error,
                first_error(
                    tok,
                    vertex_values,
                    ~valid,
                    1,
                    lambda t: f"bad vertex size/weight {t!r}: expected an integer",
                ),
            )
            if group == 2:
                edge_weights, weight_error = parse_weights(tok, neighbours + 1, 1)
                error = earliest(error, weight_error)
        values, valid = parse_uints(tok, neighbours)
        valid &= (values >= np.uint64(1)) & (values <= np.uint64(n))
        error = earliest(
            error, first_error(tok, neighbours, ~valid, 0, lambda t: _neighbour_message(t, n))
        )
        empty = np.zeros(0, dtype=np.int64)
        if error is not None:
            return Piece(empty, empty, 0, empty, error=error)
        src = vertex_of_line[line]
        dst = values.astype(np.int64) - 1
        return Piece(
            src,
            dst,
            int(record_lines.shape[0]),
            record_lines,
            record_blank=blank,
            weights=edge_weights,
        )

    def too_few(self, path: str, header: TextHeader, records: int) -> GraphFormatError:
        return GraphFormatError(
            path,
            f"truncated file: the header announces n={header.n} "
            f"vertices, the file holds only {records} vertex lines",
            header.line,
        )

    def too_many(self, header: TextHeader) -> str:
        return f"more vertex lines than the n={header.n} vertices the header announces"

    def check_totals(self, path: str, header: TextHeader, records: int, entries: int) -> None:
        m = header.params["m"]
        if entries != 2 * m:
            error = GraphFormatError(
                path,
                f"the header announces m={m} edges ({2 * m} adjacency entries), the "
                f"adjacency lists hold {entries}",
                header.line,
            )
            error.all_ranks = True
            raise error
