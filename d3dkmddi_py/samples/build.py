"""The bundled sample, written from this table: ``python -m d3dkmddi_py.samples`` rewrites the files.

A small x64 adapter at DXGKDDI_INTERFACE_VERSION_WDDM3_0 as its driver would report it
(three DXGK_SEGMENTDESCRIPTOR records) and allocation infos its DxgkDdiCreateAllocation
would fill in (DXGK_ALLOCATIONINFO records).  Some allocations are what a careful
driver writes; the others each break documented rules, named in ``breaks``.

The records are built through the package's checked classes and written as raw bytes,
so the files are exactly what a dump of the driver's memory would hold.  The files are
checked in; tests/samples/test_samples.py fails when they differ from what this module writes.
"""
from __future__ import annotations

from pathlib import Path

ABI = "x64"
INTERFACE_VERSION = "WDDM3_0"
SEGMENT_TYPE = "DXGK_SEGMENTDESCRIPTOR"
ALLOCATION_TYPE = "DXGK_ALLOCATIONINFO"
SEGMENTS_FILE = "segments.bin"
ALLOCATIONS_FILE = "allocations.bin"
WINDBG_FILE = "allocations.dq.txt"  # the first records as WinDbg `dq` prints them
WINDBG_ADDRESS = 0xFFFFB80C4E2F1000  # where the allocation array sits in the (imagined) debuggee
WINDBG_RECORDS = 2
# A WinDbg session log as a user keeps it (.logopen): the driver's answer to the segment query and one
# DxgkDdiCreateAllocation call, dumped at the breakpoints, with the other output of the session between.
SESSION_FILE = "session.log"
QUERY_ADDRESS = 0xFFFFB80C4E310000  # DXGK_QUERYSEGMENTOUT3, the driver's answer (pOutputData)
DESCRIPTORS_ADDRESS = 0xFFFFB80C4E311000  # its DXGK_SEGMENTDESCRIPTOR3 array
CREATE_ADDRESS = 0xFFFFB80C4E2F0000  # DXGKARG_CREATEALLOCATION, the call's argument (rdx)
CREATE_DATA_ADDRESS = 0xFFFFB80C4E2F0100  # its private driver data
HINTS_ADDRESS = 0xFFFFB80C4E2F2000  # the allocation infos' usage hints (DXGK_ALLOCATIONUSAGEHINT)
SESSION_ALLOCATIONS = (0, "ALLOCINFO.PRIORITY_ZERO", "ALLOCINFO.SET_UNKNOWN_SEGMENT")  # index, or a rule broken
DUMP_FILE = "session.dmp"  # the session's memory as a small x64 kernel crash dump (dump_build): every object, one address
DUMP_KIND = "kernel"
# --file sample: the bundled blob of the TYPE's records
BLOBS = {ALLOCATION_TYPE: ALLOCATIONS_FILE, SEGMENT_TYPE: SEGMENTS_FILE}

MB = 1 << 20
KB = 1 << 10
from .._records import dataclass, field
from ..semantics.priority import LEVELS as PRIORITY  # noqa: E402 - D3DDDI_ALLOCATIONPRIORITY_* from the table
from ..target import target


@dataclass(frozen=True)
class Segment:
    note: str
    BaseAddress: int
    CpuTranslatedAddress: int
    Size: int
    CommitLimit: int
    flags: tuple
    NbOfBanks: int = 0
    pBankRangeTable: int = 0


# Segment ids are one-based: segment n is bit n-1 of a segment set.
SEGMENTS = (
    Segment("local video memory, 256 MB in 4 banks, 64 KB pages", BaseAddress=0, CpuTranslatedAddress=0,
            Size=256 * MB, CommitLimit=256 * MB, flags=("UseBanking", "Use64KBPages", "DirectFlip"),
            NbOfBanks=4, pBankRangeTable=0xFFFFF8061A2C3F40),
    Segment("CPU-visible local memory behind a 64 MB BAR, pitch-aligned", BaseAddress=256 * MB,
            CpuTranslatedAddress=0xE0000000, Size=64 * MB, CommitLimit=64 * MB,
            flags=("CpuVisible", "PitchAlignment")),
    Segment("cache-coherent aperture over system memory, 512 MB", BaseAddress=0x100000000,
            CpuTranslatedAddress=0, Size=512 * MB, CommitLimit=256 * MB, flags=("Aperture", "CacheCoherent")),
)

