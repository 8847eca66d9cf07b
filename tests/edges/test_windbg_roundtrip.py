"""Issue 30's done-when for WinDbg text: memory printed as every display command WinDbg has (tests/windbg_print.py,
written from WinDbg's pages, not from the reader) is read back equal or refused, never as other bytes; cut at
any character, it is read as bytes the memory holds there or refused.  And the two ways a dump line is read
(one by one, and a block of full lines at once) give the same dumps and the same refusals.  Seeded and
bounded: the same cases every run."""
from __future__ import annotations

import random

import pytest

from d3dkmddi_py.errors import DecodeError, WinDbgTextError
from d3dkmddi_py import windbg
from d3dkmddi_py.memory import WinDbgLog
from d3dkmddi_py.windbg import _Shape, parse_windbg, scan_log

from .. import windbg_print as wp

SEED = 30
CASES = 300
CUTS = 300
NOISE = ["Breakpoint 0 hit", "mydriver!DxgkDdiCreateAllocation:", "fffff801`2a3b1000 4c8bdc          mov     r11,rsp",
         "   +0x000 Aperture         : 0y1", "0: kd> g", "", "Opened log file 'C:\\x.log'"]


def _dump(rng: random.Random, command: str, address: int, width: int) -> tuple:
    """(lines, the bytes at address a reader must give, or None for commands that print no bytes exactly)."""
    unit = wp.unit_of(command, width)
    size = wp.SIZES.get(unit, 4)
    if command in wp.NOT_BYTES:
        size = {"dD": 8, "df": 4, "da": 1, "du": 2}[command]
        data = rng.randbytes(size * rng.randrange(1, 20))
        if command in ("da", "du"):
            data = bytes(rng.choice(b"abc xyz09!\"") for _ in range(len(data)))
        return [wp.prompt(command, address, len(data), width)] + wp.lines(command, address, data, width, rng), None
    count = rng.randrange(1, 40)
    data = rng.randbytes(size * count)
    columns = None
    if command in wp.VALUES + wp.BINARY and rng.random() < 0.3:
        columns = rng.choice([1, 2, 3, 8, 16, 32])
    unreadable = None
    if command in wp.VALUES and rng.random() < 0.15:
        unreadable = rng.randrange(0, len(data), size)
    body = wp.lines(command, address, data, width, rng, columns=columns, unreadable=unreadable)
    return [wp.prompt(command, address, count, width)] + body, data if unreadable is None else \
        (data[:unreadable], unreadable)


def _session(rng: random.Random) -> tuple:
    """(text, {address: bytes} of the exact dumps, commands printing no exact bytes, [(one dump's text, its
    bytes or None)]): a few dumps at a 32-bit or a 64-bit target, with other output between them."""
    lines, memory, inexact, dumps = [], {}, [], []
    width = rng.choice([4, 8])
    ending = rng.choice(["\n", "\r\n", "\r"])
    for k in range(rng.randrange(1, 5)):
        command = rng.choice(wp.ALL)
        base = 0xFFFFB80C00000000 + (k << 24) if width == 8 else 0x10000000 + (k << 20)
        address = base + rng.randrange(0, 0x800, 8)
        body, data = _dump(rng, command, address, width)
        lines += body
        if data is None:
            inexact.append(command)
        else:
            memory[address] = data[0] if isinstance(data, tuple) else data
        dumps.append((ending.join(body) + ending, data))
        lines += rng.sample(NOISE, rng.randrange(0, 3))
    return ending.join(lines) + ending, memory, inexact, dumps


def _held(memory: dict) -> dict:
    return {address + i: b for address, data in memory.items() for i, b in enumerate(data)}


def _consistent(log: WinDbgLog, held: dict, where) -> None:
    """Every byte the log read is the memory's byte there."""
    for low, high, _ in log.spans():
        got = log.read(low, high - low)
        assert all(held.get(low + i) == b for i, b in enumerate(got)), (where, hex(low), got[:32])


def test_the_reader_knows_every_display_command_the_pages_name_and_no_other():
    """The pages' titles name 25 commands (d itself repeats the last); the reader's table holds them all, case
    as written (dD is not dd, dW is not dw), and reads as bytes those that print them."""
    assert set(windbg._COMMANDS) == set(wp.ALL) and len(wp.ALL) == 25
    assert set(windbg.WINDBG_COMMANDS) == set(wp.ALL) - set(wp.NOT_BYTES)


