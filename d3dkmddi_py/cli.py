"""The ``d3dkmddi`` command: decode, layout, validate, types and demo.

Every bad input ends with one line on standard error and exit status 2, before any
output: each command builds its whole output first and prints it at the end.
``validate`` exits 1 when a record has an error-level finding.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys

from . import render
from .errors import D3dkmddiError
from .target import ABIS, NEWEST, InterfaceVersion, parse_abi, parse_interface_version, target as make_target

# The module, not the function: d3dkmddi_py re-exports decode(), which hides the submodule's name.
from . import decoding as dec

PROG = "d3dkmddi"
EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2
BULK_FORMATS = ("csv", "jsonl", "parquet")


class UsageError(Exception):
    """A bad command line or input: printed as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    """argparse with its errors as one line (no usage block) and exit status 2."""

    def error(self, message):
        raise UsageError(f"{self.prog}: {message} (see {self.prog} --help)")


# ------------------------------------------------------------------ arguments
def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog=PROG, description="Decode, explain and validate WDDM video-memory-manager structures "
                                       "(d3dkmddi.h, d3dukmdt.h) from bytes, files and WinDbg output.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    def target_options(q):
        q.add_argument("--abi", default="x64", help=f"target ABI: {', '.join(ABIS)} (default x64)")
        q.add_argument("--ddi", default=NEWEST.name, metavar="VERSION",
                       help=f"DXGKDDI_INTERFACE_VERSION as a name (WDDM2_0) or a number (0x5023); "
                            f"default {NEWEST.name}")
        q.add_argument("--json", action="store_true", help="print JSON instead of text")

    def input_options(q):
        q.add_argument("type", metavar="TYPE", help="C type name, e.g. DXGK_ALLOCATIONINFO")
        q.add_argument("value", metavar="VALUE", nargs="?",
                       help="an integer word (0x485, 1157), e.g. from an ETW event or a register")
        src = q.add_mutually_exclusive_group()
        src.add_argument("--file", metavar="PATH", help="raw bytes from a file ('-' for standard input)")
        src.add_argument("--windbg", metavar="PATH", help="text of WinDbg db/dd/dq/dp output ('-' for standard input)")
        src.add_argument("--hex", metavar="HEX", help="bytes in memory order, e.g. '85 04 00 00'")
        q.add_argument("--offset", default="0", help="byte offset of the first record (default 0)")
        q.add_argument("--count", default="1", help="number of records, or 'all' (default 1)")
        q.add_argument("--adapter", metavar="NAME", choices=("sample",),
                       help="check allocations against an adapter's segments: 'sample' is the bundled adapter")
        q.add_argument("--segments", metavar="PATH", help="a file of segment descriptors to check allocations against")
        q.add_argument("--segment-type", default=None, metavar="TYPE",
                       help="the descriptor type in --segments (default DXGK_SEGMENTDESCRIPTOR)")
        target_options(q)

    q = sub.add_parser("decode", help="print records as WinDbg dt -r does, with meanings and findings")
    input_options(q)
    q.add_argument("--nonzero", action="store_true", help="print only non-zero fields (and fields with findings)")
    q.add_argument("--format", choices=("text", "json") + BULK_FORMATS, default=None,
                   help="output format; csv, jsonl and parquet write columns of every record (with --count all)")
    q.add_argument("--output", "-o", metavar="PATH", help="write the csv/jsonl/parquet columns here")

    q = sub.add_parser("validate", help="print the findings of records; exit status 1 on an error-level finding")
    input_options(q)

    q = sub.add_parser("layout", help="the layout table of a type, like dt without an address")
    q.add_argument("type", metavar="TYPE")
    target_options(q)

    q = sub.add_parser("types", help="the types that exist at a target")
    target_options(q)

    q = sub.add_parser("demo", help="decode and validate the bundled sample adapter and allocations")
    q.add_argument("--json", action="store_true", help="print JSON instead of text")
    return p


def _target(args):
    return make_target(parse_abi(args.abi), parse_interface_version(args.ddi))


def _count(text: str):
    if text.strip().lower() == "all":
        return "all"
    return dec.parse_int(text, "--count")


def _read_stdin(binary: bool):
    try:
        return sys.stdin.buffer.read() if binary else sys.stdin.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read standard input: {exc}") from None


