"""The ``d3dkmddi`` command: decode, validate, layout, types, demo and etw.

Every bad input ends with one line on standard error and exit status 2, before any output:
everything is checked (type, target, input, range, output path) before the first record is read.
``decode`` and ``validate`` then stream through ``pipeline``, so printing starts at once and memory
stays at one chunk.  ``validate`` exits 1 when a record has an error-level finding.
"""
from __future__ import annotations

import argparse
import io
import json
import os
import stat
import sys
import warnings

from . import dttext, jsonformat, pipeline
from ._numpy import parquet_unavailable
from .errors import D3dkmddiError, DecodeError, UnsupportedTarget
from .guard import is_closed_stream, run_guarded
from .outfile import (EXIT_INTERRUPTED, EXIT_TERMINATED, EXIT_USAGE, PROG, check_output, open_output, safe_name,
                      shadowed)
from .names import ABIS, NEWEST, known_names, parse_abi, parse_version, type_guard
from .resolve import resolve_layout
from ._spec.versions import INTERFACE_VERSIONS
from .span import word_bytes
from .windbg import WINDBG_COMMANDS, Memory, parse_address, parse_hex, parse_int, text_of_bytes
from .wording import noun, plural

EXIT_OK, EXIT_FINDINGS = 0, 1
BULK_FORMATS = ("csv", "jsonl", "parquet")
QUERY_DEFAULT = "DXGK_QUERYSEGMENTOUT3"  # the query --segments-at reads unless --segment-type names another
NEWEST_NAME = NEWEST.name

# The words the help and the README both say (tests/cli/test_help_and_readme.py holds them to each other).
TYPE_HELP = ("a C type as `d3dkmddi types` lists it, in any case: a typedef, its tag or an alias "
             "(DXGK_ALLOCATIONINFO, _DXGK_SEGMENTFLAGS, PHYSICAL_ADDRESS), or an enum (DXGK_PAGESIZE)")
SAMPLE_WORD = "sample"  # every file option's word for its bundled file (a file named sample: ./sample)
SAMPLE_HELP = "'sample' for the bundled"
WINDBG_HELP = (f"text of WinDbg {'/'.join(WINDBG_COMMANDS)} output, any /c width: one dump or a whole session "
               f"log ('-' for standard input, {SAMPLE_HELP} session log)")
FOLLOW_HELP = ("also decode what the record's pointers point to, recursively, as WinDbg's dx -r shows it "
               "(memory: --windbg, --dump, or --file with --base)")
SEGMENTS_AT_HELP = ("the address of a DXGK_QUERYSEGMENTOUT* in the same memory (--windbg, --dump, --file with "
                    "--base): check allocations against the segments it points to")
COMPARE_HELP = ("two targets, each an ABI (x86), an interface version (WDDM2_0, 0x5023) or both (x86:WDDM2_0); "
                "what one leaves out is --abi's or --ddi's")
_BAD_INPUT = "bad input: one line on standard error, before any output"
# Each command's exit statuses and what they mean; every command also gives 130 on Ctrl-C, 143 on SIGTERM.
EXIT_STATUS = {
    "decode": {EXIT_OK: "decoded", EXIT_USAGE: _BAD_INPUT},
    "validate": {EXIT_OK: "no error-level finding", EXIT_FINDINGS: "an error-level finding (all findings printed)",
                 EXIT_USAGE: _BAD_INPUT},
    "layout": {EXIT_OK: "printed", EXIT_USAGE: _BAD_INPUT},
    "types": {EXIT_OK: "printed", EXIT_USAGE: _BAD_INPUT},
    "demo": {EXIT_OK: "printed (the sample's findings do not change it)", EXIT_USAGE: "a bad option"},
    "etw": {EXIT_OK: "no error-level finding and every event as its template says",
            EXIT_FINDINGS: "an error-level finding or an event not as its template says, after the text, JSON, tables "
                           "or picture are written",
            EXIT_USAGE: "bad input: one line naming the event and field (a damaged .etl file: the buffer and byte)"},
}
SIGNAL_STATUS = {EXIT_INTERRUPTED: "Ctrl-C", EXIT_TERMINATED: "SIGTERM"}
for _statuses in EXIT_STATUS.values():
    _statuses.update(SIGNAL_STATUS)


def exit_text(command: str) -> str:
    """``0 decoded; 2 bad input: ...; 130 Ctrl-C; 143 SIGTERM``: the help's and the README's words."""
    return "; ".join(f"{status} {meaning}" for status, meaning in EXIT_STATUS[command].items())


class UsageError(D3dkmddiError):
    """A bad command line or input: printed as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    """argparse with its errors as one line (no usage block) and exit status 2."""

    def error(self, message):
        raise UsageError(f"{self.prog}: {message} (see {self.prog} --help)")

    def _print_message(self, message, file=None):
        # argparse drops write errors, so `--help > /dev/full` would exit 0 having printed nothing
        if message:
            (file or sys.stdout).write(message)


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("d3dkmddi_py")
    except Exception:  # noqa: BLE001 - running from a source tree that is not installed
        return "unknown (not installed)"


# ------------------------------------------------------------------ arguments
class _VersionAction(argparse.Action):
    """--version, looked up only when asked for (importlib.metadata costs tens of milliseconds)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):  # noqa: A002
        super().__init__(option_strings, dest, nargs=0, default=default, help="print the version and exit")

    def __call__(self, parser, namespace, values, option_string=None):
        raise _ShowVersion


