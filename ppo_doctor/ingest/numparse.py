"""Exact, vectorised parsing of JSON numbers that lie as byte ranges in one buffer.

Why: Python's ``float()`` and ``json.loads`` spend about 0.45 µs on each 17-digit number
(David Gay's correctly rounded ``strtod``), most of the time of a million-point read.  Here
the numbers are decoded with numpy, a block of texts at a time:

* plain numbers (1 to 8 integer digits, an optional fraction: what loggers write for most
  metrics) are read straight from the 8-byte words around them: the '.' is found with a
  zero-byte test, digits are checked and read eight at a time with fast_float's SWAR routines
  (``is_made_of_eight_digits_fast``, ``parse_eight_digits_unrolled``; D. Lemire, "Number
  parsing at a gigabyte per second", Software: Practice and Experience 51(8), 2021);
* the others are checked against the whole JSON grammar (RFC 8259 §6, Python's
  ``json.scanner.NUMBER_RE``: sign, integer part, fraction, exponent) on a bit mask with one
  "is a digit" bit per byte, then read the same way;
* the decimal ``sig * 10**exp10`` becomes the correctly rounded float64 in one IEEE operation
  when ``sig <= 2**53`` and ``|exp10| <= 22`` (W. D. Clinger, "How to read floating point
  numbers accurately", PLDI 1990); else, on x87 extended precision (64-bit significand), in
  one extended operation rounded once more to double.  That second rounding is wrong only
  when the extended result lies exactly halfway between two doubles (its 11 low significand
  bits are ``10000000000``); those values are left to the caller.

Contract of :func:`parse_numbers`: ``ok[i]`` is True only when ``data[start[i]:end[i]]`` is a
JSON number or one of the ``NaN`` / ``Infinity`` / ``-Infinity`` tokens Python's ``json``
accepts, and then ``values[i] == float(json.loads(text))`` bit for bit (``-0`` is the integer
0, ``-0.0`` is negative zero).  Everything else (strings, objects, whitespace, more than 19
significant digits, exponents beyond what one operation covers, ...) has ``ok[i]`` False and
is the caller's to parse.
"""

from __future__ import annotations

import numpy as np

_U = np.uint64
# Longest text (sign excluded) decoded here: four 8-byte words.
_MAX_LEN = 32
# Bytes that must exist before the first and after the last text of a buffer.
PAD = 48
# Rows per block: small enough for the temporaries to stay in cache.
_BLOCK = 32_768
_ZEROS = 0x3030303030303030  # eight ASCII '0'
_NAN = int.from_bytes(b"NaN", "little")
_INF = int.from_bytes(b"Infinity", "little")
_DOT, _MINUS, _PLUS, _ZERO = ord("."), ord("-"), ord("+"), ord("0")

_POW10_U64 = np.array([10**k if k <= 19 else 0 for k in range(25)], dtype=np.uint64)
_POW10_F64 = np.array([10.0**k for k in range(23)])  # exact doubles up to 1e22 (5**22 < 2**53)
# The low ``k`` bytes of a word set, and all but them, for k = 0..8.
_LOW_BYTES = np.array([(1 << (8 * k)) - 1 for k in range(9)], dtype=np.uint64)
_HIGH_BYTES = ~_LOW_BYTES
_DOTS = 0x2E2E2E2E2E2E2E2E  # eight '.'
_LOW7 = 0x7F7F7F7F7F7F7F7F
# Third 8-digit group of a 20..24-digit fraction: at most 1843 keeps the whole number below
# 2**64 (1843e16 + 1e16 < 18446744073709551616).
_MAX_TOP_GROUP = 1843
# Index of the lowest set bit of a 64-bit word from a de Bruijn multiplication.
_DEBRUIJN = 0x03F79D71B4CB0A89
_DEBRUIJN_POS = np.zeros(64, dtype=np.int64)
_DEBRUIJN_POS[[((1 << i) * _DEBRUIJN % 2**64) >> 58 for i in range(64)]] = np.arange(64)


def _x87() -> bool:
    """True when numpy's longdouble is x87 extended precision, laid out as this module reads it
    (64-bit significand with explicit integer bit in the low 8 bytes) and computing at full
    precision.  Elsewhere (MSVC, Apple silicon, binary128, double-double) the values that need
    it go back to the caller."""
    if np.finfo(np.longdouble).nmant != 63 or np.dtype(np.longdouble).itemsize != 16:
        return False
    probe = np.array([1.5], dtype=np.longdouble)
    if int(probe.view(np.uint64)[0]) != 0xC000000000000000:
        return False
    one = np.longdouble(1)
    return bool(one + np.longdouble(2.0**-60) != one)  # precision control not set to double


