"""Distributed reading of text graph files: byte-range split, vectorized tokenizer, driver.

Every rank reads only its share of the file: the file is cut into ``p`` equal byte ranges and a
rank takes the lines that *start* in its range (it reads one byte before its range to see whether
a line starts there, and past its range to the end of its last line). A gzip stream cannot be
entered in the middle, so for ``.gz`` files the ranges are cut in compressed bytes, at the block
boundaries of one fixed decompression schedule that every rank runs identically from the start
of the stream; rank ``r`` decompresses everything up to the end of its range and keeps only the
part after its start. Decompression is thus serial per rank (the last rank inflates the whole
stream); tokenizing and parsing are still split ``p`` ways.

The tokenizer never loops per line or per token: tokens are runs of bytes above ``' '`` found
with one comparison and one difference over the bytes; the line of a token is a binary search of
its start among the newline positions; integer tokens are converted eight digits at a time with
SWAR arithmetic on unaligned 64-bit loads (which also checks that every byte is a digit).

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
from typing import IO, Any

import numpy as np

from ..comm.base import Communicator
from ..errors import GraphFormatError, agree_on_errors

PAD = 8
"""Bytes in front of every range buffer, so that an 8-byte load ending at a token's end is valid."""

PIECE = 1 << 20
"""Bytes tokenized at once: small enough for the cache, large enough to amortize numpy calls."""

GZIP_MAGIC = b"\x1f\x8b"
NEWLINE = 10

_U = np.uint64
_ALL_ONES = (1 << 64) - 1
# For a token of L <= 8 bytes ending at byte e, the 8-byte little-endian load at e - 8 holds the
# token in its high L bytes; the low 8 - L bytes belong to earlier text and are replaced by '0'.
_KEEP = np.array([_ALL_ONES & ~((1 << (8 * (8 - k))) - 1) for k in range(9)], dtype=_U)
_ZEROS = np.array([0x3030303030303030 & ((1 << (8 * (8 - k))) - 1) for k in range(9)], dtype=_U)
_NUMBER_BYTES = np.zeros(256, dtype=bool)
_NUMBER_BYTES[np.frombuffer(b"0123456789+-.eE", dtype=np.uint8)] = True
_NUMBER_BYTES[:33] = True  # whitespace separates tokens


# --------------------------------------------------------------------------------------------
# Opening files, reading headers


def is_gzip(path: str) -> bool:
    """True when the file starts with the gzip magic bytes."""
    with open(path, "rb") as f:
        return f.read(2) == GZIP_MAGIC


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
# Tokenizer


@dataclass
class Tokens:
    """Tokens of lines ``[lo, hi)`` of a buffer, comment lines removed.

    ``starts``/``ends`` are byte positions in ``buf``; the tokens of line ``l`` (counted from 0 at
    ``lo``) are ``bounds[l]:bounds[l + 1]``; ``comment`` flags comment lines (None when there is
    none). Token sets are given as an index array or a slice (a column of a table).
    """

    buf: np.ndarray
    lo: int
    hi: int
    starts: np.ndarray
    ends: np.ndarray
    bounds: np.ndarray
    comment: np.ndarray | None

    @property
    def count(self) -> int:
        return int(self.starts.shape[0])

    @property
    def nlines(self) -> int:
        return int(self.bounds.shape[0]) - 1

    def per_line(self) -> np.ndarray:
        """Number of tokens on each line."""
        return np.diff(self.bounds)

    def lines(self) -> np.ndarray:
        """The line of every token."""
        return np.repeat(np.arange(self.nlines), self.per_line())

    def line_of(self, i: int) -> int:
        return int(np.searchsorted(self.bounds, i, side="right")) - 1

    def text(self, i: int) -> str:
        """Token ``i`` as text (for messages)."""
        token = self.buf[self.starts[i] : self.ends[i]].tobytes()
        return token.decode("utf-8", errors="replace")

    def non_number(self) -> np.ndarray:
        """Mask over all tokens: True where a byte is not one of ``0-9 + - . e E``."""
        odd = np.flatnonzero(~_NUMBER_BYTES[self.buf[self.lo : self.hi]]) + self.lo
        token = np.searchsorted(self.starts, odd, side="right") - 1
        inside = (token >= 0) & (odd < self.ends[token])  # not in a dropped comment line
        mask = np.zeros(self.count, dtype=bool)
        mask[token[inside]] = True
        return mask


