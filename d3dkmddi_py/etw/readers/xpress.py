"""Plain LZ77 ("XPRESS", MS-XCA section 2.4) decompression: what Windows uses for the compressed
buffers of an .etl file (ETW_BUFFER_FLAG_COMPRESSED).  The standard library has no codec for it.

With libfwnt-python installed (the ``fast`` extra), a stream goes first to its C decoder, which reads the
format as this module does but for one form: a length escaped to 16 bits whose value is below 22 (0
announcing 32 bits), which MS-XCA refuses (or reads on in 32 bits) and libfwnt takes as the length
itself, or is 0xFFFD to 0xFFFF, to which libfwnt adds 3 in 16 bits (a length of 0 to 2).  Such an
escape is a byte 255 followed by those 16 bits, after a token whose 3 bits are 7 (and the nibble byte
with 15 in its low half, if the match takes one); each such place is shown not to be one by a cut of
the stream there that libfwnt reads to its end (an item ends there, so the byte 255 is inside none).
A place no cut clears sends the stream to this module's reading, as do cuts that would cost more than
that reading, and a stream libfwnt refuses or reads to another size.  The answer (the bytes, or the
error naming where) is always this module's.

A stream is a run of groups: a 32-bit flag word, then 32 items, a 0 bit a literal byte, a 1 bit a
match: a 16-bit token (13 bits of distance - 1, 3 of length - 3); a length field of 7 goes on in a
nibble shared by two matches, then a byte, then 16 or 32 bits.  There is no Huffman stage (MS-XCA's
"LZ77+Huffman" is another format, which ETW does not use), so decoding is a loop over items, and in
CPython its cost is the Python steps per item.

Each group goes first through the fast path: a flag byte's literal runs come from a table, a short
match (3 to 9 bytes, not overlapping itself) is its token's slice from the output's end, also from a
table, so an item is a few steps and one slice.  The fast path checks only what cannot be checked
after the group: a match reaching back past the output's start (in its first 8 KB) and a length
that would make more than the output.  A group it cannot take whole (near either end of the
stream or of the output, or anything wrong) has its output dropped and goes through the exact
path, the format read item by item with every check, which names where the stream is wrong.  An
overlapping match is copied in slices that double (to a megabyte), so a stream that expands (a few
bytes making megabytes) holds little more than its output.
"""
from __future__ import annotations

import re
import sys
from array import array

from ..._numpy import optional_module
from ...wording import plural

_SLICE = 1 << 20  # the most an overlapping match copies at once: what decompressing holds besides the output
_GROUP_IN = 4 + 32 * 2  # a flag word and 32 items of at most 2 bytes: what the fast path reads but for long matches
_GROUP_OUT = 32 * 9  # what 32 literals and short matches make at most
_NATIVE_MOST = 16 << 20  # the largest buffer an .etl file holds: what libfwnt is given at most (it holds it twice)
# The most bytes the cuts of a stream give libfwnt, in lengths of the stream: about what the Python reading
# costs (10 to 16 times libfwnt, 24 leaving every real buffer to libfwnt: the most one took is 18, one in a
# hundred 11).
_CUTS_MOST = 24
# A byte 255 and 16 bits libfwnt reads otherwise (below 22, or 0xFFFD and up): where such an escape may be.
_ODD_ESCAPE = re.compile(rb"\xff(?:[\x00-\x15]\x00|[\xfd-\xff]\xff)")
_native = None  # libfwnt's decoder once looked for; False when it is not installed


class XpressError(ValueError):
    """The compressed bytes are not a valid stream, or do not give the expected size."""


class _Irregular(Exception):
    """The fast path met what it does not decode; the exact path decodes the group again."""


def _flag_runs(bits: int) -> tuple:
    """The literal count before each 1 bit of the 8 flag bits ``bits`` (most significant first), and
    the literals after the last."""
    before, literals = [], 0
    for bit in range(7, -1, -1):
        if bits >> bit & 1:
            before.append(literals)
            literals = 0
        else:
            literals += 1
    return tuple(before), literals


_RUNS, _TAIL = zip(*map(_flag_runs, range(256)))
_short = None


def _short_matches() -> list:
    """``[token]``: the slice, from the output's end, that a short match (length 3 to 9, not
    overlapping itself) copies; None for a long or overlapping one.  Made on first use (15 ms, 4 MB)."""
    global _short
    if _short is None:
        bound = list(range(-8192, 0))  # one int object for each bound: half the table's memory
        _short = [None if t & 7 == 7 or (t >> 3) + 1 < (t & 7) + 3 else
                  slice(bound[8191 - (t >> 3)], bound[(t & 7) + 8194 - (t >> 3)] if (t >> 3) > (t & 7) + 2 else None)
                  for t in range(1 << 16)]
    return _short