class _ShowVersion(Exception):
    """--version was given: ``execute`` prints it on standard output and exits 0."""


def _terminal_columns() -> int:
    """``shutil.get_terminal_size().columns``: COLUMNS, else standard output's terminal, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns > 0:
        return columns
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or 80
    except (AttributeError, ValueError, OSError):
        return 80


def _sized(formatter):
    """``formatter`` told the width argparse would find: left to find it, argparse imports shutil (and
    bz2 and lzma with it) while the parser is built, about 2 ms of the command's start-up.  A word longer
    than the width stays whole (the list of WinDbg commands is one word, never cut inside a name)."""
    class Whole(formatter):
        def _split_lines(self, text, width):
            import textwrap

            return textwrap.wrap(" ".join(text.split()), width, break_long_words=False)

    return lambda prog: Whole(prog, width=_terminal_columns() - 2)


def _parser(argv=()) -> argparse.ArgumentParser:
    p = _Parser(prog=PROG, description="Decode, explain and validate WDDM video-memory-manager structures "
                                       "(d3dkmddi.h, d3dukmdt.h) from bytes, files, WinDbg output and ETW traces.",
                formatter_class=_sized(argparse.HelpFormatter))
    p.add_argument("--version", action=_VersionAction)
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    def command(name: str, summary: str, description: str, examples: list):
        epilog = ("examples:\n" + "\n".join(f"  {e}" for e in examples) +
                  f"\n\nexit status: {exit_text(name)}")
        return sub.add_parser(name, help=summary, description=description, epilog=epilog,
                              formatter_class=_sized(argparse.RawDescriptionHelpFormatter))

    def target_options(q):
        q.add_argument("--abi", default="x64", help=f"target ABI: {', '.join(ABIS)} (amd64 = x64; default x64)")
        q.add_argument("--ddi", default=NEWEST_NAME, metavar="VERSION",
                       help=f"DXGKDDI_INTERFACE_VERSION as a name (WDDM2_0) or a number (0x5023); "
                            f"default {NEWEST_NAME}")
        q.add_argument("--json", action="store_true", help="print JSON instead of text")

    def input_options(q, what: str):
        q.add_argument("type", metavar="TYPE", help=TYPE_HELP)
        q.add_argument("value", metavar="VALUE", nargs="?",
                       help="an integer word (0x485, 1157, 00000000`00000485), e.g. from an ETW event or a register")
        src = q.add_mutually_exclusive_group()
        src.add_argument("--file", metavar="PATH", help=f"raw bytes from a file ('-' for standard input, {SAMPLE_HELP} "
                                                       f"blob of the TYPE's records); with --base, a raw memory image")
        src.add_argument("--windbg", metavar="PATH", help=WINDBG_HELP)
        src.add_argument("--dump", metavar="PATH", help=f"a Windows kernel crash dump (MEMORY.DMP: full, kernel or "
                                                       f"bitmap), read by virtual address (the 'dump' extra; "
                                                       f"{SAMPLE_HELP} dump of the session log's memory)")
        src.add_argument("--hex", metavar="HEX", help="bytes in memory order, e.g. '85 04 00 00'")
        q.add_argument("--offset", default="0", help="byte offset of the first record in the input (default 0)")
        q.add_argument("--base", metavar="ADDRESS",
                       help="with --file: the memory address of the file's first byte (a raw memory image)")
        q.add_argument("--address", metavar="ADDRESS",
                       help="the memory address of the first record (fffff801`2a3b4058; hex, as WinDbg reads it), "
                            "in --windbg, --dump or --file with --base")
        q.add_argument("--follow", action="store_true", help=FOLLOW_HELP)
        q.add_argument("--count", default="1", help="number of records, or 'all' (default 1)")
        q.add_argument("--adapter", metavar="NAME", choices=("sample",),
                       help="check allocations against an adapter's segments: 'sample' is the bundled adapter's, "
                            "written at the --abi/--ddi target")
        q.add_argument("--segments", metavar="PATH",
                       help=f"segment descriptors (raw bytes or WinDbg text) to check allocations against "
                            f"({SAMPLE_HELP} adapter's, as written at x64 WDDM3_0)")
        q.add_argument("--segments-at", metavar="ADDRESS", help=SEGMENTS_AT_HELP)
        q.add_argument("--segment-type", default=None, metavar="TYPE",
                       help=f"the descriptor type in --segments (default DXGK_SEGMENTDESCRIPTOR), or the query type at "
                            f"--segments-at (default {QUERY_DEFAULT})")
        q.add_argument("--format", choices=("text", "json") + BULK_FORMATS, default=None,
                       help=f"output format; csv, jsonl and parquet write {what}")
        q.add_argument("--output", "-o", metavar="PATH", help="write the output here (default standard output)")
        target_options(q)

    q = command("decode", "print records as WinDbg dt -r does, with meanings and findings",
                "Decode records from a number, hex bytes, a file or WinDbg text and print every field as `dt -r`\n"
                "prints it, with what each value means and every finding under the field it concerns.",
                ["d3dkmddi decode DXGK_SEGMENTFLAGS 0x485 --ddi WDDM2_0",
                 "d3dkmddi decode DXGK_ALLOCATIONINFO --windbg dump.txt --address 'fffff801`2a3b4058' --count 2",
                 "d3dkmddi decode DXGKARG_CREATEALLOCATION --windbg session.log --address 'ffffb80c`4e2f0000' --follow",
                 "d3dkmddi decode DXGK_QUERYSEGMENTOUT3 --dump MEMORY.DMP --address 'fffff801`2a3b4058' --follow",
                 "d3dkmddi decode DXGK_ALLOCATIONINFO --file big.bin --count all --format csv -o big.csv"])
    input_options(q, "one row per record with every leaf as a column")
    q.add_argument("--nonzero", action="store_true", help="print only non-zero fields (and fields with findings)")

    q = command("validate", "print the findings of records; exit status 1 on an error-level finding",
                "Check records against every rule the DDI reference states and print the findings; exit status 1\n"
                "when one is an error, 2 on bad input.",
                ["d3dkmddi validate DXGK_ALLOCATIONINFO --file blob.bin --count all --segments segs.bin",
                 "d3dkmddi validate DXGKARG_CREATEALLOCATION --windbg session.log --address 'ffffb80c`4e2f0000' "
                 "--follow --segments-at 'ffffb80c`4e310000'",
                 "d3dkmddi validate DXGK_SEGMENTFLAGS --file flags.bin --count all --format csv -o findings.csv"])
    input_options(q, "one row per finding (record, offset, rule, severity, field, message)")

    q = command("layout", "the layout table of a type, like dt without an address",
                "Print a type's layout at a target as WinDbg's dt prints it without an address: offsets, C types,\n"
                "bit positions and widths.  --compare prints the leaves whose offset, bit, width or presence\n"
                "differ between two targets.",
                ["d3dkmddi layout DXGK_ALLOCATIONINFO --abi x86 --ddi 0x5023",
                 "d3dkmddi layout DXGK_SEGMENTDESCRIPTOR4 --json",
                 "d3dkmddi layout DXGK_ALLOCATIONINFO --compare x86,x64",
                 "d3dkmddi layout DXGK_SEGMENTFLAGS --compare WDDM2_0,WDDM3_2",
                 "d3dkmddi layout DXGK_ALLOCATIONLIST --compare x86:WDDM1_3,x64:WDDM2_0"])
    q.add_argument("type", metavar="TYPE", help=TYPE_HELP)
    q.add_argument("--compare", metavar="A,B", help=COMPARE_HELP)
    target_options(q)

    q = command("types", "the types that exist at a target",
                "List the types (with their sizes and aliases) that exist at a target, and those that do not.",
                ["d3dkmddi types --ddi WDDM2_0", "d3dkmddi types --abi arm64 --json"])
    target_options(q)

    q = command("demo", "decode and validate the bundled sample adapter and allocations",
                "Decode and validate the bundled sample adapter and its allocations, then print commands to\n"
                "try next on the same files.",
                ["d3dkmddi demo", "d3dkmddi demo --json"])
    q.add_argument("--json", action="store_true", help="print JSON instead of text")

    q = command("etw", "decode and validate the segment and allocation events of a DxgKrnl trace (.etl or XML)",
                "Read a GPU trace's Microsoft-Windows-DxgKrnl events (.etl or XML).",  # whole below, from the registry
                ["d3dkmddi etw trace.etl --ddi WDDM2_7", "d3dkmddi etw trace.etl --summary",
                 "d3dkmddi etw sample --json"])
    if "etw" in argv:  # its options load the ETW schema: only when the command is etw
        from .etw.outputs import command as etw_command

        etw_command.add_arguments(q)
        q.description = etw_command.description()
    return p


def _target(args) -> tuple:
    return parse_abi(args.abi), int(parse_version(args.ddi))


# ------------------------------------------------------------------ inputs
_SOURCES = ("value", "file", "windbg", "dump", "hex")


def _source(args) -> str:
    sources = [s for s in _SOURCES if getattr(args, s) is not None]
    if not sources:
        raise UsageError(f"{PROG} {args.command}: no input; give a VALUE, --file PATH, --windbg PATH, --dump PATH "
                         f"or --hex HEX")
    if len(sources) > 1:
        raise UsageError(f"{PROG} {args.command}: give one input, not {' and '.join(sources)}")
    return sources[0]


def _stdin_bytes(want: int | None = None) -> bytes:
    if sys.stdin is None or is_closed_stream(sys.stdin):
        raise UsageError("standard input is closed; give --file PATH")
    return pipeline.read_unsized(getattr(sys.stdin, "buffer", sys.stdin), "standard input", want)


def _windbg_log(path: str, origin: str, notes: list):
    """Every dump of a WinDbg text from a file or standard input ('-') as memory at addresses; what was skipped
    goes to ``notes`` (said on standard error once the input is known to be good: bad input is one line).  A
    file is read a chunk at a time, with no limit."""
    from .memory import WinDbgLog
    from .pipeline.source import read_text

    if path == "-":
        raw, origin = _stdin_bytes(), "standard input"
        text, head = (text_of_bytes(raw) if raw else ""), raw[:4096]
    else:
        text, head = read_text(pipeline.open_input(path, origin), origin)
    if text is None:
        raise UsageError(f"{origin} is not text (UTF-8, or UTF-16 with a byte-order mark); "
                         f"{pipeline.flag_hint(head, path if path != '-' else origin, 'windbg')}")
    log = WinDbgLog(text, origin)
    if log.scan.note():
        notes.append(log.scan.note())
    return log


def _width_note(memory, address: int, layout, notes: list) -> None:
    """Refuse records a target's pointers cannot reach, and say when a log's addresses are printed for another
    pointer width than --abi's (WinDbg prints 8 digits for a 32-bit target, 16 for a 64-bit one)."""
    from .follow import check_target_address
    from .memory import WinDbgLog
    from ._spec.base import POINTER_SIZE

    check_target_address(layout, address)
    dump = memory.dump_at(address) if isinstance(memory, WinDbgLog) else None
    if dump is None or dump.address_bytes == POINTER_SIZE[layout.abi] or _same_at(layout, dump.address_bytes):
        return
    if dump.address_bytes == 8:
        notes.append(f"{memory.origin} line {dump.first_line} prints 16-digit addresses, as WinDbg does for a 64-bit "
                     f"target, and --abi {layout.abi} reads 32-bit layouts there: right for a 32-bit process under "
                     f"WOW64, else pass --abi x64 or arm64")
    else:
        notes.append(f"{memory.origin} line {dump.first_line} prints 8-digit addresses, as WinDbg does for a 32-bit "
                     f"target, and --abi {layout.abi} reads 64-bit layouts there; if the target is 32-bit, pass "
                     f"--abi x86")