def tokenize(buf: np.ndarray, lo: int, hi: int, comment_chars: bytes) -> Tokens:
    """Split lines ``buf[lo:hi]`` (``buf[lo - 1]`` whitespace, ``buf[hi - 1]`` a newline).

    A token is a maximal run of bytes above ``' '``. A line whose first token starts with one of
    ``comment_chars`` is a comment line; its tokens are dropped.
    """
    inside = buf[lo - 1 : hi] > 32
    changes = np.flatnonzero(inside[1:] != inside[:-1]) + lo
    starts, ends = changes[0::2], changes[1::2]
    newlines = np.flatnonzero(buf[lo:hi] == NEWLINE) + lo
    bounds = np.zeros(newlines.shape[0] + 1, dtype=np.int64)
    bounds[1:] = np.searchsorted(starts, newlines)
    comment = None
    marks = np.zeros(256, dtype=bool)
    marks[np.frombuffer(comment_chars, dtype=np.uint8)] = True
    counts = np.diff(bounds)
    firsts = bounds[:-1][counts > 0]
    commented = firsts[marks[buf[starts[firsts]]]]
    if commented.size:
        comment = np.zeros(newlines.shape[0], dtype=bool)
        comment[np.searchsorted(bounds, commented, side="right") - 1] = True
        keep = ~np.repeat(comment, counts)
        starts, ends = starts[keep], ends[keep]
        counts[comment] = 0
        np.cumsum(counts, out=bounds[1:])
    return Tokens(buf, lo, hi, starts, ends, bounds, comment)


def _digits8(x: np.ndarray) -> np.ndarray:
    """Value of 8 ASCII digits per uint64 (first digit in the lowest byte), SWAR."""
    x = ((x & _U(0x0F0F0F0F0F0F0F0F)) * _U(2561)) >> _U(8)
    x = ((x & _U(0x00FF00FF00FF00FF)) * _U(6553601)) >> _U(16)
    return ((x & _U(0x0000FFFF0000FFFF)) * _U(42949672960001)) >> _U(32)


def _all_digits(x: np.ndarray) -> np.ndarray:
    """True where every byte of the uint64 is an ASCII digit."""
    high = _U(0xF0F0F0F0F0F0F0F0)
    threes = _U(0x3030303030303030)
    return ((x & high) == threes) & (((x + _U(0x0606060606060606)) & high) == threes)


def parse_uints(tok: Tokens, index: np.ndarray | slice) -> tuple[np.ndarray, np.ndarray]:
    """Values (uint64) of tokens ``index`` and a mask of those that are decimal integers.

    A token is valid when it has 1 to 19 digits and nothing else (so the value is < 10**19).
    """
    buf = tok.buf
    windows = np.ndarray((buf.shape[0] - 7,), dtype="<u8", buffer=buf, strides=(1,))
    ends = tok.ends[index]
    length = ends - tok.starts[index]
    width = np.minimum(length, 8)
    x = (windows[ends - 8] & _KEEP[width]) | _ZEROS[width]  # the last 8 digits
    valid = _all_digits(x) & (length <= 19)
    values = _digits8(x)
    long = np.flatnonzero(length > 8)
    for shift, scale in ((8, 10**8), (16, 10**16)):  # digits 9-16 and 17-19 from the end
        long = long[length[long] > shift]
        if long.size == 0:
            break
        width = np.minimum(length[long] - shift, 8)
        x = (windows[ends[long] - 8 - shift] & _KEEP[width]) | _ZEROS[width]
        valid[long] &= _all_digits(x)
        values[long] += _digits8(x) * _U(scale)
    return values, valid


def id_error(text: str, what: str, limit: str = "2**63") -> str:
    """Message for a token that should be a vertex id and is not one."""
    if text.startswith("-") and text[1:].isdigit():
        return f"negative {what} {text}"
    if text.isascii() and text.isdigit():
        return f"{what} {text} too large (must be < {limit})"
    return f"bad token {text!r}: expected a {what} (a non-negative integer)"


# --------------------------------------------------------------------------------------------
# Pieces and the driver