def _tokens(src: bytes) -> array:
    """The little-endian 16-bit word at every byte of ``src`` (the last one's high byte 0)."""
    n = len(src)
    padded = src + b"\0"
    words = array("H", bytes(2 * n))
    words[0::2] = array("H", padded[:(n + 1) & ~1])  # the words at even bytes
    words[1::2] = array("H", padded[1:1 + (n & ~1)])  # and at odd ones
    if sys.byteorder == "big":
        words.byteswap()
    return words


def _wide_length(src: bytes, n: int, i: int) -> tuple:
    """(length - 10, position after it) of a match whose length goes on past its nibble's 15, from
    byte ``i``: a byte, then if 255 16 bits, then if 0 32 bits."""
    if i >= n:
        raise XpressError(f"a match length runs past the end of the stream at byte {i}")
    length = src[i]
    i += 1
    if length == 255:
        if i + 2 > n:
            raise XpressError(f"a match length runs past the end of the stream at byte {i}")
        length = src[i] | src[i + 1] << 8
        i += 2
        if length == 0:
            if i + 4 > n:
                raise XpressError(f"a match length runs past the end of the stream at byte {i}")
            length = int.from_bytes(src[i:i + 4], "little")
            i += 4
        if length < 22:
            raise XpressError(f"a match length of {length} at byte {i} is below the format's minimum")
        length -= 22
    return length + 15, i


