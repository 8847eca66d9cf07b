"""``d3dkmddi demo``: decode and validate the bundled sample, so a new user sees the tool work.

The commands it suggests name the bundled files by their real paths (quoted for the shell), so each
can be pasted as it is.
"""
from __future__ import annotations

import ctypes
import json
import shlex

from .. import dttext, jsonformat, render
from ..semantics import check, field_meanings
from ..wording import noun
from . import ALLOCATIONS_PATH, SEGMENTS_PATH, WINDBG_PATH, allocations, build, sample_adapter, \
    sample_target, segments



def _shown(path) -> str:
    """A bundled file's path as a shell takes it: the suggested commands paste as they are."""
    return shlex.quote(str(path))

def _semantic_view(records, cls_name, tgt, adapter):
    return [(r, check(r.value, adapter=adapter), field_meanings(r.value, adapter=adapter)) for r in records]


def _report(tgt):
    adapter = sample_adapter()
    segs = _semantic_view(segments(), build.SEGMENT_TYPE, tgt, adapter)
    allocs = _semantic_view(allocations(), build.ALLOCATION_TYPE, tgt, adapter)
    return list(check(adapter)), segs, allocs


def _mismatch(spec, findings) -> tuple[list, list]:
    """(rules the record was written to break but did not, error rules found on a record meant to be clean)."""
    found = {render.finding_json(f)["rule_id"] for f in findings}
    missing = [r for r in spec.breaks if r not in found]
    unexpected = sorted(found - set(spec.breaks))
    return missing, unexpected


def run(json_output: bool = False) -> str:
    tgt = sample_target()
    adapter_findings, segs, allocs = _report(tgt)
    seg_size = ctypes.sizeof(type(segs[0][0].value))
    alloc_size = ctypes.sizeof(type(allocs[0][0].value))
    if json_output:
        return _json(tgt, adapter_findings, segs, allocs)
    out = [
        f"d3dkmddi demo: the bundled sample adapter, {tgt.label}",
        "",
        f"== The adapter: {len(segs)} {build.SEGMENT_TYPE} records ({seg_size} bytes each) "
        f"from {_shown(SEGMENTS_PATH)}",
    ]
    for (r, fs, ms), spec in zip(segs, build.SEGMENTS):
        title = dttext.record_title(build.SEGMENT_TYPE, tgt.label, r.index, r.offset, r.address, seg_size)
        out.append("")
        out.append(f"segment {r.index + 1}: {spec.note}")
        out.append(dttext.render_text(r.value, findings=fs, meanings=ms, title=title, nonzero=True))
    out.append("")
    out.append(f"adapter-wide rules (such as one AGP segment per adapter): {render.tally(adapter_findings, none='ok')}")
    for f in adapter_findings:
        j = render.finding_json(f)
        out.append(f"   {j['severity']} {j['rule_id']}: {j['message']}")
    out += ["", f"== {len(allocs)} {build.ALLOCATION_TYPE} records ({alloc_size} bytes each) from "
                f"{_shown(ALLOCATIONS_PATH)}, checked against the adapter"]
    width = len(str(len(allocs) - 1))
    clean = 0
    for (r, fs, _ms), spec in zip(allocs, build.ALLOCATIONS):
        tally = render.tally(fs, none="ok")
        clean += not fs
        out.append(f"[{r.index:>{width}}] +0x{r.offset:04x}  {tally:<22} {spec.note}")
        for f in fs:
            j = render.finding_json(f)
            out.append(f"{' ' * (width + 11)}{j['severity']} {j['rule_id']}: {j['message']}")
        missing, unexpected = _mismatch(spec, fs)
        if missing:
            out.append(f"{' ' * (width + 11)}(written to break {', '.join(missing)}, which was not reported)")
    first_bad = next(i for i, (_, fs, _) in enumerate(allocs) if any(render.severity_text(f) == "error" for f in fs))
    r, fs, ms = allocs[first_bad]
    out += ["", f"== Record {first_bad} in full, as `d3dkmddi decode` prints it (dt -r layout, meanings after //, "
                f"findings under their field)"]
    out.append(dttext.render_text(r.value, findings=fs, meanings=ms, nonzero=True,
                                  title=dttext.record_title(build.ALLOCATION_TYPE, tgt.label, r.index, r.offset,
                                                            r.address, alloc_size)))
    errors = sum(render.count_severity(fs, "error") for _, fs, _ in allocs)
    warnings = sum(render.count_severity(fs, "warning") for _, fs, _ in allocs)
    rules = sorted({render.finding_json(f)["rule_id"] for _, fs, _ in allocs + segs for f in fs})
    seg_findings = sum(len(fs) for _, fs, _ in segs) + len(adapter_findings)
    out += [
        "",
        "== Summary",
        f"segments: {len(segs)}, {seg_findings} {noun(seg_findings, 'finding')}",
        f"allocations: {len(allocs)}, {clean} without findings, {len(allocs) - clean} with "
        f"{errors} {noun(errors, 'error')} and {warnings} {noun(warnings, 'warning')} "
        f"from {len(rules)} distinct rules",
        "",
        "Next, on the same files:",
        f"   d3dkmddi decode {build.ALLOCATION_TYPE} --file {_shown(ALLOCATIONS_PATH)} "
        f"--ddi {build.INTERFACE_VERSION} --offset 0x{allocs[first_bad][0].offset:x} --adapter sample",
        f"   d3dkmddi validate {build.ALLOCATION_TYPE} --file {_shown(ALLOCATIONS_PATH)} "
        f"--ddi {build.INTERFACE_VERSION} --count all --adapter sample",
        f"   d3dkmddi decode {build.ALLOCATION_TYPE} --windbg {_shown(WINDBG_PATH)} "
        f"--ddi {build.INTERFACE_VERSION} --count {build.WINDBG_RECORDS} --nonzero",
        f"   d3dkmddi decode DXGK_SEGMENTFLAGS 0x{segs[0][0].value.Flags.Value:x} --ddi {build.INTERFACE_VERSION}",
        f"   d3dkmddi layout {build.ALLOCATION_TYPE} --abi x86 --ddi WDDM2_0",
    ]
    return "\n".join(out) + "\n"