def _same_at(layout, pointer_bytes: int) -> bool:
    """Whether ``layout`` is laid out alike at a target of ``pointer_bytes``-byte pointers (no pointer-sized
    member, as DXGK_SEGMENTFLAGS): then the pointer width of the memory changes nothing."""
    from .layout import type_layout
    from .names import known_names

    other = "x86" if pointer_bytes == 4 else "x64"
    if layout.c_name not in known_names(other, layout.version):
        return False
    twin = type_layout(layout.c_name, other, layout.version)
    return (twin.size, [(leaf.path, leaf.offset, leaf.size) for leaf in twin.leaves]) == \
        (layout.size, [(leaf.path, leaf.offset, leaf.size) for leaf in layout.leaves])


def _memory(args, notes: list):
    """The memory at addresses the input options name (a WinDbg log, a raw image at --base, a crash dump),
    or None for inputs without addresses."""
    if args.base is not None and args.file is None:
        raise UsageError("--base gives the address of --file's first byte (a raw memory image); give --file PATH")
    if args.windbg is not None:
        return _windbg_log(args.windbg, _origin(args, "windbg"), notes)
    if args.dump is not None:
        from .memory import KernelDump, regular_file

        regular_file(args.dump, _origin(args, "dump"), "a crash dump")  # stat() first: open() blocks on a FIFO
        _refuse_flag(args.dump, "dump")
        memory = KernelDump(args.dump)
    elif args.file is not None and args.base is not None:
        from .memory import ImageFile, regular_file

        if args.file == "-":
            raise UsageError("standard input is not a memory image: a raw image is read by address, so save it to "
                             "a file first (--file PATH --base ADDRESS)")
        regular_file(args.file, _origin(args, "file"), "a memory image")
        _refuse_flag(args.file, "file")
        memory = ImageFile(args.file, parse_address(args.base, "--base"))
    else:
        return None
    option = "dump" if args.dump is not None else "file"
    if option in args.origins:  # a bundled file: named <samples>/NAME as every input names it
        memory.origin = args.origins[option]
    return memory