@dataclass
class Piece:
    """What a format parser found in some lines (line numbers relative to the piece).

    ``records`` are the units the header counts (matrix entries, METIS vertex lines);
    ``record_lines`` their lines; ``record_blank`` marks empty records (METIS vertex lines
    without neighbours), None when there are none. ``error`` = (line, column, message).
    """

    src: np.ndarray
    dst: np.ndarray
    records: int
    record_lines: np.ndarray
    record_blank: np.ndarray | None = None
    max_id: int = -1
    error: tuple[int, int, str] | None = None


def fixed_columns(
    tok: Tokens, k: int, what: str = ""
) -> tuple[list[slice], np.ndarray, tuple[int, int, str] | None]:
    """The tokens of each of ``k`` columns, the line of each record, and a column error.

    Non-blank lines must hold exactly ``k`` tokens; records stop before the first line that
    does not (reported as the error).
    """
    counts = tok.per_line()
    wrong = np.flatnonzero((counts != k) & (counts != 0))
    error, limit = None, tok.nlines
    if wrong.size:
        limit = int(wrong[0])
        error = (limit, 0, f"expected {k} columns{what}, found {int(counts[limit])}")
    ntok = int(tok.bounds[limit])
    record_lines = np.flatnonzero(counts[:limit])
    return [slice(j, ntok, k) for j in range(k)], record_lines, error


def first_error(
    tok: Tokens, index: np.ndarray | slice, bad: np.ndarray, column: int, message: Any
) -> tuple[int, int, str] | None:
    """(line, column, message(text)) of the first token ``index[bad]``, or None."""
    if not bad.any():
        return None
    position = int(np.argmax(bad))
    if isinstance(index, slice):
        i = index.start + position * index.step
    else:
        i = int(index[position])
    return tok.line_of(i), column, message(tok.text(i))


def number_column_error(
    tok: Tokens, index: np.ndarray | slice, column: int, what: str
) -> tuple[int, int, str] | None:
    """The first token of a value column (a weight, a matrix value) that is not a number."""
    bad = tok.non_number()[index]
    return first_error(tok, index, bad, column, lambda t: f"bad {what} {t!r}: expected a number")


def earliest(*errors: tuple[int, int, str] | None) -> tuple[int, int, str] | None:
    """The error on the earliest line (leftmost column on ties)."""
    found = [e for e in errors if e is not None]
    return min(found, key=lambda e: (e[0], e[1])) if found else None


@dataclass
class TextHeader:
    """What rank 0 learns from the top of a file, broadcast to every rank.

    ``data_offset``/``lines``: uncompressed offset and number of lines of the header.
    ``n``: vertex count (None: max id + 1). ``records``: records the header announces (None: no
    count). ``line``: the header line that announces them (for messages).
    """

    n: int | None
    directed: bool
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
    srcs, dsts = [], []
    lines = records = 0
    max_id = -1
    for lo, hi in _pieces(chunk):
        tok = tokenize(buf, lo, hi, fmt.comment_chars)
        piece = fmt.parse(tok, header, records)
        if piece.error is not None:
            rest = int(np.count_nonzero(buf[hi:] == NEWLINE))
            error = (lines + piece.error[0], piece.error[2])
            empty = np.zeros(0, dtype=np.int64)
            return RangeResult(empty, empty, lines + tok.nlines + rest, records, max_id, error)
        srcs.append(piece.src)
        dsts.append(piece.dst)
        if progress is not None:
            progress(hi - chunk.begin, chunk.nbytes)
        lines += tok.nlines
        records += piece.records
        max_id = max(max_id, piece.max_id)
    empty = np.zeros(0, dtype=np.int64)
    src = np.concatenate(srcs) if srcs else empty
    dst = np.concatenate(dsts) if dsts else empty
    return RangeResult(src, dst, lines, records, max_id, None)


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


def read_text(
    fmt: TextFormat,
    path: str,
    comm: Communicator,
    progress: Callable[[float, float], None] | None = None,
) -> tuple[np.ndarray, np.ndarray, int, bool]:
    """Read a text graph collectively: this rank's ``(src, dst)``, ``n`` and directedness.

    ``progress(done, total)`` reports this rank's parsing (bytes of its range).
    """
    with agree_on_errors(comm):
        header = fmt.read_header(path) if comm.rank == 0 else None
    header = comm.bcast_object(header)
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
    return result.src, result.dst, n, header.directed