def _source(args) -> str:
    sources = [s for s in ("value", "file", "windbg", "hex") if getattr(args, s) is not None]
    if not sources:
        raise UsageError(f"{PROG} {args.command}: no input; give a VALUE, --file PATH, --windbg PATH or --hex HEX")
    if len(sources) > 1:
        raise UsageError(f"{PROG} {args.command}: give one input, not {' and '.join(sources)}")
    return sources[0]


def _memory(args, cls) -> dec.Memory:
    """The bytes the input options name (a VALUE becomes the type's little-endian bytes)."""
    source = _source(args)
    if source == "value":
        try:
            number = dec.parse_int(args.value, "VALUE")
        except dec.DecodeError:
            hint = ("it is a file: pass --file " + args.value) if os.path.isfile(args.value) else \
                   "for bytes in memory order use --hex, for a file --file, for WinDbg text --windbg"
            raise UsageError(f"VALUE {args.value!r} is not an integer; {hint}") from None
        return dec.Memory(dec.int_to_bytes(number, cls), None, "VALUE")
    if source == "file":
        if args.file == "-":
            return dec.Memory(_read_stdin(True), None, "standard input")
        return dec.read_input(args.file, kind="file")
    if source == "windbg":
        if args.windbg == "-":
            return dec.parse_windbg(_read_stdin(False), "standard input")
        raw = dec.read_file(args.windbg)
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise UsageError(f"{args.windbg} is not text (byte {exc.start} is not UTF-8); for raw bytes "
                             f"use --file {args.windbg}") from None
        return dec.parse_windbg(text, args.windbg)
    return dec.read_input(args.hex, kind="hex")


def _records(args, tgt):
    """(records, class, target) of the input; every check happens before the first read."""
    cls, tgt = dec.resolve_type(args.type, tgt)
    offset = dec.parse_int(args.offset, "--offset")
    count = _count(args.count)
    if _source(args) == "file" and args.file != "-":  # only the requested range is read
        records, cls, tgt, _ = dec.decode_records(cls, args.file, target=tgt, offset=offset, count=count,
                                                  kind="file")
        return records, cls, tgt
    memory = _memory(args, cls)
    records, cls, tgt, _ = dec.decode_records(cls, memory.data, target=tgt, offset=offset, count=count,
                                              origin=memory.origin)
    if memory.address is not None:
        records = [dec.Record(r.value, r.index, r.offset, memory.address + r.offset) for r in records]
    return records, cls, tgt


# ------------------------------------------------------------------ semantics
def _semantics():
    from . import semantics

    return semantics


def findings_for(value, tgt, adapter=None) -> list:
    """The semantic findings of one decoded struct (none for an enum decoded alone)."""
    if not hasattr(type(value), "_leaves_"):
        return []
    return list(_semantics().check(value, type(value)._c_name_, target=tgt, adapter=adapter))


def meanings_for(value, tgt, adapter=None) -> dict:
    """Leaf path -> what its value means, from the semantics helpers."""
    if not hasattr(type(value), "_leaves_"):
        return {}
    return dict(_semantics().field_meanings(value, type(value)._c_name_, target=tgt, adapter=adapter))


# ------------------------------------------------------------------ commands
def cmd_decode(args) -> tuple[str, int]:
    tgt = _target(args)
    fmt = args.format or ("json" if args.json else "text")
    if args.json and args.format not in (None, "json"):
        raise UsageError(f"give --json or --format {args.format}, not both")
    if fmt in BULK_FORMATS:
        return _bulk(args, tgt, fmt)
    if args.output is not None:
        raise UsageError("--output is for --format csv, jsonl or parquet; text and JSON go to standard output")
    adapter = _adapter(args, tgt)
    records, cls, tgt = _records(args, tgt)
    name = dec.c_name(cls)
    if fmt == "json":
        objs = [render.record_json(r.value, c_name=name, tgt=tgt, index=r.index, offset=r.offset,
                                   address=r.address, findings=findings_for(r.value, tgt, adapter),
                                   meanings=meanings_for(r.value, tgt, adapter)) for r in records]
        return "".join(json.dumps(o) + "\n" for o in objs), EXIT_OK
    blocks = []
    for r in records:
        title = render.record_title(name, tgt.label, r.index, r.offset, r.address, dec.type_size(cls))
        blocks.append(render.render_text(r.value, findings=findings_for(r.value, tgt, adapter),
                                         meanings=meanings_for(r.value, tgt, adapter), title=title,
                                         nonzero=args.nonzero))
    return "\n\n".join(blocks) + "\n", EXIT_OK