def _refuse_flag(path: str, given: str) -> None:
    """One line with the right flag when a regular file's content is another input kind than its flag says
    (a FIFO, a device: nothing to tell, and open() would block on a FIFO)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return
    except (OSError, ValueError):
        pass  # a missing or unreadable file: open_input says so in its own words
    pipeline.open_input(path, safe_name(path)).close()
    hint = pipeline.flag_hint(_head(path), path, given)
    if hint:
        raise UsageError(hint)


def _head(path: str) -> bytes:
    """The first bytes of a regular file, what its kind is told by (b"" for anything else)."""
    try:
        with open(path, "rb") as f:
            return f.read(4096) if os.path.isfile(path) else b""
    except (OSError, ValueError):
        return b""


def _count(text: str):
    return "all" if text.strip().lower() == "all" else parse_int(text, "--count")


def _address(args, memory, offset: int) -> int:
    """The address of the first record in memory: --address, or --offset bytes into a log's one range or
    from --base."""
    from .memory import WinDbgLog

    if args.address is not None:
        return parse_address(args.address, "--address")
    if isinstance(memory, WinDbgLog):
        return memory.memory_at(None, "--address").address + offset
    if args.base is not None:
        return parse_address(args.base, "--base") + offset
    raise UsageError("a crash dump is read by address: give --address (the record's virtual address, "
                     "fffff801`2a3b4058)")


def _records(args, tgt, memory, notes: list) -> pipeline.Records:
    """The checked range of records the input options name; nothing is read past the checks."""
    layout = resolve_layout(args.type, tgt)
    count = _count(args.count)
    source = _source(args)
    offset = parse_int(args.offset, "--offset")
    if args.address is not None:
        if offset:
            raise UsageError("give --offset (a byte offset into the input) or --address (a memory address), not both")
        if memory is None:
            if source == "file" and args.file != "-":
                _refuse_flag(args.file, "file")  # a crash dump given as --file: --dump reads it by address
            raise UsageError(f"--address {_clip(args.address)} is a memory address, and only memory has addresses: "
                             f"--windbg, --dump, or --file with --base (the address of its first byte); give a byte "
                             f"offset with --offset")
    if memory is not None and (args.address is not None or source == "windbg"):
        _width_note(memory, _address(args, memory, offset), layout, notes)
    if source == "dump":
        return _dump_records(layout, memory, _address(args, memory, offset), count)
    if source == "file" and args.file != "-":
        if args.base is not None:
            base = memory.base
            offset = parse_address(args.address, "--address") - base if args.address is not None else offset
            if offset < 0:
                raise UsageError(f"--address {_clip(args.address)} is below --base {_clip(args.base)}, the address of "
                                 f"{_origin(args, 'file')}'s first byte")
            return pipeline.Records(layout, path=args.file, origin=_origin(args, "file"), offset=offset, count=count,
                                    address=base)
        return pipeline.Records(layout, path=args.file, origin=_origin(args, "file"), offset=offset, count=count)
    if source == "value":
        try:
            number = parse_int(args.value, "VALUE")
        except DecodeError:
            raise UsageError(f"VALUE {_clip(args.value)} is not an integer; {_value_hint(args.value)}") from None
        memory = Memory(word_bytes(number, layout), None, "VALUE")
    elif source == "file":
        memory = Memory(_stdin_bytes(pipeline.wanted_bytes(layout, offset, count)), None, "standard input")
    elif source == "windbg":
        found = memory.memory_at(args.address, "--address", layout.size * (count if isinstance(count, int) else 1))
        if args.address is not None:
            offset = found.offset_of(args.address, "--address")
        memory = found
    else:
        try:
            memory = Memory(parse_hex(args.hex), None, "hex")
        except DecodeError as exc:
            if os.path.exists(args.hex):
                raise UsageError(f"--hex {_clip(args.hex)} is not hex bytes; {_value_hint(args.hex)}") from None
            raise UsageError(str(exc)) from None
    return pipeline.Records.from_memory(layout, memory, offset, count)


def _value_hint(text: str) -> str:
    """What to write for a VALUE (or --hex) that is no number: the flag its file's content needs."""
    if os.path.exists(text):
        return pipeline.flag_hint(_head(text), text)
    return "for bytes in memory order use --hex, for a file --file, for WinDbg text --windbg"