def _json(tgt, adapter_findings, segs, allocs) -> str:
    def obj(r, fs, ms, type_name, extra):
        o = jsonformat.record_json(r.value, c_name=type_name, tgt=tgt, index=r.index, offset=r.offset,
                               address=r.address, findings=fs, meanings=ms)
        o.update(extra)
        return o

    doc = {
        "target": jsonformat.target_json(tgt),
        "files": {"segments": SEGMENTS_PATH.name, "allocations": ALLOCATIONS_PATH.name,
                  "windbg": WINDBG_PATH.name},
        "adapter_findings": [render.finding_json(f) for f in adapter_findings],
        "segments": [obj(r, fs, ms, build.SEGMENT_TYPE, {"segment_id": r.index + 1, "note": spec.note})
                     for (r, fs, ms), spec in zip(segs, build.SEGMENTS)],
        "allocations": [obj(r, fs, ms, build.ALLOCATION_TYPE, {"note": spec.note, "written_to_break": list(spec.breaks)})
                        for (r, fs, ms), spec in zip(allocs, build.ALLOCATIONS)],
        "summary": {
            "segments": len(segs),
            "allocations": len(allocs),
            "allocations_without_findings": sum(not fs for _, fs, _ in allocs),
            "errors": sum(render.count_severity(fs, "error") for _, fs, _ in allocs + segs)
            + render.count_severity(adapter_findings, "error"),
            "warnings": sum(render.count_severity(fs, "warning") for _, fs, _ in allocs + segs)
            + render.count_severity(adapter_findings, "warning"),
        },
    }
    return json.dumps(doc, indent=2) + "\n"
