"""The tokenizer of the text graph formats and the conversion of its tokens to numbers.

The tokenizer never loops per line or per token: tokens are runs of bytes above ``' '`` found
with one comparison and one difference over the bytes; the line of a token is a binary search of
its start among the newline positions; integer tokens are converted eight digits at a time with
SWAR arithmetic on unaligned 64-bit loads (which also checks that every byte is a digit). Buffers
hold at least 8 bytes before their first token (``text.PAD``), so every such load is inside.

Weights (``parse_weights``) are float64: a decimal integer token converts through the SWAR path
(exactly: a uint64 rounded once); a plain decimal ``I.F`` of at most ``EXACT_DIGITS`` digits as
``(I * 10**k + F) / 10**k``, both operands exact in float64 so the one rounding of the division
gives the correctly rounded value, as ``strtod`` does; anything else (signs, exponents, longer
decimals) through numpy's string conversion. A weight must be a non-negative finite number; the
first that is not is reported with its line and text.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

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

EXACT_DIGITS = 15
"""Digits of a plain decimal converted by one exact division: ``I * 10**k + F < 10**15 < 2**53``
and ``10**k`` are exact float64 values."""
_POW10 = np.array([10**k for k in range(EXACT_DIGITS + 1)], dtype=_U)
LONGEST_NUMBER = 64
"""Longest weight token converted through numpy's string conversion (longer ones one by one)."""

Error = tuple[int, int, str]
"""(line within the piece, column, message)."""


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
    return _uints(tok.buf, tok.starts[index], tok.ends[index])


def _uints(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Values (uint64) of the digit runs ``buf[starts:ends]`` and a mask of those made of at
    most 19 digits and nothing else (an empty run is 0, valid)."""
    windows = np.ndarray((buf.shape[0] - 7,), dtype="<u8", buffer=buf, strides=(1,))
    length = ends - starts
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


def earliest(*errors: tuple[int, int, str] | None) -> tuple[int, int, str] | None:
    """The error on the earliest line (leftmost column on ties)."""
    found = [e for e in errors if e is not None]
    return min(found, key=lambda e: (e[0], e[1])) if found else None


def parse_weights(
    tok: Tokens, index: np.ndarray | slice, column: int, what: str = "weight"
) -> tuple[np.ndarray, Error | None]:
    """float64 values of the weight tokens ``index`` and the error of the first one that is not
    a non-negative finite number (its text named as ``what``), or None. ``-0`` becomes ``0``."""
    starts, ends = tok.starts[index], tok.ends[index]
    values, parsed = _uints(tok.buf, starts, ends)
    weights = values.astype(np.float64)
    rest = np.flatnonzero(~parsed)
    if rest.size:
        weights[rest], parsed[rest] = _reals(tok, index, rest)
    bad = ~parsed | ~np.isfinite(weights) | (weights < 0)
    error = first_error(tok, index, bad, column, lambda text: weight_message(text, what))
    weights += 0.0  # -0.0 + 0.0 is +0.0: one zero, whatever the text
    return weights, error


def weight_message(text: str, what: str = "weight") -> str:
    """Why the token ``text`` is not a weight (a non-negative finite number)."""
    value = None
    numeric = _NUMBER_BYTES[np.frombuffer(text.encode(errors="replace"), np.uint8)].all()
    if numeric or text.lstrip("+-").lower() in ("inf", "infinity", "nan"):
        try:
            value = float(text)
        except ValueError:
            pass
    if value is not None and math.isnan(value):
        return f"{what} {text} is NaN: weights must be numbers"
    if value is not None and math.isinf(value):
        return f"infinite {what} {text}: weights must be finite"
    if value is not None and value < 0:
        return f"negative {what} {text}: weights must be non-negative"
    return f"bad {what} {text!r}: expected a number"


def _reals(tok: Tokens, index: np.ndarray | slice, rest: np.ndarray) -> tuple[np.ndarray, Any]:
    """(values, parsed) of the weight tokens ``rest`` (positions in ``index``) that are not
    plain integers: plain decimals exactly by one division, the others by numpy's conversion
    of their text; a token of bytes other than ``0-9 + - . e E`` is not parsed."""
    buf = tok.buf
    starts, ends = tok.starts[index][rest], tok.ends[index][rest]
    values = np.zeros(rest.shape[0], dtype=np.float64)
    parsed = np.zeros(rest.shape[0], dtype=bool)
    dots = np.flatnonzero(buf[tok.lo : tok.hi] == ord(".")) + tok.lo
    token = np.searchsorted(starts, dots, side="right") - 1
    inside = (token >= 0) & (dots < ends[np.maximum(token, 0)])
    dot_count = np.bincount(token[inside], minlength=starts.shape[0])
    dot = np.full(starts.shape[0], -1, dtype=np.int64)
    dot[token[inside]] = dots[inside]
    plain = np.flatnonzero((dot_count == 1) & (ends - starts >= 2))
    plain = plain[ends[plain] - starts[plain] - 1 <= EXACT_DIGITS]
    whole, whole_ok = _uints(buf, starts[plain], dot[plain])
    fraction, fraction_ok = _uints(buf, dot[plain] + 1, ends[plain])
    digits = ends[plain] - dot[plain] - 1
    mantissa = whole * _POW10[digits] + fraction  # < 10**15: exact in float64
    values[plain] = mantissa.astype(np.float64) / _POW10[digits].astype(np.float64)
    parsed[plain] = whole_ok & fraction_ok
    others = np.flatnonzero(~parsed)
    others = others[~tok.non_number()[index][rest[others]]]
    short = ends[others] - starts[others] <= LONGEST_NUMBER
    values[others[short]], parsed[others[short]] = _convert_text(
        buf, starts[others[short]], ends[others[short]]
    )
    for i in others[~short].tolist():  # rare: one by one
        try:
            values[i], parsed[i] = float(buf[starts[i] : ends[i]].tobytes()), True
        except ValueError:
            pass
    return values, parsed


def _convert_text(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> tuple[Any, Any]:
    """(values, parsed) of the tokens ``buf[starts:ends]`` through numpy's string conversion,
    one by one where a token of the batch is not a number."""
    if starts.shape[0] == 0:
        return np.zeros(0), np.zeros(0, dtype=bool)
    lengths = ends - starts
    width = int(lengths.max())
    chars = np.zeros((starts.shape[0], width), dtype=np.uint8)
    for j in range(width):
        inside = np.flatnonzero(lengths > j)
        chars[inside, j] = buf[starts[inside] + j]
    texts = chars.view(f"S{width}").ravel()
    try:
        return texts.astype(np.float64), np.ones(starts.shape[0], dtype=bool)
    except ValueError:
        values = np.zeros(starts.shape[0], dtype=np.float64)
        parsed = np.zeros(starts.shape[0], dtype=bool)
        for i, text in enumerate(texts.tolist()):
            try:
                values[i], parsed[i] = float(text), True
            except ValueError:
                pass
        return values, parsed