def _bulk(args, tgt, fmt) -> tuple[str, int]:
    """``--format csv|jsonl|parquet``: every leaf as a column, through d3dkmddi_py.bulk.

    Calls ``bulk.write_records(cls, data, out, fmt=, offset=, count=, progress=True)`` with a
    file path (memory-mapped a chunk at a time) or the bytes of any other input.  The same
    checks as the record path run first, so a bad input stops before the first row.
    """
    from . import bulk

    cls, tgt = dec.resolve_type(args.type, tgt)
    if not hasattr(cls, "_leaves_"):
        raise UsageError(f"--format {fmt} writes the columns of a struct; {dec.c_name(cls)} is an enum")
    offset = dec.parse_int(args.offset, "--offset")
    count = _count(args.count)
    if fmt == "parquet" and importlib.util.find_spec("pyarrow") is None:
        raise UsageError("--format parquet needs pyarrow, which is not installed; pip install pyarrow "
                         "(or use --format csv or jsonl)")
    if _source(args) == "file" and args.file != "-":
        data = args.file
        total = dec.file_size(args.file)
        origin = args.file
    else:
        memory = _memory(args, cls)
        data, total, origin = memory.data, len(memory.data), memory.origin
    offset, n = dec.check_range(cls, tgt, total, origin, offset, count)
    out = args.output
    if out is None:
        if fmt == "parquet" and sys.stdout.isatty():
            raise UsageError("--format parquet is binary; give --output PATH or redirect standard output")
        out = sys.stdout
    else:
        folder = os.path.dirname(os.path.abspath(out))
        if not os.path.isdir(folder) or not os.access(folder, os.W_OK):
            raise UsageError(f"cannot write --output {out}: {folder} is not a writable directory")
    bulk.write_records(cls, data, out, fmt=fmt, offset=offset, count=n, progress=True)
    return "", EXIT_OK


def _adapter(args, tgt):
    if args.adapter == "sample":
        if args.segments:
            raise UsageError("give --adapter sample or --segments PATH, not both")
        from .samples import sample_adapter

        return sample_adapter()
    if args.segments:
        seg_type = args.segment_type or "DXGK_SEGMENTDESCRIPTOR"
        segs, *_ = dec.decode_records(seg_type, args.segments, target=tgt, count="all", kind="file")
        return _semantics().Adapter.from_descriptors([s.value for s in segs], abi=tgt.abi,
                                                     interface_version=tgt.interface_version)
    if args.segment_type:
        raise UsageError("--segment-type needs --segments PATH")
    return None


def cmd_validate(args) -> tuple[str, int]:
    tgt = _target(args)
    adapter = _adapter(args, tgt)
    records, cls, tgt = _records(args, tgt)
    name = dec.c_name(cls)
    per_record = [(r, findings_for(r.value, tgt, adapter)) for r in records]
    errors = sum(render.count_severity(fs, "error") for _, fs in per_record)
    warnings = sum(render.count_severity(fs, "warning") for _, fs in per_record)
    status = EXIT_FINDINGS if errors else EXIT_OK
    if args.json:
        objs = [render.record_json(r.value, c_name=name, tgt=tgt, index=r.index, offset=r.offset,
                                   address=r.address, findings=fs, meanings=meanings_for(r.value, tgt, adapter))
                for r, fs in per_record]
        return "".join(json.dumps(o) + "\n" for o in objs), status
    out = []
    for r, fs in per_record:
        title = render.record_title(name, tgt.label, r.index, r.offset, r.address)
        out.append(f"{title}: {render.tally(fs)}")
        for f in fs:
            j = render.finding_json(f)
            where = f" {j['field']}" if j["field"] else ""
            out.append(f"   {j['severity']} {j['rule_id']}{where}: {j['message']}")
            ref = j["reference"]
            if ref and (ref["sentence"] or ref["page"]):
                out.append(f"      \"{ref['sentence']}\" ({ref['page']})")
    out.append(f"{len(records)} record{'s' if len(records) != 1 else ''}: {errors} error{'s' if errors != 1 else ''}, "
               f"{warnings} warning{'s' if warnings != 1 else ''}")
    return "\n".join(out) + "\n", status