LOCAL, VISIBLE, APERTURE = 1, 2, 3


def seg_set(*ids: int) -> int:
    """A segment set from one-based segment ids (id n is bit n-1)."""
    out = 0
    for i in ids:
        out |= 1 << (i - 1)
    return out


@dataclass(frozen=True)
class Allocation:
    """One DXGK_ALLOCATIONINFO; fields not named keep the defaults of a well-formed record."""

    note: str
    breaks: tuple = ()  # rule ids of d3dkmddi_py.semantics this record is written to break
    Size: int = 4 * MB
    Alignment: int = 64 * KB
    PitchAlignedSize: int = 0
    preferred: tuple = ((LOCAL, 0),)  # (segment id, direction) pairs, highest priority first
    PreferredSegmentReserved: int = 0
    banks: tuple = ()  # (bank id, direction) pairs
    read: int | None = None  # SupportedReadSegmentSet; None = the same as the write set
    write: int = seg_set(LOCAL)
    EvictionSegmentSet: int = seg_set(APERTURE)
    AllocationPriority: int = PRIORITY["NORMAL"]
    flags: tuple = ()  # FlagsWddm2 bit names (the arm the video memory manager reads from WDDM 2.0)
    flags_raw: int = 0  # extra FlagsWddm2 bits, for reserved ones
    flags2: int = 0  # Flags2.Value
    PrivateDriverDataSize: int = 0x40
    extra: dict = field(default_factory=dict)