_EXTENDED = _x87()
_MAX_EXT_EXP = 27  # 10**27 = 5**27 * 2**27 is exact in a 64-bit significand
_POW10_EXT = np.ldexp(
    np.array([5**k for k in range(_MAX_EXT_EXP + 1)], dtype=np.uint64).astype(np.longdouble), np.arange(_MAX_EXT_EXP + 1)
)


def parse_numbers(data: bytes | np.ndarray, start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Decode the JSON numbers ``data[start[i]:end[i]]``; return ``(values, ok)`` (see the module doc).

    Words are read around each text, so ``data`` must have :data:`PAD` bytes before the first
    range and after the last one (any content: they are masked out).
    """
    buf = np.frombuffer(data, dtype=np.uint8) if not isinstance(data, np.ndarray) else data
    start = np.asarray(start, dtype=np.int64)
    end = np.asarray(end, dtype=np.int64)
    n = len(start)
    values = np.zeros(n)
    ok = np.zeros(n, dtype=bool)
    if n == 0:
        return values, ok
    if start.min() < PAD or end.max() + PAD > len(buf) or (end < start).any():
        raise ValueError("number ranges must lie PAD bytes inside the buffer")
    # Each number as a significand and a power of ten: first the plain ones, block by block, then
    # all the others together (few: one pass over them all keeps numpy's calls long), then the
    # doubles.  Blocks keep the temporaries in cache.
    first = np.empty(n, dtype=np.int64)
    size = np.empty(n, dtype=np.int64)
    neg = np.empty(n, dtype=bool)
    sig = np.empty(n, dtype=np.uint64)
    exp10 = np.empty(n, dtype=np.int64)
    is_int = np.empty(n, dtype=bool)
    odd_parts: list[np.ndarray] = []
    for at in _blocks(n):
        length = end[at] - start[at]
        neg[at] = (buf[start[at]] == _MINUS) & (length > 1)
        first[at] = start[at] + neg[at]
        size[at] = length - neg[at]
        fits = (size[at] >= 1) & (size[at] <= _MAX_LEN)
        sig[at], exp10[at], good, plain, is_int[at] = _plain(buf, first[at], size[at])
        ok[at] = good & fits
        odd_parts.append(at.start + np.flatnonzero(~plain & fits))
    odd = np.concatenate(odd_parts)
    for at in _blocks(len(odd)):
        idx = odd[at]
        ok[idx], sig[idx], exp10[idx], is_int[idx] = _general(buf, first[idx], size[idx])
    words = word_view(buf)
    for at in _blocks(n):
        vals, exact = _to_double(sig[at], exp10[at])
        ok[at] &= exact
        # A JSON integer is a Python int: -0 is 0, not -0.0.
        sign = neg[at] & ~(is_int[at] & (sig[at] == 0))
        vals[sign] = -vals[sign]
        # Special tokens of Python's json (-NaN is not one).
        head = words[first[at]]
        nan = ~neg[at] & (size[at] == 3) & ((head & _U(0xFFFFFF)) == _U(_NAN))
        inf = (size[at] == 8) & (head == _U(_INF))
        vals[nan] = np.nan
        vals[inf] = np.where(neg[at][inf], -np.inf, np.inf)
        values[at] = vals
        ok[at] |= nan | inf
    return values, ok


def _blocks(n: int) -> list[slice]:
    """``range(n)`` in blocks of at most _BLOCK: small enough for the temporaries to stay in cache."""
    return [slice(lo, lo + _BLOCK) for lo in range(0, n, _BLOCK)]


def word_view(buf: np.ndarray) -> np.ndarray:
    """A view of ``buf`` as little-endian uint64 starting at every byte (unaligned reads)."""
    return np.ndarray((len(buf) - 7,), dtype="<u8", buffer=buf, offset=0, strides=(1,))


def _lowest(bits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Position of the lowest set bit of non-zero words, and the words without that bit."""
    low = bits & (~bits + _U(1))
    return _DEBRUIJN_POS[(low * _U(_DEBRUIJN)) >> _U(58)], bits & (bits - _U(1))


def _plain(buf: np.ndarray, first: np.ndarray, size: np.ndarray) -> tuple[np.ndarray, ...]:
    """Numbers written plainly, 1 to 8 integer digits and an optional fraction ("0.0535", "12.5",
    "22208"), decoded straight from the buffer without classifying every byte: significand,
    decimal exponent, validity, whether the text has that shape, and whether it is an integer."""
    words = word_view(buf)
    head = words[first]  # the first eight bytes of each text (and what follows a shorter one)
    # the first '.' among the text's first eight bytes (exact zero-byte test of head ^ '........')
    t = head ^ _U(_DOTS)
    dots = ~(((t & _U(_LOW7)) + _U(_LOW7)) | t | _U(_LOW7)) & _LOW_BYTES[np.minimum(size, 8)]
    has_dot = dots != 0
    int_len = np.where(has_dot, _lowest(dots)[0] >> 3, size)
    # the integer digits, right-aligned in a word: the bytes shifted in are leading zeros
    v = (head ^ _U(_ZEROS)) << (_U(8) * (_U(8) - np.clip(int_len, 1, 8).astype(np.uint64)))
    int_val = _eight_digits(v)
    lead = head & _U(0xFF)
    frac_len = np.where(has_dot, size - int_len - 1, 0)
    frac_val, top, frac_digits = _digits(words, first, int_len + 1, int_len + 1 + frac_len)
    plain = (
        (int_len >= 1)
        & (int_len <= 8)
        & _is_digits(v)
        & ((int_len == 1) | (lead != _U(_ZERO)))
        & frac_digits
        & (~has_dot | (frac_len >= 1))
    )
    zero_int = int_val == 0
    good = plain & np.where(zero_int, (frac_len <= 24) & (top <= _U(_MAX_TOP_GROUP)), int_len + frac_len <= 19)
    sig = np.where(zero_int, frac_val, int_val * _POW10_U64[np.clip(frac_len, 0, 24)] + frac_val)
    return sig, -frac_len, good, plain, ~has_dot


def _general(buf: np.ndarray, first: np.ndarray, size: np.ndarray) -> tuple[np.ndarray, ...]:
    """Any JSON number: validity, significand, decimal exponent and whether it is an integer."""
    m = len(first)
    n_words = (int(size.max()) + 7) // 8
    width = n_words + 1  # a zero word, then the text and what follows it
    words = word_view(buf)
    # Row r + 1 holds text r after a zero word; digit windows of short texts start in that word
    # or the row before (always masked out), and a read at ``size`` may reach the zero row after
    # the last text.
    rows = np.zeros((m + 2, width), dtype=np.uint64)
    for k in range(1, width):
        rows[1 : m + 1, k] = words[first + 8 * (k - 1)]
    row_bytes = rows.view(np.uint8).reshape(-1)
    row_words = word_view(row_bytes)
    base = np.arange(1, m + 1) * (8 * width) + 8  # offset of each text in ``row_bytes``
    # One "is a digit" bit per byte; every row is a whole number of bytes of bits, so packing
    # the flat array keeps the rows apart.
    packed = np.zeros((m, 8), dtype=np.uint8)
    text_rows = row_bytes[8 * width : 8 * width * (m + 1)]
    packed[:, :width] = np.packbits((text_rows - np.uint8(_ZERO)) < 10, bitorder="little").reshape(m, width)
    digit_bits = packed.view("<u8")[:, 0] >> _U(8)
    usize = size.astype(np.uint64)
    inside = (_U(1) << usize) - _U(1)
    # Non-digit bytes of the text, plus a sentinel bit at ``size`` so that "none left" reads
    # as position ``size``.
    other = (~digit_bits & inside) | (_U(1) << usize)

    def byte_at(pos: np.ndarray | int) -> np.ndarray:
        return row_bytes[base + pos]

    # -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?
    int_end, after_int = _lowest(other)
    has_dot = (int_end < size) & (byte_at(int_end) == _DOT)
    frac_end, after_frac = _lowest(after_int)
    mant_end = np.where(has_dot, frac_end, int_end)
    after_mant = np.where(has_dot, after_frac, after_int)
    has_exp = (mant_end < size) & ((byte_at(mant_end) | np.uint8(0x20)) == ord("e"))
    sign_pos, after_sign = _lowest(after_mant)
    sign_byte = byte_at(sign_pos)
    has_sign = has_exp & (sign_pos == mant_end + 1) & ((sign_byte == _PLUS) | (sign_byte == _MINUS))
    exp_negative = has_sign & (sign_byte == _MINUS)
    exp_start = mant_end + 1 + has_sign
    frac_len = (frac_end - int_end - 1) * has_dot
    exp_len = (size - exp_start) * has_exp
    lead = byte_at(0)
    zero_int = (int_end == 1) & (lead == _ZERO)
    good = (
        (int_end >= 1)
        & (zero_int | (lead != _ZERO))
        & (~has_dot | (frac_len >= 1))
        & ((mant_end == size) | has_exp)
        & ((np.where(has_sign, after_sign, after_mant) & inside) == 0)
        & (~has_exp | (exp_len >= 1))
        # the significand must fit in 64 bits and the exponent in one table lookup
        & np.where(zero_int, frac_len <= 24, int_end + frac_len <= 19)
        & (exp_len <= 4)
    )
    int_val, _, _ = _digits(row_words, base, 0, np.where(good, int_end, 0))
    frac_val, top, _ = _digits(row_words, base, int_end + 1, np.where(good & has_dot, frac_end, int_end + 1))
    good &= top <= _U(_MAX_TOP_GROUP)
    exp_val, _, _ = _digits(row_words, base, exp_start, np.where(good & has_exp, size, exp_start))
    exp10 = np.where(exp_negative, -exp_val.astype(np.int64), exp_val.astype(np.int64)) - frac_len
    sig = np.where(zero_int, frac_val, int_val * _POW10_U64[np.minimum(frac_len, 24)] + frac_val)
    return good, sig, exp10, ~has_dot & ~has_exp


def _digits(words: np.ndarray, base: np.ndarray, a: np.ndarray | int, b: np.ndarray) -> tuple[np.ndarray, ...]:
    """Value of the decimal digits at positions ``[a, b)`` after ``base`` (none when ``b <= a``,
    at most 24), eight at a time from the right; also the third group of eight (0 when absent)
    and whether those bytes are all digits."""
    value = np.zeros(len(base), dtype=np.uint64)
    top = np.zeros(len(base), dtype=np.uint64)
    all_digits = np.ones(len(base), dtype=bool)
    count = b - a
    end = base + b - 8
    for group in range(min(3, (int(count.max(initial=0)) + 7) // 8)):
        # the window's bytes before ``a`` are not digits: zeroed
        keep = _HIGH_BYTES[np.clip(8 * (group + 1) - count, 0, 8)]
        v = (words[end - 8 * group] ^ _U(_ZEROS)) & keep  # a digit byte becomes its value 0..9
        all_digits &= _is_digits(v)
        chunk = _eight_digits(v)
        value += chunk * _POW10_U64[8 * group]
        if group == 2:
            top = chunk
    return value, top, all_digits


def _is_digits(v: np.ndarray) -> np.ndarray:
    """Whether every byte of ``text ^ '00000000'`` is a digit value 0..9 (fast_float's
    ``is_made_of_eight_digits_fast``; a carry only happens past a byte that already fails)."""
    return ((v | (v + _U(0x0606060606060606))) & _U(0xF0F0F0F0F0F0F0F0)) == 0


def _eight_digits(v: np.ndarray) -> np.ndarray:
    """Eight digit values (0..9, one per byte, first digit in the low byte) -> their number
    (fast_float's SWAR routine; ``'0' ^ 0x30 == 0`` replaces its subtraction)."""
    v = v * _U(10) + (v >> _U(8))
    mask = _U(0x000000FF000000FF)
    return ((v & mask) * _U(0x000F424000000064) + ((v >> _U(16)) & mask) * _U(0x0000271000000001)) >> _U(32)


def _to_double(sig: np.ndarray, exp10: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Correctly rounded ``sig * 10**exp10`` and where it is known to be."""
    mag = np.abs(exp10)
    positive = exp10 > 0
    # Clinger: both operands exact doubles, one correctly rounded operation.
    clinger = (sig <= _U(1 << 53)) & (mag <= 22)
    if not _EXTENDED:
        return _clinger(sig, mag, positive), clinger
    sx = sig.astype(np.longdouble)  # exact: at most 64 significant bits
    px = _POW10_EXT[np.minimum(mag, _MAX_EXT_EXP)]
    y = np.divide(sx, px, out=sx, where=~positive)
    y = np.multiply(sx, px, out=y, where=positive)
    values = y.astype(np.float64)
    halfway = (y.view(np.uint64)[::2] & _U(0x7FF)) == _U(0x400)  # x87 layout, checked by _x87()
    redo = np.flatnonzero(halfway & clinger)
    values[redo] = _clinger(sig[redo], mag[redo], positive[redo])
    return values, (mag <= _MAX_EXT_EXP) & ~halfway | clinger


def _clinger(sig: np.ndarray, mag: np.ndarray, positive: np.ndarray) -> np.ndarray:
    """``sig * 10**±mag``, correctly rounded where ``sig <= 2**53`` and ``mag <= 22``: both
    operands are exact doubles and one IEEE operation rounds once."""
    s = sig.astype(np.float64)
    p = _POW10_F64[np.minimum(mag, 22)]
    return np.where(positive, s * p, s / p)