def cmd_layout(args) -> tuple[str, int]:
    tgt = _target(args)
    cls, tgt = dec.resolve_type(args.type, tgt)
    if not hasattr(cls, "_leaves_"):
        members = "\n".join(f"   {m.name} = {m.value}" for m in cls)
        if args.json:
            return json.dumps({"type": cls.__name__, "target": render.target_json(tgt), "size": 4,
                               "enumerators": {m.name: m.value for m in cls}}) + "\n", EXIT_OK
        return f"{cls.__name__}  {tgt.label}  enum, 4 bytes (int)\n{members}\n", EXIT_OK
    if args.json:
        return json.dumps(render.layout_json(cls, tgt), indent=2) + "\n", EXIT_OK
    return render.layout_text(cls, tgt.label) + "\n", EXIT_OK


def cmd_types(args) -> tuple[str, int]:
    tgt = _target(args)
    types = tgt.types
    present = sorted({n for n, c in types.items() if not n.startswith("_")})
    absent = []
    for version in InterfaceVersion:
        for abi in ABIS:
            for n in make_target(abi, version).types:
                if not n.startswith("_") and n not in types and n not in absent:
                    absent.append(n)
    absent = sorted(absent)
    if args.json:
        obj = {"target": render.target_json(tgt),
               "types": [_type_json(n, types[n]) for n in present],
               "not_at_this_target": {n: _absent_note(n, tgt) for n in absent}}
        return json.dumps(obj, indent=2) + "\n", EXIT_OK
    width = max(len(n) for n in present)
    out = [f"{len(present)} types at {tgt.label}:"]
    for n in present:
        j = _type_json(n, types[n])
        also = f"  (also {', '.join(j['aliases'])})" if j["aliases"] else ""
        out.append(f"   {n.ljust(width)}  {j['kind']:<6} {j['size']:>4} bytes{also}")
    if absent:
        out.append("not at this target:")
        for n in absent:
            out.append(f"   {n.ljust(width)}  {_absent_note(n, tgt)}")
    return "\n".join(out) + "\n", EXIT_OK


def _type_json(name, cls) -> dict:
    import ctypes

    if not hasattr(cls, "_leaves_"):
        return {"name": name, "kind": "enum", "size": 4, "aliases": []}
    aliases = sorted(n for n, c in make_target(*cls._target_).types.items() if c is cls and n != name)
    return {"name": name, "kind": cls._layout_.kind, "size": ctypes.sizeof(cls), "aliases": aliases}


def _absent_note(name, tgt) -> str:
    try:
        getattr(tgt, name)
    except D3dkmddiError as exc:
        text = str(exc)
        return text.split(" exists ", 1)[1].split(";")[0].strip() if " exists " in text else text
    return ""


def cmd_demo(args) -> tuple[str, int]:
    from .samples import demo

    return demo.run(json_output=args.json), EXIT_OK


COMMANDS = {"decode": cmd_decode, "validate": cmd_validate, "layout": cmd_layout, "types": cmd_types,
            "demo": cmd_demo}


# ------------------------------------------------------------------ entry point
def run(argv=None) -> tuple[str, str, int]:
    """(stdout text, stderr text, exit status) of one command line, without exiting.

    Only --help and the column formats (csv, jsonl, parquet, which stream) write to
    standard output themselves; everything else is returned whole, so a failure leaves
    no partial output behind.
    """
    parser = _parser()
    try:
        try:
            args = parser.parse_args(argv)
        except SystemExit as exc:  # --help has printed the help
            return "", "", int(exc.code or 0)
        if args.command is None:
            return parser.format_help(), "", EXIT_USAGE
        out, status = COMMANDS[args.command](args)
        return out, "", status
    except UsageError as exc:
        text = str(exc)
        return "", _one_line(text if text.startswith(PROG) else f"{PROG}: error: {text}"), EXIT_USAGE
    except D3dkmddiError as exc:
        return "", _one_line(f"{PROG}: error: {exc}"), EXIT_USAGE


def _one_line(text: str) -> str:
    return " ".join(part.strip() for part in text.splitlines() if part.strip()) + "\n"


def main(argv=None) -> int:
    out, err, status = run(argv)
    try:
        if out:
            sys.stdout.write(out)
            sys.stdout.flush()
    except BrokenPipeError:  # `d3dkmddi decode ... | head`
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return status
    if err:
        sys.stderr.write(err)
    return status


if __name__ == "__main__":
    sys.exit(main())