A = Allocation
ALLOCATIONS = (
    # ---- what a careful driver writes
    A("render target in banked local memory, banks 1 then 2, falls back to the aperture",
      preferred=((LOCAL, 0), (APERTURE, 0)), banks=((1, 0), (2, 1)), write=seg_set(LOCAL, APERTURE)),
    A("1920x1080 32 bpp primary surface, local memory only", Size=0x7E9000, write=seg_set(LOCAL),
      AllocationPriority=PRIORITY["MAXIMUM"], flags=("Overlay",)),
    A("staging buffer the CPU writes, in the BAR (pitch-aligned size given)", Size=1 * MB, Alignment=0,
      PitchAlignedSize=1 * MB, preferred=((VISIBLE, 0), (APERTURE, 0)), write=seg_set(VISIBLE, APERTURE),
      flags=("CpuVisible", "Cached"), AllocationPriority=PRIORITY["LOW"]),
    A("vertex buffer in the aperture, CPU-visible", Size=128 * KB, Alignment=4 * KB,
      preferred=((APERTURE, 0),), write=seg_set(APERTURE), EvictionSegmentSet=0, flags=("CpuVisible",),
      AllocationPriority=PRIORITY["HIGH"]),
    A("shadow copy allocated from the top of local memory", Size=16 * MB, preferred=((LOCAL, 1),),
      banks=((4, 1),), write=seg_set(LOCAL), AllocationPriority=PRIORITY["MINIMUM"]),
    A("history buffer (CPU-visible, as the flag requires)", Size=64 * KB, Alignment=0, PitchAlignedSize=64 * KB,
      preferred=((VISIBLE, 0),), write=seg_set(VISIBLE), EvictionSegmentSet=0,
      flags=("CpuVisible", "HistoryBuffer")),
    A("texture with a 64 KB recommended page size, local or aperture", Size=2 * MB,
      preferred=((LOCAL, 0), (APERTURE, 0)), write=seg_set(LOCAL, APERTURE),
      extra={"MinimumPageSize": 0, "RecommendedPageSize": 1}),
    A("backing store shared with the kernel-mode driver, aperture only", Size=256 * KB, Alignment=0,
      preferred=((APERTURE, 0),), write=seg_set(APERTURE), EvictionSegmentSet=0, flags2=0x1),
    A("physically accessed ring buffer with explicit residency notification", Size=64 * KB,
      write=seg_set(LOCAL), flags=("AccessedPhysically", "ExplicitResidencyNotification")),
    A("depth buffer, read set left 0 (only the write set counts from WDDM 2.0)", Size=0x7E9000, read=0,
      write=seg_set(LOCAL)),
    A("capture buffer with every preference slot used", Size=1 * MB,
      preferred=((LOCAL, 0), (APERTURE, 0)), banks=((3, 0), (1, 0), (2, 0), (4, 0)), write=seg_set(LOCAL, APERTURE),
      flags=("Capture",)),
    A("aperture allocation the driver maps with MapApertureCpuVisible", Size=512 * KB, Alignment=0,
      preferred=((APERTURE, 0),), write=seg_set(APERTURE), EvictionSegmentSet=0, flags=("MapApertureCpuVisible",)),
    # ---- each of these breaks documented rules
    A("render target with AllocationPriority 0", breaks=("ALLOCINFO.PRIORITY_ZERO",), AllocationPriority=0),
    A("staging buffer whose PitchAlignedSize is smaller than Size", breaks=("ALLOCINFO.PITCHALIGNEDSIZE_LT_SIZE",),
      Size=1 * MB, Alignment=0, PitchAlignedSize=512 * KB, preferred=((VISIBLE, 0),), write=seg_set(VISIBLE),
      flags=("CpuVisible",)),
    A("constant buffer of 0x1234 bytes (not a page multiple)", breaks=("ALLOCINFO.SIZE_NOT_PAGE_MULTIPLE",),
      Size=0x1234, Alignment=0, preferred=((APERTURE, 0),), write=seg_set(APERTURE), EvictionSegmentSet=0),
    A("prefers local memory but supports only the aperture", breaks=("ALLOCINFO.PREFERRED_NOT_SUPPORTED",),
      preferred=((LOCAL, 0),), write=seg_set(APERTURE)),
    A("read set differs from the write set", breaks=("ALLOCINFO.READ_SET_IGNORED",),
      read=seg_set(LOCAL, VISIBLE, APERTURE), write=seg_set(LOCAL, APERTURE),
      preferred=((LOCAL, 0), (APERTURE, 0))),
    A("supported set names segment 4, which the adapter does not have", breaks=("ALLOCINFO.SET_UNKNOWN_SEGMENT",),
      write=seg_set(LOCAL, 4)),
    A("evicts to local memory instead of an aperture", breaks=("ALLOCINFO.EVICTION_APERTURE_ONLY",),
      EvictionSegmentSet=seg_set(LOCAL)),
    A("evicts to the pitch-aligned BAR segment",
      breaks=("ALLOCINFO.EVICTION_APERTURE_ONLY", "ALLOCINFO.EVICTION_PITCHALIGNED"),
      EvictionSegmentSet=seg_set(VISIBLE)),
    A("4 KB alignment in a 64 KB-page segment", breaks=("ALLOCINFO.ALIGNMENT_64KB",), Alignment=4 * KB),
    A("pitch-aligned size given, but no pitch-aligned segment is supported",
      breaks=("ALLOCINFO.PITCHALIGNEDSIZE_UNUSED",), PitchAlignedSize=4 * MB),
    A("BAR allocation without a pitch-aligned size", breaks=("ALLOCINFO.PITCHALIGNEDSIZE_MISSING",), Size=1 * MB,
      Alignment=0, preferred=((VISIBLE, 0),), write=seg_set(VISIBLE), EvictionSegmentSet=0,
      flags=("CpuVisible",)),
    A("bank hint for the aperture, which has no banks", breaks=("ALLOCINFO.HINTEDBANK_WITHOUT_BANKING",),
      Alignment=0, preferred=((APERTURE, 0),), banks=((1, 0),), write=seg_set(APERTURE), EvictionSegmentSet=0),
    A("bank 6 hinted in a segment of 4 banks", breaks=("ALLOCINFO.HINTEDBANK_OUT_OF_RANGE",), banks=((6, 0),)),
    A("bank list with a gap (bank 3 after an empty slot)", breaks=("BANKPREF.ID_AFTER_ZERO",),
      banks=((1, 0), (0, 0), (3, 0))),
    A("segment preference list with a gap", breaks=("SEGPREF.ID_AFTER_ZERO",),
      preferred=((LOCAL, 0), (0, 0), (APERTURE, 0)), write=seg_set(LOCAL, APERTURE)),
    A("PreferredSegment with its reserved bits set", breaks=("SEGPREF.RESERVED_NONZERO",),
      PreferredSegmentReserved=0x3),
    A("PermanentSysMem without CpuVisible", breaks=("ALLOCFLAGS.PERMANENTSYSMEM_NEEDS_CPUVISIBLE",),
      Alignment=0, preferred=((APERTURE, 0),), write=seg_set(APERTURE), EvictionSegmentSet=0,
      flags=("PermanentSysMem",)),
    A("Cached without CpuVisible", breaks=("ALLOCFLAGS.CACHED_NEEDS_CPUVISIBLE",), flags=("Cached",)),
    A("Protected together with ExistingSysMem",
      breaks=("ALLOCFLAGS.PROTECTED_EXCLUSIVE", "ALLOCFLAGS.EXISTINGSYSMEM_EXCLUSIVE"),
      Alignment=0, preferred=((APERTURE, 0),), write=seg_set(APERTURE), EvictionSegmentSet=0,
      flags=("Protected", "ExistingSysMem")),
    A("ExplicitResidencyNotification without AccessedPhysically",
      breaks=("ALLOCFLAGS.EXPLICITRESIDENCY_NEEDS_ACCESSEDPHYSICALLY",), flags=("ExplicitResidencyNotification",)),
    A("reserved allocation flag bit 31 set", breaks=("ALLOCFLAGS.RESERVED_NONZERO",), flags_raw=1 << 31),
    A("Flags2 bit 1 (NoImplicitSynchronization, WDDM 3.2) at WDDM 3.0", breaks=("ALLOCFLAGS2.UNDEFINED_AT_VERSION",),
      flags2=0x2),
    A("ShareBackingStoreWithKmd on a local-memory allocation", breaks=("ALLOCINFO.SHAREBACKINGSTORE_APERTURE_ONLY",),
      flags2=0x1),
)


