"""Distributed reading of text graph files: byte-range split and driver (the tokenizer and the
conversion of tokens to numbers are ``tokens``'s).

Every rank reads only its share of the file: the file is cut into ``p`` equal byte ranges and a
rank takes the lines that *start* in its range (it reads one byte before its range to see whether
a line starts there, and past its range to the end of its last line). A gzip stream cannot be
entered in the middle, so for ``.gz`` files the ranges are cut in compressed bytes, at the block
boundaries of one fixed decompression schedule that every rank runs identically from the start
of the stream; rank ``r`` decompresses everything up to the end of its range and keeps only the
part after its start. Decompression is thus serial per rank (the last rank inflates the whole
stream); tokenizing and parsing are still split ``p`` ways.

A file named ``.gz`` must be a gzip stream (its first bytes the gzip magic): anything else is
refused as "not a gzip file" rather than parsed as text.

Weights: a format with a weight column (Matrix Market values, a third edge-list column, METIS
edge weights) gives float64 weights aligned with the edges, checked as they are parsed (a
negative, NaN or infinite weight, or a token that is not a number, is an error naming its line
and text); without one the weights are None and nothing is spent on them.

Line numbers in messages are global: each rank counts the lines of its range, the counts are
gathered, and a rank's first line number is the number of header lines plus the lines before it.
Rank-local errors are agreed on before any collective that another rank could wait in.
"""

from __future__ import annotations

import gzip
import os
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any, NamedTuple

import numpy as np

from ..comm.base import Communicator
from ..errors import GraphFormatError, InvalidArgumentValue, agree_on_errors
from .tokens import NEWLINE, Error, Tokens, tokenize

PAD = 8
"""Bytes in front of every range buffer, so that an 8-byte load ending at a token's end is valid."""

PIECE = 1 << 20
"""Bytes tokenized at once: small enough for the cache, large enough to amortize numpy calls."""

GZIP_MAGIC = b"\x1f\x8b"


# --------------------------------------------------------------------------------------------
# Opening files, reading headers


def is_gzip(path: str) -> bool:
    """True when the file starts with the gzip magic bytes; a file named ``.gz`` that does not
    is a GraphFormatError ("not a gzip file")."""
    with open(path, "rb") as f:
        compressed = f.read(2) == GZIP_MAGIC
    if not compressed and path.lower().endswith(".gz"):
        raise GraphFormatError(path, "not a gzip file")
    return compressed


def open_text(path: str) -> IO[bytes]:
    """The file's bytes, decompressed when it is a gzip stream."""
    return gzip.open(path, "rb") if is_gzip(path) else open(path, "rb")


def header_lines(path: str) -> Iterator[tuple[int, bytes, int]]:
    """Yield ``(line_number, line, end_offset)`` from the start of the (decompressed) file.

    For reading a header only: the caller stops after a few lines. ``end_offset`` is the
    uncompressed byte offset just past the line, where the next line starts.
    """
    offset = 0
    try:
        with open_text(path) as f:
            for number, line in enumerate(f, start=1):
                offset += len(line)
                yield number, line, offset
    except (OSError, EOFError, zlib.error) as exc:
        raise GraphFormatError(path, f"cannot read: {exc}") from None


def split_tokens(line: bytes) -> list[str]:
    """Whitespace tokens of one header line (decoded leniently, for messages)."""
    return line.decode("utf-8", errors="replace").split()


def header_int(path: str, line_number: int, token: str, what: str) -> int:
    """A non-negative integer from a header line, or a GraphFormatError naming the token."""
    if not token.isascii() or not token.isdigit():
        raise GraphFormatError(
            path, f"bad {what} {token!r}: expected a non-negative integer", line_number
        )
    return int(token)


# --------------------------------------------------------------------------------------------
# Byte ranges


@dataclass
class Chunk:
    """The lines of one rank's byte range: ``raw[begin:]``, empty or ending with a newline.

    ``raw[begin - 1]`` is whitespace and ``begin >= PAD``, so 8-byte loads ending at a token's end
    stay inside ``raw``.
    """

    raw: bytearray
    begin: int

    @property
    def nbytes(self) -> int:
        return len(self.raw) - self.begin