def _dump_records(layout, memory, address: int, count) -> pipeline.Records:
    """``count`` records read from a crash dump at ``address`` (a dump has no end: "all" is refused)."""
    from .decoding import bytes_at

    if not isinstance(count, int):
        raise UsageError("--count all reads to the end of an input, and a crash dump has no end at an address: "
                         "give --count N")
    address, count, data = bytes_at(layout, memory, address, count)
    return pipeline.Records(layout, data=data, origin=memory.origin, count=count, address=address)


def _clip(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:37] + "...")


def _adapter(args, tgt, memory, notes: list):
    chosen = [name for name, given in (("--adapter sample", args.adapter), ("--segments PATH", args.segments),
                                       ("--segments-at ADDRESS", args.segments_at)) if given]
    if len(chosen) > 1:
        raise UsageError(f"give one of {', '.join(chosen)}, not {len(chosen)}")
    if args.adapter == "sample":
        from .samples import sample_adapter

        return sample_adapter(tgt)
    if args.segments_at:
        from .follow import follow, segments_adapter

        if memory is None:
            raise UsageError("--segments-at ADDRESS reads a DXGK_QUERYSEGMENTOUT* in memory: give --windbg, --dump, or "
                             "--file with --base")
        query = args.segment_type or QUERY_DEFAULT
        return segments_adapter(follow(query, memory, parse_address(args.segments_at, "--segments-at"), target=tgt))
    if args.segments:
        from .target import class_of
        from .semantics import Adapter

        seg_layout = resolve_layout(args.segment_type or "DXGK_SEGMENTDESCRIPTOR", tgt)
        origin = _origin(args, "segments")
        with pipeline.open_input(args.segments, origin) as f:
            head = f.read(4096)
        if pipeline.looks_like_text_dump(head):
            records = pipeline.Records.from_memory(seg_layout, _windbg_log(args.segments, origin, notes).memory_at(), 0,
                                                   "all")
        else:
            records = pipeline.Records(seg_layout, path=args.segments, origin=origin, count="all")
        cls = class_of(seg_layout)
        descriptors = [cls.from_buffer_copy(chunk.record(i)) for chunk in records.chunks() for i in range(chunk.count)]
        return Adapter.from_descriptors(descriptors, abi=tgt[0], interface_version=tgt[1])
    if args.segment_type:
        raise UsageError("--segment-type needs --segments PATH or --segments-at ADDRESS")
    return None


# ------------------------------------------------------------------ decode and validate
def _output_format(args) -> str:
    fmt = args.format or ("json" if args.json else "text")
    if args.json and args.format not in (None, "json"):
        raise UsageError(f"give --json or --format {args.format}, not both")
    missing = parquet_unavailable(fmt)
    if missing:
        raise UsageError(missing)
    return fmt


FILE_OPTIONS = ("file", "windbg", "dump", "segments")  # the options that name an input file