def _target():
    return target(ABI, INTERFACE_VERSION)


def segment_bytes(tgt=None, descriptor: str = SEGMENT_TYPE) -> bytes:
    """The segments as their driver reports them, at the sample's target or at ``tgt`` (a Target), as
    ``descriptor`` records: the checked classes refuse a target whose descriptors cannot hold them."""
    cls = getattr(tgt or _target(), descriptor)
    out = bytearray()
    for s in SEGMENTS:
        d = cls()
        d.BaseAddress.QuadPart = s.BaseAddress
        d.CpuTranslatedAddress.QuadPart = s.CpuTranslatedAddress
        d.Size, d.CommitLimit = s.Size, s.CommitLimit
        d.NbOfBanks, d.pBankRangeTable = s.NbOfBanks, s.pBankRangeTable
        for name in s.flags:
            setattr(d.Flags, name, 1)
        out += bytes(d)
    return bytes(out)


def allocation_bytes() -> bytes:
    return b"".join(bytes(allocation_info(i)) for i in range(len(ALLOCATIONS)))


def allocation_info(i: int):
    """ALLOCATIONS[i] as a DXGK_ALLOCATIONINFO of the sample's target."""
    cls = getattr(_target(), ALLOCATION_TYPE)
    for a in ALLOCATIONS[i:i + 1]:
        info = cls()
        info.pPrivateDriverData = 0xFFFFB80C4E3A0000 + i * 0x100
        info.PrivateDriverDataSize = a.PrivateDriverDataSize
        info.Alignment = a.Alignment
        info.Size, info.PitchAlignedSize = a.Size, a.PitchAlignedSize
        for slot, (bank, direction) in enumerate(a.banks):
            setattr(info.HintedBank, f"Bank{slot}", bank)
            setattr(info.HintedBank, f"Direction{slot}", direction)
        for slot, (seg, direction) in enumerate(a.preferred):
            setattr(info.PreferredSegment, f"SegmentId{slot}", seg)
            setattr(info.PreferredSegment, f"Direction{slot}", direction)
        info.PreferredSegment.Reserved = a.PreferredSegmentReserved
        info.SupportedReadSegmentSet = a.write if a.read is None else a.read
        info.SupportedWriteSegmentSet = a.write
        info.EvictionSegmentSet = a.EvictionSegmentSet
        info.MaximumRenamingListLength = 0
        info.hAllocation = 0xFFFFB80C4E3B0000 + i * 0x80
        for name in a.flags:
            setattr(info.FlagsWddm2, name, 1)
        info.FlagsWddm2.Value = info.FlagsWddm2.Value | a.flags_raw
        info.pAllocationUsageHint = 0
        info.AllocationPriority = a.AllocationPriority
        info.Flags2.Value = a.flags2
        for name, value in a.extra.items():
            setattr(info, name, value)
        return info