def read_range(path: str, rank: int, size: int, data_offset: int = 0) -> Chunk:
    """The lines starting in byte range ``rank`` of ``size``, from ``data_offset`` on.

    ``data_offset`` (an uncompressed offset at a line start) skips a header already parsed.
    """
    try:
        if is_gzip(path):
            raw, first = _read_gzip_range(path, rank, size)
        else:
            raw, first = _read_plain_range(path, rank, size)
    except (OSError, EOFError, zlib.error) as exc:
        raise GraphFormatError(path, f"cannot read: {exc}") from None
    # raw[PAD] is the byte just before the range (a virtual newline before the file's start): the
    # first line of the range starts after the first newline from there on.
    newline = raw.find(b"\n", PAD)
    begin = len(raw) if newline < 0 else newline + 1
    skip = data_offset - (first + begin - PAD)
    if skip > 0:
        begin = min(len(raw), begin + skip)
    if begin < len(raw) and raw[-1] != NEWLINE:
        raw.append(NEWLINE)  # the last line of the file may lack its newline
    return Chunk(raw, begin)


def _read_plain_range(path: str, rank: int, size: int) -> tuple[bytearray, int]:
    """(buffer, file offset of ``buffer[PAD]``) for a plain file."""
    total = os.path.getsize(path)
    lo, hi = total * rank // size, total * (rank + 1) // size
    if lo >= hi:
        return bytearray(b" " * PAD), lo
    with open(path, "rb") as f:
        tail = b""  # the rest of the last line that starts in the range
        f.seek(hi - 1)
        if f.read(1) != b"\n":
            while block := f.read(1 << 16):
                end = block.find(b"\n")
                tail += block if end < 0 else block[: end + 1]
                if end >= 0:
                    break
        start = max(lo - 1, 0)
        lead = PAD + (0 if lo > 0 else 1)  # a virtual newline before the file's start
        raw = bytearray(lead + hi - start + len(tail))
        raw[:lead] = b" " * PAD + b"\n" * (lead - PAD)
        f.seek(start)
        f.readinto(memoryview(raw)[lead : lead + hi - start])
        raw[lead + hi - start :] = tail
    return raw, start - (lead - PAD)


def _inflate(f: IO[bytes], step: int, path: str) -> Iterator[tuple[int, bytes]]:
    """Yield ``(compressed bytes consumed, output)`` per ``step`` input bytes (multi-member)."""
    inflater = zlib.decompressobj(wbits=31)
    consumed = 0
    while block := f.read(step):
        consumed += len(block)
        out = []
        while block:
            if inflater.eof:
                inflater = zlib.decompressobj(wbits=31)
            out.append(inflater.decompress(block))
            block = inflater.unused_data if inflater.eof else b""
        yield consumed, b"".join(out)
    if not inflater.eof:
        raise GraphFormatError(path, "truncated gzip stream (unexpected end of file)")