def _bundled(args, tgt) -> None:
    """Each file option given the word 'sample' made the path of its bundled file (--file's: the blob of TYPE's
    records), its name in messages ``<samples>/NAME`` (``_origin``); './sample' stays a file named sample."""
    args.origins = {}
    for option in FILE_OPTIONS:
        if getattr(args, option, None) != SAMPLE_WORD:
            continue
        from .samples import DIRECTORY, build  # only then: the samples load the classes (ctypes)

        if option == "file":
            c_name = resolve_layout(args.type, tgt).c_name
            name = build.BLOBS.get(c_name)
            if name is None:
                raise UsageError(f"--file sample is the bundled blob of {' or '.join(build.BLOBS)} records, not "
                                 f"{c_name}; give --file PATH (a file named sample: --file ./sample)")
            _as_written("--file", c_name, tgt)
        else:
            name = {"windbg": build.SESSION_FILE, "dump": build.DUMP_FILE, "segments": build.SEGMENTS_FILE}[option]
            if option == "segments":
                _as_written("--segments", args.segment_type or build.SEGMENT_TYPE, tgt)
        setattr(args, option, str(DIRECTORY / name))
        args.origins[option] = f"<samples>/{name}"
        note = shadowed(SAMPLE_WORD, f"--{option}")
        if note:
            args.shadowed = getattr(args, "shadowed", []) + [note]


def _as_written(option: str, type_name: str, tgt) -> None:
    """A bundled blob holds records as the sample's target lays them out: read as another type, or at a target
    whose layout of it differs (another ABI, a version that moves members), every field would be another's bytes."""
    from .samples import build, sample_target
    from .target import as_target

    own, tgt = sample_target(), as_target(tgt)
    mine = resolve_layout(build.SEGMENT_TYPE if option == "--segments" else type_name, own)
    theirs, written = resolve_layout(type_name, tgt), mine.c_name
    placed = {f.path: (f.offset, f.bit_offset, f.bit_width) for f in mine.leaves}
    # a member a version adds is carved out of reserved bits (the blob holds them 0): those moving is no misread
    moved = [f.path for f in theirs.leaves if not f.path.rpartition(".")[2].startswith("Reserved") and
             placed.get(f.path, (f.offset, f.bit_offset, f.bit_width)) != (f.offset, f.bit_offset, f.bit_width)]
    if theirs.c_name != written:
        why = f"not {theirs.c_name}: give {option} PATH"
    elif mine.size != theirs.size or moved:
        why = (f"which {tgt.label} lays out otherwise: pass --abi {own.abi} --ddi {own.interface_version.name} (or a "
               f"target of the same layout), or give {option} PATH")
    else:
        return
    raise UsageError(f"{option} sample is {written} records written at {own.label}, {why}")


def _origin(args, option: str) -> str:
    """An input file's name in messages: ``<samples>/NAME`` for a bundled one, else its path made safe to echo."""
    return getattr(args, "origins", {}).get(option) or safe_name(getattr(args, option))


def _inputs(args) -> list:
    """Every input the options name (a bundled file by its path); "-" stands for standard input (outfile compares
    its descriptor)."""
    return [p for p in (getattr(args, name, None) for name in FILE_OPTIONS) if p]


def _stream(args, stdout, stderr, *, validate: bool) -> int:
    tgt = _target(args)
    fmt = _output_format(args)
    out_path = "-" if args.output is None else args.output
    _bundled(args, tgt)
    check_output(out_path, inputs=_inputs(args), binary=fmt == "parquet")
    _source(args)
    notes: list = list(getattr(args, "shadowed", ()))
    memory = _memory(args, notes)
    adapter = _adapter(args, tgt, memory, notes)
    if args.follow:
        return _follow(args, tgt, memory, fmt, out_path, stdout, stderr, adapter=adapter, validate=validate,
                       notes=notes)
    records = _records(args, tgt, memory, notes)
    _say(notes, stderr)
    try:  # the input is open: whatever stops the run before its chunks are read closes it
        summary = _run(args, records, fmt, out_path, stdout, stderr, adapter=adapter, validate=validate)
    finally:
        records.close()
    if stderr is not None:
        if out_path != "-":
            records_text = plural(summary.records, "record")
            if validate and fmt in BULK_FORMATS:  # a row per finding (every finding is an error or a warning)
                found = summary.errors + summary.warnings
                what = f"{plural(found, 'finding')} for {records_text}"
            else:
                what = records_text
            stderr.write(f"{PROG}: wrote {what} to {safe_name(out_path)}\n")
        if summary.more:
            stderr.write(f"{PROG}: the input holds {summary.more:,} more {records.layout.c_name} "
                         f"{noun(summary.more, 'record')} after these; pass --count all to read them all\n")
    return EXIT_FINDINGS if validate and summary.errors else EXIT_OK


def _run(args, records, fmt: str, out_path: str, stdout, stderr, *, adapter, validate: bool):
    if fmt in BULK_FORMATS and not validate and records.layout.kind == "enum":
        raise UsageError(f"--format {fmt} writes the columns of a struct; {records.layout.c_name} is an enum")
    progress = None
    if fmt in BULK_FORMATS and stderr is not None and stderr.isatty():
        from .bulk.write import Progress

        progress = Progress(f"{records.layout.c_name} [{records.layout.label}]", records.count, stderr)
    binary = fmt == "parquet"
    with open_output(out_path, binary=binary, inputs=_inputs(args)) if out_path != "-" else _nullcontext(stdout) as out:
        sink = pipeline.sink_for(fmt, out, validate=validate, adapter=adapter, nonzero=getattr(args, "nonzero", False))
        return pipeline.run(records, sink, adapter=adapter, values=not validate and fmt in ("text", "json"),
                            findings=validate or fmt in ("text", "json"), progress=progress)