def windbg_text(data: bytes, address: int, records: int, size: int) -> str:
    """The first ``records`` records as WinDbg ``dq`` prints them, prompt line included."""
    length = records * size
    lines = [f"0: kd> dq {address >> 32:08x}`{address & 0xFFFFFFFF:08x} L{length // 8:x}"]
    for at in range(0, length, 16):
        a = address + at
        words = [int.from_bytes(data[p:p + 8], "little") for p in range(at, min(at + 16, length), 8)]
        shown = " ".join(f"{w >> 32:08x}`{w & 0xFFFFFFFF:08x}" for w in words)
        lines.append(f"{a >> 32:08x}`{a & 0xFFFFFFFF:08x}  {shown}")
    return "\n".join(lines) + "\n"


def dump_lines(unit: str, address: int, data: bytes) -> list:
    """``data`` as WinDbg's ``db``, ``dd`` or ``dq`` prints it at ``address``: 16 bytes a line, after the
    address; db with a hyphen after the eighth byte and the character column, dq with backtick words."""
    def at(a):
        return f"{a >> 32:08x}`{a & 0xFFFFFFFF:08x}"

    lines = []
    for i in range(0, len(data), 16):
        row = data[i:i + 16]
        if unit == "db":
            hexes = " ".join(f"{b:02x}" for b in row[:8]) + ("-" if len(row) > 8 else "") + \
                " ".join(f"{b:02x}" for b in row[8:])
            chars = "".join(chr(b) if 0x20 <= b < 0x7F else "." for b in row)
            lines.append(f"{at(address + i)}  {hexes.ljust(47)}  {chars}")
        elif unit == "dd":
            lines.append(f"{at(address + i)}  " + " ".join(f"{int.from_bytes(row[k:k + 4], 'little'):08x}"
                                                           for k in range(0, len(row), 4)))
        else:
            lines.append(f"{at(address + i)}  " + " ".join(at(int.from_bytes(row[k:k + 8], "little"))
                                                           for k in range(0, len(row), 8)))
    return lines