def _read_gzip_range(path: str, rank: int, size: int) -> tuple[bytearray, int]:
    """(buffer, uncompressed offset of ``buffer[PAD]``) for a gzip file.

    Range boundaries are the uncompressed offsets reached after whole input steps; every rank
    feeds the same steps from the stream's start, so neighbouring ranks agree on them exactly.
    """
    csize = os.path.getsize(path)
    step = max(64, min(1 << 20, csize // (16 * size)))
    lo = csize * rank // size // step * step
    hi = csize * (rank + 1) // size // step * step if rank < size - 1 else csize + 1
    if lo >= hi:
        return bytearray(b" " * PAD), 0
    parts: list[bytes] | None = [b"\n"] if lo == 0 else None
    previous = b"\n"  # last output byte so far (a virtual newline before the stream)
    produced, first = 0, -1
    with open(path, "rb") as f:
        blocks = _inflate(f, step, path)
        consumed = 0
        for consumed_after, out in blocks:
            if parts is not None:
                parts.append(out)
            elif consumed_after == lo:
                parts, first = [out[-1:] or previous], produced + len(out) - 1
            produced += len(out)
            previous = out[-1:] or previous
            consumed = consumed_after
            if consumed >= hi:
                break
        if consumed >= hi and previous != b"\n":  # finish the last line that starts in range
            for _, out in blocks:
                end = out.find(b"\n")
                parts.append(out if end < 0 else out[: end + 1])  # type: ignore[union-attr]
                if end >= 0:
                    break
    if parts is None:
        return bytearray(b" " * PAD), 0
    return bytearray(b" " * PAD) + b"".join(parts), first


# --------------------------------------------------------------------------------------------
# Pieces and the driver


@dataclass
class Piece:
    """What a format parser found in some lines (line numbers relative to the piece).

    ``records`` are the units the header counts (matrix entries, METIS vertex lines);
    ``record_lines`` their lines; ``record_blank`` marks empty records (METIS vertex lines
    without neighbours), None when there are none. ``weights``: float64, aligned with ``src``,
    None for an unweighted format. ``error`` = (line, column, message).
    """

    src: np.ndarray
    dst: np.ndarray
    records: int
    record_lines: np.ndarray
    record_blank: np.ndarray | None = None
    max_id: int = -1
    error: Error | None = None
    weights: np.ndarray | None = None


@dataclass
class TextHeader:
    """What rank 0 learns from the top of a file, broadcast to every rank.

    ``data_offset``/``lines``: uncompressed offset and number of lines of the header.
    ``n``: vertex count (None: max id + 1). ``records``: records the header announces (None: no
    count). ``line``: the header line that announces them (for messages). ``weighted``: the
    records carry edge weights.
    """

    n: int | None
    directed: bool
    weighted: bool = False
    data_offset: int = 0
    lines: int = 0
    records: int | None = None
    line: int | None = None
    params: dict[str, Any] = field(default_factory=dict)


class TextFormat:
    """A text graph format: header reader, piece parser and global checks."""

    name = ""
    comment_chars = b"#%"
    src_is_record = False  # METIS: the source of an edge is the index of its vertex line
    record_word = "entries"
    undirected_kind = ""  # what an undirected file of the format is, for messages

    def read_header(self, path: str) -> TextHeader:
        raise NotImplementedError

    def parse(self, tok: Tokens, header: TextHeader, record_base: int) -> Piece:
        raise NotImplementedError

    def check_totals(self, path: str, header: TextHeader, records: int, entries: int) -> None:
        """Checks of global totals; raise the same GraphFormatError on every rank."""

    def too_few(self, path: str, header: TextHeader, records: int) -> GraphFormatError:
        return GraphFormatError(
            path,
            f"truncated file: the header announces {header.records} {self.record_word}, "
            f"the file holds only {records}",
            header.line,
        )

    def too_many(self, header: TextHeader) -> str:
        return f"more {self.record_word} than the {header.records} the header announces"


def _pieces(chunk: Chunk) -> Iterator[tuple[int, int]]:
    """Bounds of consecutive pieces of about PIECE bytes, each ending after a newline."""
    lo, end = chunk.begin, len(chunk.raw)
    while lo < end:
        hi = chunk.raw.find(b"\n", min(lo + PIECE, end) - 1) + 1
        yield lo, hi
        lo = hi


@dataclass
class RangeResult:
    """A rank's parsed range (line numbers relative to the range)."""

    src: np.ndarray
    dst: np.ndarray
    weights: np.ndarray | None
    lines: int
    records: int
    max_id: int
    error: tuple[int, str] | None


def parse_range(
    fmt: TextFormat,
    chunk: Chunk,
    header: TextHeader,
    progress: Callable[[float, float], None] | None = None,
) -> RangeResult:
    """Tokenize and parse a rank's lines piece by piece (rank-local; errors are returned).

    ``progress(done, total)`` is called after each piece with this rank's bytes parsed so far.
    """
    buf = np.frombuffer(chunk.raw, dtype=np.uint8)
    srcs, dsts, weights = [], [], []
    lines = records = 0
    max_id = -1
    empty = np.zeros(0, dtype=np.int64)
    none = np.zeros(0, dtype=np.float64) if header.weighted else None
    for lo, hi in _pieces(chunk):
        tok = tokenize(buf, lo, hi, fmt.comment_chars)
        piece = fmt.parse(tok, header, records)
        if piece.error is not None:
            rest = int(np.count_nonzero(buf[hi:] == NEWLINE))
            error = (lines + piece.error[0], piece.error[2])
            return RangeResult(
                empty, empty, none, lines + tok.nlines + rest, records, max_id, error
            )
        srcs.append(piece.src)
        dsts.append(piece.dst)
        if piece.weights is not None:
            weights.append(piece.weights)
        if progress is not None:
            progress(hi - chunk.begin, chunk.nbytes)
        lines += tok.nlines
        records += piece.records
        max_id = max(max_id, piece.max_id)
    src = np.concatenate(srcs) if srcs else empty
    dst = np.concatenate(dsts) if dsts else empty
    if none is not None and weights:
        none = np.concatenate(weights)
    return RangeResult(src, dst, none, lines, records, max_id, None)


def find_record(fmt: TextFormat, chunk: Chunk, header: TextHeader, first: int) -> int | None:
    """Range-relative line of the first non-blank record with index >= ``first`` (re-parses)."""
    buf = np.frombuffer(chunk.raw, dtype=np.uint8)
    lines = records = 0
    for lo, hi in _pieces(chunk):
        tok = tokenize(buf, lo, hi, fmt.comment_chars)
        piece = fmt.parse(tok, header, records)
        index = np.arange(piece.records) + records >= first
        if piece.record_blank is not None:
            index &= ~piece.record_blank
        if index.any():
            return lines + int(piece.record_lines[int(np.argmax(index))])
        lines += tok.nlines
        records += piece.records
    return None


def _collective(error: GraphFormatError) -> GraphFormatError:
    error.all_ranks = True
    return error


class EdgeShare(NamedTuple):
    """What a rank read of a graph file: its edges ``src -> dst`` (int64) and their weights
    (float64; None for an unweighted file), the vertex count and whether the graph is directed
    (as the file says, or as the caller asked)."""

    src: np.ndarray
    dst: np.ndarray
    weights: np.ndarray | None
    n: int
    directed: bool


def agreed_directed(path: str, file_directed: bool, kind: str, directed: bool | None) -> bool:
    """The directedness of a graph read from ``path``, which says ``file_directed``: as the file
    says (``directed`` None), or as asked: False symmetrizes any file, True on an undirected
    one (``kind``: what it is) is an ``InvalidArgumentValue`` naming the argument. Decided
    from replicated data, so every rank raises alike."""
    if directed is None:
        return file_directed
    if directed and not file_directed:
        raise InvalidArgumentValue(
            f"directed: True, but {path} is {kind}; pass directed=None (as the file says) or False"
        )
    return bool(directed)


def read_text(
    fmt: TextFormat,
    path: str,
    comm: Communicator,
    progress: Callable[[float, float], None] | None = None,
    *,
    directed: bool | None = None,
) -> EdgeShare:
    """Read a text graph collectively: this rank's edges and weights, ``n`` and directedness
    (``directed``: as in ``agreed_directed``, checked against the header before the body is
    read).

    ``progress(done, total)`` reports this rank's parsing (bytes of its range).
    """
    with agree_on_errors(comm):
        header = fmt.read_header(path) if comm.rank == 0 else None
    header = comm.bcast_object(header)
    directed = agreed_directed(path, header.directed, fmt.undirected_kind, directed)
    with agree_on_errors(comm):
        chunk = read_range(path, comm.rank, comm.size, header.data_offset)
    result = parse_range(fmt, chunk, header, progress)

    totals = comm.allgather_object((result.lines, result.records, result.max_id, result.error))
    lines_before = header.lines + sum(t[0] for t in totals[: comm.rank])
    records_before = sum(t[1] for t in totals[: comm.rank])
    line0 = header.lines
    for lines, _, _, error in totals:  # the earliest rank's error (= earliest line) wins
        if error is not None:
            raise _collective(GraphFormatError(path, error[1], line0 + error[0] + 1))
        line0 += lines
    records = sum(t[1] for t in totals)

    if header.records is not None:
        if records < header.records:
            raise _collective(fmt.too_few(path, header, records))
        if records > header.records:  # the first extra record (blank METIS lines tolerated)
            mine = None
            if records_before + result.records > header.records:
                mine = find_record(fmt, chunk, header, header.records - records_before)
            where = comm.allgather_object(None if mine is None else lines_before + mine + 1)
            line = next((w for w in where if w is not None), None)
            if line is not None:
                raise _collective(GraphFormatError(path, fmt.too_many(header), line))
    del chunk
    entries = comm.allreduce(int(result.src.shape[0]))
    fmt.check_totals(path, header, records, entries)
    n = header.n
    if n is None:
        n = comm.allreduce(result.max_id, op="max") + 1
    if fmt.src_is_record:
        result.src += records_before  # vertex lines before this rank's range
    return EdgeShare(result.src, result.dst, result.weights, n, directed)