class _nullcontext:
    def __init__(self, value):
        self.value = value

    def __enter__(self):
        return self.value

    def __exit__(self, *exc):
        return False


def _say(notes: list, stderr) -> None:
    """What the inputs' reading passed over (a log's skipped lines), once the input is known to be good."""
    if stderr is not None:
        stderr.write("".join(f"{PROG}: {note}\n" for note in notes))


def _follow(args, tgt, memory, fmt: str, out_path: str, stdout, stderr, *, adapter, validate: bool,
            notes: list) -> int:
    """--follow: each record with what its pointers point to; decode prints it as dx -r does (or its JSON),
    validate the findings of every record reached (exit 1 on an error).  Every record is followed first,
    within one follow's limits for them all (so bad input is one line before any output), then written a
    piece at a time: memory holds the records reached, not their text."""
    from .follow import follow_all, follow_json_pieces, render_follow_lines

    if memory is None:
        raise UsageError(f"--follow reads pointers in memory at addresses: give --windbg, --dump, or --file with --base "
                         f"(not {'a VALUE' if args.value is not None else '--' + _source(args)})")
    if fmt not in ("text", "json"):
        raise UsageError(f"--follow prints text or JSON (--json): its records are of several types, not one table for "
                         f"--format {fmt}")
    layout = resolve_layout(args.type, tgt)
    if layout.kind == "enum":
        raise UsageError(f"{layout.c_name} is an enum, not a structure with pointers to follow")
    count = _count(args.count)
    if not isinstance(count, int):
        raise UsageError("--follow reads records at an address, and memory has no end there: give --count N, not all")
    offset = parse_int(args.offset, "--offset")
    if args.address is not None and offset:
        raise UsageError("give --offset (a byte offset into the input) or --address (a memory address), not both")
    address = _address(args, memory, offset)
    from .decoding import _span_at

    address, count = _span_at(layout, address, count)
    _width_note(memory, address, layout, notes)
    nodes = follow_all(layout, memory, address, count)
    _say(notes, stderr)
    with open_output(out_path, inputs=_inputs(args)) if out_path != "-" else _nullcontext(stdout) as out:
        if validate:
            sink = pipeline.sink_for(fmt, out, validate=True, adapter=adapter)
            summary = pipeline.run(pipeline.Followed(nodes), sink, adapter=adapter, values=False, findings=True)
        else:
            summary = None
            if fmt == "json":
                _write_pieces(out, _json_lines(nodes, adapter, follow_json_pieces))
            else:
                _write_pieces(out, _text_pieces(nodes, adapter, render_follow_lines))
    if stderr is not None and out_path != "-":
        stderr.write(f"{PROG}: wrote {plural(len(nodes), 'followed record')} to "
                     f"{safe_name(out_path)}\n")
    return EXIT_FINDINGS if validate and summary.errors else EXIT_OK


def _text_pieces(nodes, adapter, lines_of):
    """The followed records' text, a line at a time, a blank line between records."""
    for i, node in enumerate(nodes):
        if i:
            yield "\n"
        for line in lines_of(node, adapter=adapter):
            yield line + "\n"


def _json_lines(nodes, adapter, pieces_of):
    """The followed records' JSON, one line each, in pieces."""
    for node in nodes:
        yield from pieces_of(node, adapter=adapter)
        yield "\n"


def _write_pieces(out, pieces, size: int = 1 << 16) -> None:
    """Write text pieces in writes of about ``size`` characters."""
    batch, held = [], 0
    for piece in pieces:
        batch.append(piece)
        held += len(piece)
        if held >= size:
            out.write("".join(batch))
            batch, held = [], 0
    if batch:
        out.write("".join(batch))


def cmd_decode(args, stdout, stderr) -> int:
    return _stream(args, stdout, stderr, validate=False)


def cmd_validate(args, stdout, stderr) -> int:
    return _stream(args, stdout, stderr, validate=True)


# ------------------------------------------------------------------ layout, types, demo, etw
def _compare_targets(args) -> list:
    """The two (abi, version) targets of ``--compare A,B``."""
    items = args.compare.split(",")
    if len(items) != 2 or not all(item.strip() for item in items):
        raise UsageError(f"--compare {_clip(args.compare)}: give two targets separated by a comma: {COMPARE_HELP}")
    abi, version = _target(args)
    out = []
    for item in (item.strip() for item in items):
        if ":" in item:
            named_abi, _, named_version = item.partition(":")
            try:
                out.append((parse_abi(named_abi), int(parse_version(named_version))))
            except UnsupportedTarget as exc:
                raise UsageError(f"--compare {_clip(item)}: {exc}") from None
            continue
        try:
            out.append((parse_abi(item), version))
        except UnsupportedTarget:
            try:
                out.append((abi, int(parse_version(item))))
            except UnsupportedTarget as exc:
                raise UsageError(f"--compare: {_clip(item)} is neither an ABI ({', '.join(ABIS)}) nor an interface "
                                 f"version ({exc})") from None
    return out