def test_memory_printed_as_every_dump_command_is_read_back_equal_or_refused():
    rng = random.Random(SEED)
    seen = set()
    for case in range(CASES):
        text, memory, inexact, dumps = _session(rng)
        seen.update(inexact)
        for one, data in dumps:  # each dump alone: its bytes, or refused in one line
            if data is None or isinstance(data, tuple):
                with pytest.raises(WinDbgTextError, match=r"dD|df|da |du |\?\?"):
                    parse_windbg(one)
            else:
                assert parse_windbg(one).data == data, (case, one[:2000])
        if not memory:  # dD, df, da, du alone: no bytes to read, said in one line
            with pytest.raises(WinDbgTextError, match=r"dD|df|da|du|no memory"):
                WinDbgLog(text)
            continue
        log = WinDbgLog(text)
        for address, data in memory.items():
            assert log.read(address, len(data)) == data, (case, text[:2000])
        _consistent(log, _held(memory), case)
        assert log.scan.not_bytes >= len(inexact)
    assert seen == set(wp.NOT_BYTES)


def test_every_cut_of_a_printed_dump_is_read_as_the_memory_or_refused():
    rng = random.Random(SEED + 1)
    for case in range(CUTS):
        text, memory, _inexact, _dumps = _session(rng)
        cut = rng.randrange(len(text))
        try:
            log = WinDbgLog(text[:cut])
        except DecodeError:
            continue
        _consistent(log, _held(memory), (case, cut))


def test_a_line_printed_at_another_width_is_read_as_the_memory_or_refused():
    """One line of a dump printed in another unit (same address, same bytes): under the dump's command it is
    refused; without it, it is read as the same bytes."""
    rng = random.Random(SEED + 2)
    for case in range(CUTS):
        width = rng.choice([4, 8])
        command, other = rng.sample(["db", "dw", "dd", "dq"], 2)
        address = 0x1000
        data = rng.randbytes(64)
        lines = wp.lines(command, address, data, width, rng)
        k = rng.randrange(len(lines))
        per = len(data) // len(lines)
        lines[k] = wp.lines(other, address + k * per, data[k * per:(k + 1) * per], width, rng, columns=32)[0]
        for prompt in (True, False):
            text = "\n".join(([wp.prompt(command, address, 64, width)] if prompt else []) + lines) + "\n"
            try:
                log = WinDbgLog(text)
            except WinDbgTextError:
                assert prompt or k, (case, text)
                continue
            assert not prompt, (case, text)
            _consistent(log, _held({address: data}), (case, text))


def _outcome(text: str, reader):
    try:
        return reader(text)
    except DecodeError as exc:
        return type(exc).__name__, str(exc)


def test_full_lines_read_in_blocks_give_what_the_line_reader_gives(monkeypatch):
    """Twins: the same texts (printed dumps, cut, with a line changed) read with blocks and line by line."""
    rng = random.Random(SEED + 3)
    texts = []
    for _ in range(CASES):
        text, _memory, _inexact, _dumps = _session(rng)
        texts.append(text)
        texts.append(text[:rng.randrange(len(text))])
        at = rng.randrange(len(text))
        texts.append(text[:at] + rng.choice("0`z -\n") + text[at + 1:])
    texts += [_wide(rng, unit) for unit in ("db", "dw", "dd", "dq") for _ in range(10)]
    blocks = [(_outcome(t, scan_log), _outcome(t, parse_windbg)) for t in texts]
    monkeypatch.setattr(_Shape, "of", staticmethod(lambda line, eol, got: None))
    lines = [(_outcome(t, scan_log), _outcome(t, parse_windbg)) for t in texts]
    for text, by_blocks, by_lines in zip(texts, blocks, lines):
        assert by_blocks == by_lines, text[:3000]
    assert sum(isinstance(b[0], tuple) for b in blocks) < len(blocks)  # most were read


def _wide(rng: random.Random, unit: str) -> str:
    """A dump of thousands of lines (more than one block), its addresses past 2**32 or near 2**64 at times."""
    width = rng.choice([4, 8])
    size = wp.SIZES[unit]
    data = rng.randbytes(size * rng.randrange(1, 9000))
    top = (1 << 8 * width) - len(data) - 16
    address = rng.choice([0x1000, top - rng.randrange(0, 64, 16), top & ~0xFFF])
    return "\n".join([wp.prompt(unit, address, len(data) // size, width)] +
                     wp.lines(unit, address, data, width, rng)) + "\n"
