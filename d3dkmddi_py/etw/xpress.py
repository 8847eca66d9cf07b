"""Plain LZ77 ("XPRESS", MS-XCA section 2.4) decompression: what Windows uses for the compressed
buffers of an .etl file (ETW_BUFFER_FLAG_COMPRESSED).  The standard library has no codec for it.

Literal runs are copied as slices and matches as slices when they do not overlap, so a buffer
costs one Python step per match, not per byte; an overlapping match is copied in slices that double
(to a megabyte), so a stream that expands (a few bytes making megabytes) holds little more than its output.
"""
from __future__ import annotations


_SLICE = 1 << 20  # the most an overlapping match copies at once: what decompressing holds besides the output


class XpressError(ValueError):
    """The compressed bytes are not a valid stream, or do not give the expected size."""


def decompress(src, size: int, out: bytearray | None = None) -> bytearray:
    """``out`` (a new bytearray if None) with the ``size`` bytes that ``src`` decompresses to appended;
    XpressError naming the input position otherwise."""
    src = bytes(src)
    out = bytearray() if out is None else out
    base = len(out)  # where the output starts in ``out``
    n = len(src)
    i = 0
    flags = 0
    count = 0  # flag bits left in ``flags``, used from the top
    half = 0  # position of the byte whose high nibble holds the next 4-bit length, or 0
    o = 0  # len(out)
    while o < size:
        if count == 0:
            if i + 4 > n:
                raise XpressError(f"the stream ends at byte {i} before its next flag word "
                                  f"({o} of {size} bytes made)")
            flags = int.from_bytes(src[i:i + 4], "little")
            i += 4
            count = 32
        if not flags >> (count - 1) & 1:
            literals = count - (flags & ((1 << count) - 1)).bit_length()  # zero bits before the next match bit
            take = min(literals, size - o)
            if i + take > n:
                raise XpressError(f"literals run past the end of the stream at byte {i}")
            if take == 1:
                out.append(src[i])
            else:
                out += src[i:i + take]
            i += take
            o += take
            count -= take
            continue
        count -= 1
        if i + 2 > n:
            if i == n:  # a final match bit with no match: the stream's end marker
                break
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
                length += 15
            length += 7
        length += 3
        if o < distance:
            raise XpressError(f"a match at byte {i} reaches {distance} bytes back, before the start of the output")
        start = base + o - distance
        o += length
        if o > size:
            raise XpressError(f"a match at byte {i} makes {o} bytes, past the {size} expected")
        if distance >= length:
            out += out[start:start + length]
        else:  # an overlapping match repeats its last ``distance`` bytes: copy what is there, doubling
            done = 0
            while done < length:  # each slice a whole number of ``distance`` bytes until the last
                take = min(length - done, len(out) - start, _SLICE // distance * distance or distance)
                out += out[start:start + take]
                done += take
    if o != size:
        raise XpressError(f"the stream makes {o} bytes, not the {size} expected")
    return out