def cmd_layout(args, stdout, stderr) -> int:
    if args.compare is not None:
        from .introspect import layout_diff

        diff = layout_diff(args.type, *_compare_targets(args))
        stdout.write((json.dumps(jsonformat.layout_diff_json(diff), indent=2) if args.json
                      else dttext.compare_text(diff)) + "\n")
        return EXIT_OK
    layout = resolve_layout(args.type, _target(args))
    if layout.kind == "enum":
        from .target import class_of

        cls = class_of(layout)
        if args.json:
            stdout.write(json.dumps({"type": layout.c_name, "target": jsonformat.target_json(layout), "size": 4,
                                     "enumerators": {m.name: m.value for m in cls}}) + "\n")
        else:
            members = "\n".join(f"   {m.name} = {m.value}" for m in cls)
            stdout.write(f"{layout.c_name}  {layout.label}  enum, 4 bytes (int)\n{members}\n")
        return EXIT_OK
    if args.json:
        stdout.write(json.dumps(jsonformat.layout_json(layout), indent=2) + "\n")
    else:
        stdout.write(dttext.layout_text(layout) + "\n")
    return EXIT_OK


def cmd_types(args, stdout, stderr) -> int:
    """What exists at a target, and where the rest exists: from the table, without building any class."""
    abi, version = _target(args)
    names = known_names(abi, version)
    present = sorted(n for n in names if not n.startswith("_"))
    everywhere = {n for a in ABIS for v in INTERFACE_VERSIONS.values() for n in known_names(a, v)}
    absent = sorted(n for n in everywhere if not n.startswith("_") and n not in names)
    label = resolve_layout(present[0], (abi, version)).label
    rows = [_type_row(n, names, abi, version) for n in present]
    notes = {n: f"only where {type_guard(n).describe()}" for n in absent}
    if args.json:
        stdout.write(json.dumps({"target": jsonformat.target_json(resolve_layout(present[0], (abi, version))),
                                 "types": rows, "not_at_this_target": notes}, indent=2) + "\n")
        return EXIT_OK
    width = max(len(n) for n in present)
    out = [f"{len(present)} types at {label}:"]
    for r in rows:
        also = f"  (also {', '.join(r['aliases'])})" if r["aliases"] else ""
        out.append(f"   {r['name'].ljust(width)}  {r['kind']:<6} {r['size']:>4} bytes{also}")
    if absent:
        out.append("not at this target:")
        out.extend(f"   {n.ljust(width)}  {notes[n]}" for n in absent)
    stdout.write("\n".join(out) + "\n")
    return EXIT_OK


def _type_row(name: str, names: dict, abi: str, version: int) -> dict:
    layout = resolve_layout(name, (abi, version))
    aliases = sorted(n for n, original in names.items() if original == names[name] and n != name)
    if layout.kind == "enum":
        return {"name": name, "kind": "enum", "size": 4, "aliases": []}
    return {"name": name, "kind": layout.kind, "size": layout.size, "aliases": aliases}


def cmd_demo(args, stdout, stderr) -> int:
    from .samples import demo

    stdout.write(demo.run(json_output=args.json))
    return EXIT_OK


def cmd_etw(args, stdout, stderr) -> int:
    from .etw.outputs import command as etw_command

    return etw_command.run(args, stdout, stderr)


COMMANDS = {"decode": cmd_decode, "validate": cmd_validate, "layout": cmd_layout, "types": cmd_types,
            "demo": cmd_demo, "etw": cmd_etw}


# ------------------------------------------------------------------ entry points
def execute(argv, stdout, stderr) -> int:
    """Run one command line, writing to the given streams; bad input is one line on ``stderr``, exit 2."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = _parser(argv)
    try:
        try:
            args = parser.parse_args(argv)
        except SystemExit as exc:  # --help has printed
            return int(exc.code or 0)
        except _ShowVersion:
            stdout.write(f"{PROG} {_version()}\n")
            return EXIT_OK
        if args.command is None:
            stdout.write(parser.format_help())
            return EXIT_USAGE
        return COMMANDS[args.command](args, stdout, stderr)
    except D3dkmddiError as exc:
        text = str(exc)
        stdout.flush()
        # argparse's own messages start "d3dkmddi decode: "; a path such as d3dkmddi_py/x.bin must not pass for one
        stderr.write(_one_line(text if text.startswith((f"{PROG}:", f"{PROG} ")) else f"{PROG}: error: {text}"))
        return EXIT_USAGE


def run(argv=None) -> tuple[str, str, int]:
    """(stdout text, stderr text, exit status) of one command line, without exiting (tests, embedding)."""
    out, err = io.StringIO(), io.StringIO()
    status = execute(argv, out, err)
    return out.getvalue(), err.getvalue(), status


def _one_line(text: str) -> str:
    return " ".join(part.strip() for part in text.splitlines() if part.strip()) + "\n"


def main(argv=None) -> int:
    return run_guarded(lambda: _main(argv))


def _main(argv) -> int:
    def one_line(message, category, filename, lineno, file=None, line=None):
        sys.stderr.write(f"{PROG}: warning: {message}\n")

    warnings.showwarning = one_line  # NumpyMissingWarning and the like: one line, no source echo
    pipeline.keep_heap()
    status = execute(argv, sys.stdout, sys.stderr)
    sys.stdout.flush()
    return status


if __name__ == "__main__":
    sys.exit(main())