def session_objects() -> dict:
    """The objects the session log dumps: name -> (address, bytes), each built through the checked classes."""
    t = _target()
    query = t.DXGK_QUERYSEGMENTOUT3()
    query.NbSegment, query.pSegmentDescriptor = len(SEGMENTS), DESCRIPTORS_ADDRESS
    query.PagingBufferSegmentId, query.PagingBufferSize = APERTURE, 256 * KB
    local = SEGMENTS[LOCAL - 1]
    banks = b"".join((local.Size * (k + 1) // local.NbOfBanks).to_bytes(8, "little") for k in range(local.NbOfBanks))
    chosen = [k if isinstance(k, int) else next(i for i, a in enumerate(ALLOCATIONS) if k in a.breaks)
              for k in SESSION_ALLOCATIONS]
    infos, hints = [], []
    for n, k in enumerate(chosen):
        info = allocation_info(k)
        if n != 1:  # the second has no usage hint: a NULL pointer
            hint = t.DXGK_ALLOCATIONUSAGEHINT()
            hint.Version = 1
            hint.v1.Format, hint.v1.Width, hint.v1.Height = 21, 1920 >> len(hints), 1080 >> len(hints)  # D3DFMT_A8R8G8B8
            hint.v1.Pitch = hint.v1.Width * 4
            info.pAllocationUsageHint = HINTS_ADDRESS + len(hints) * len(bytes(hint))
            hints.append(bytes(hint))
        infos.append(bytes(info))
    create_data = b"umd create data!"
    create = t.DXGKARG_CREATEALLOCATION()
    create.pPrivateDriverData, create.PrivateDriverDataSize = CREATE_DATA_ADDRESS, len(create_data)
    create.NumAllocations, create.pAllocationInfo = len(infos), WINDBG_ADDRESS
    create.hResource, create.Flags.Resource = 0xFFFFB80C4E2F3000, 1
    return {
        "query": (QUERY_ADDRESS, bytes(query)),
        "descriptors": (DESCRIPTORS_ADDRESS, segment_bytes(t, "DXGK_SEGMENTDESCRIPTOR3")),
        "banks": (local.pBankRangeTable, banks),
        "create": (CREATE_ADDRESS, bytes(create)),
        "create data": (CREATE_DATA_ADDRESS, create_data),
        "infos": (WINDBG_ADDRESS, b"".join(infos)),
        "hints": (HINTS_ADDRESS, b"".join(hints)),
    }


def session_log() -> str:
    """The session as WinDbg's .logopen writes it: the header, prompts and commands, two breakpoint hits,
    disassembly and dt output between the dumps (db, dd and dq of every object), and .logclose's line."""
    o = session_objects()

    def dump(unit, name, prompt="0: kd>"):
        address, data = o[name]
        size = {"db": 1, "dd": 4, "dq": 8}[unit]
        return [f"{prompt} {unit} {address >> 32:08x}`{address & 0xFFFFFFFF:08x} L{len(data) // size:x}",
                *dump_lines(unit, address, data)]

    log = "C:\\Users\\dev\\Desktop\\createallocation.log"
    query, create = o["query"][0], o["create"][0]
    lines = [
        f"Opened log file '{log}'",
        "0: kd> bp mydriver!DxgkDdiQueryAdapterInfo \".if (dwo(@rdx) != 3) {gc}\"",
        "0: kd> bp mydriver!DxgkDdiCreateAllocation",
        "0: kd> g",
        "Breakpoint 0 hit",
        "mydriver!DxgkDdiQueryAdapterInfo:",
        "fffff806`1a2b1010 48895c2408      mov     qword ptr [rsp+8],rbx",
        "0: kd> dt dxgkrnl!_DXGKARG_QUERYADAPTERINFO @rdx Type pOutputData",
        "   +0x000 Type        : 3 ( DXGKQAITYPE_QUERYSEGMENT3 )",
        f"   +0x018 pOutputData : 0x{query >> 32:08x}`{query & 0xFFFFFFFF:08x} Void",
        "0: kd> gu",
        "dxgkrnl!DXGADAPTER::DdiQueryAdapterInfo+0x8e:",
        "fffff806`1b4c20de 8bd8            mov     ebx,eax",
        *dump("dq", "query"),
        *dump("dq", "descriptors"),
        *dump("dq", "banks"),
        "0: kd> g",
        "Breakpoint 1 hit",
        "mydriver!DxgkDdiCreateAllocation:",
        "fffff806`1a2b2200 4c8bdc          mov     r11,rsp",
        "0: kd> r rdx",
        f"rdx={create:016x}",
        *dump("dq", "create"),
        *dump("db", "create data"),
        *dump("dq", "infos"),
        *dump("dd", "hints"),
        "0: kd> .logclose",
        f"Closing open log file {log}",
    ]
    return "\n".join(lines) + "\n"


def files() -> dict[str, bytes]:
    """File name -> contents, as the package ships them."""
    allocations = allocation_bytes()
    size = len(allocations) // len(ALLOCATIONS)
    return {
        SEGMENTS_FILE: segment_bytes(),
        ALLOCATIONS_FILE: allocations,
        WINDBG_FILE: windbg_text(allocations, WINDBG_ADDRESS, WINDBG_RECORDS, size).encode("ascii"),
        SESSION_FILE: session_log().encode("ascii"),
        DUMP_FILE: session_dump(),
    }


def session_dump() -> bytes:
    """The session's objects at their addresses in a kernel crash dump (``--dump sample``): the memory the session
    log shows, so a record followed in one is the record followed in the other."""
    from .dump_build import Machine, dump_bytes

    return dump_bytes(Machine.holding(dict(session_objects().values())), DUMP_KIND)


def write_files(contents: dict, directory: Path | None = None) -> list[Path]:
    """Write name -> bytes into ``directory`` (default: this package); the paths written."""
    directory = Path(directory or Path(__file__).parent)
    written = []
    for name, content in contents.items():
        path = directory / name
        path.write_bytes(content)
        written.append(path)
    return written


def write(directory: Path | None = None) -> list[Path]:
    return write_files(files(), directory)