def _repeat(out: bytearray, distance: int, length: int) -> None:
    """Append a match that overlaps itself: it repeats its last ``distance`` bytes, copied in slices
    that double, each a whole number of ``distance`` bytes but the last."""
    start = len(out) - distance
    done = 0
    while done < length:
        take = min(length - done, len(out) - start, _SLICE // distance * distance or distance)
        out += out[start:start + take]
        done += take


def _exact(src: bytes, n: int, i: int, out: bytearray, base: int, size: int, half: int) -> tuple:
    """Decode one group from its flag word at ``i``, or less where the output reaches ``size``,
    checking every item: (position after it, ``half``, whether the stream's end marker was met)."""
    o = len(out) - base
    if i + 4 > n:
        raise XpressError(f"the stream ends at byte {i} before its next flag word ({o} of {plural(size, 'byte')} made)")
    flags = int.from_bytes(src[i:i + 4], "little")
    i += 4
    count = 32  # flag bits left in ``flags``, used from the top
    while count and o < size:
        if not flags >> (count - 1) & 1:
            literals = count - (flags & ((1 << count) - 1)).bit_length()  # zero bits before the next match bit
            take = min(literals, size - o)
            if i + take > n:
                raise XpressError(f"literals run past the end of the stream at byte {i}")
            out += src[i:i + take]
            i += take
            o += take
            count -= take
            continue
        count -= 1
        if i + 2 > n:
            if i == n:  # a final match bit with no match: the stream's end marker
                return i, half, True
            raise XpressError(f"a match runs past the end of the stream at byte {i}")
        token = src[i] | src[i + 1] << 8
        i += 2
        length = token & 7
        distance = (token >> 3) + 1
        if length == 7:
            if half == 0:
                if i >= n:
                    raise XpressError(f"a match length runs past the end of the stream at byte {i}")
                length = src[i] & 15
                half = i
                i += 1
            else:
                length = src[half] >> 4
                half = 0
            if length == 15:
                length, i = _wide_length(src, n, i)
            length += 7
        length += 3
        if o < distance:
            raise XpressError(f"a match at byte {i} reaches {plural(distance, 'byte')} back, before the start of the output")
        o += length
        if o > size:
            raise XpressError(f"a match at byte {i} makes {o} bytes, past the {size} expected")
        if distance >= length:
            start = len(out) - distance
            out += out[start:start + length]
        else:
            _repeat(out, distance, length)
    return i, half, False


def decompress(src, size: int, out: bytearray | None = None) -> bytearray:
    """``out`` (a new bytearray if None) with the ``size`` bytes that ``src`` decompresses to appended;
    XpressError naming the input position otherwise."""
    src = bytes(src)
    out = bytearray() if out is None else out
    native = _native_decoder() if 2 <= len(src) and 0 < size <= _NATIVE_MOST else None
    made = None if native is None else _native_reading(native, src, size)
    if made is None:
        return _python_decompress(src, size, out)
    out += made
    return out


def _native_reading(native, src: bytes, size: int):
    """libfwnt's ``size`` bytes for ``src`` where they are this module's answer, else None: it reads the
    stream whole, and every place an escape it reads otherwise may be is cleared by a cut."""
    made = _attempt(native, src, size)
    if made is None or len(made) != size or not _cleared(native, src, size, _odd_escapes(src)):
        return None
    return made


def _cleared(native, src: bytes, size: int, places) -> bool:
    """Whether at each place (a byte 255 that may escape a length) libfwnt reads to its end a cut of
    ``src`` inside what such an escape would span (at - 2 or at - 3 to at + 3): it does so only where an
    item ends, or once the output is made, so the byte is inside no escape it reads.  False too once the
    cuts would cost more than the Python reading (a stream of such places would make them quadratic)."""
    budget = _CUTS_MOST * len(src)
    for at in places:
        for cut in (at + 2, at + 1, at, at - 1):
            budget -= cut
            if budget < 0:
                return False
            if _attempt(native, src[:cut], size) is not None:
                break
        else:
            return False
    return True


def _attempt(native, src: bytes, size: int):
    """libfwnt's bytes, or None where it refuses the stream."""
    try:
        return native(src, size)
    except Exception:  # noqa: BLE001 - its refusal, in its words: this module's reading names where the stream is wrong
        return None


def _odd_escapes(src: bytes) -> list:
    """Where the items of ``src`` may hold a length escaped to 16 bits that libfwnt reads otherwise: each
    byte 255 followed by such 16 bits, after a token whose 3 bits are 7 (the nibble then from a byte
    before) or such a token and a nibble byte whose low half is 15 (the first flag word before both)."""
    return [at for at in (m.start() for m in _ODD_ESCAPE.finditer(src))
            if at >= 6 and src[at - 2] & 7 == 7 or at >= 7 and src[at - 3] & 7 == 7 and src[at - 1] & 15 == 15]


def _native_decoder():
    """libfwnt-python's ``lzxpress_decompress``, or None when it is not installed."""
    global _native
    if _native is None:
        try:
            _native = optional_module("pyfwnt", "fast", "the C XPRESS decoder").lzxpress_decompress
        except (ImportError, AttributeError, OSError):  # not installed, or not loadable here
            _native = False
    return _native or None


def _python_decompress(src, size: int, out: bytearray | None = None) -> bytearray:
    """What ``decompress`` gives, read here alone (no libfwnt)."""
    src = bytes(src)
    out = bytearray() if out is None else out
    base = len(out)  # where the output starts in ``out``
    end = base + size
    n = len(src)
    short, runs, tail = _short_matches(), _RUNS, _TAIL
    words = _tokens(src)
    i = 0
    half = 0  # position of the byte whose high nibble holds the next 4-bit length, or 0
    while len(out) < end:
        made = len(out)
        if i + _GROUP_IN <= n and made + _GROUP_OUT <= end:
            at, was = i, half
            near = (made - base) << 3  # a token from here on may reach back past the start (none past 8 KB)
            try:
                flags = words[i] | words[i + 2] << 16
                i += 4
                for f in (flags >> 24, flags >> 16 & 255, flags >> 8 & 255, flags & 255):
                    for literals in runs[f]:
                        if literals:
                            if literals == 1:
                                out.append(src[i])
                                i += 1
                            else:
                                out += src[i:i + literals]
                                i += literals
                        token = words[i]
                        i += 2
                        if token >= near and token >> 3 >= len(out) - base:
                            raise _Irregular
                        match = short[token]
                        if match is not None:
                            out += out[match]
                            continue
                        back = ~(token >> 3)  # -distance
                        if token & 7 != 7:  # a short match that overlaps itself
                            _repeat(out, -back, (token & 7) + 3)
                            continue
                        if half:
                            length = src[half] >> 4
                            half = 0
                        else:
                            length = src[i] & 15
                            half = i
                            i += 1
                        if length == 15:
                            length = src[i] + 25
                            i += 1
                            if length == 280:  # 16 or 32 bits: as long as the output may be
                                length, i = _wide_length(src, n, i - 1)
                                length += 10
                                if len(out) + length > end:
                                    raise _Irregular
                        else:
                            length += 10
                        stop = back + length
                        if stop < 0:
                            out += out[back:stop]
                        else:
                            _repeat(out, -back, length)
                    literals = tail[f]
                    if literals:
                        out += src[i:i + literals]
                        i += literals
                if i <= n and len(out) <= end:
                    continue
            except (_Irregular, XpressError, IndexError):
                pass
            del out[made:]
            i, half = at, was
        i, half, ended = _exact(src, n, i, out, base, size, half)
        if ended:
            break
    if len(out) != end:
        raise XpressError(f"the stream makes {plural(len(out) - base, 'byte')}, not the {size} expected")
    return out
