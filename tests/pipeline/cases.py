"""The sinks and cases both path tests run (record by record against column-wise)."""
from __future__ import annotations

import io

import numpy as np

from d3dkmddi_py import pipeline

SINKS = {
    "text decode": lambda out, adapter: pipeline.TextDecode(out, adapter=adapter),
    "json decode": lambda out, adapter: pipeline.JsonDecode(out, adapter=adapter),
    "text validate": lambda out, adapter: pipeline.TextValidate(out),
    "json validate": lambda out, adapter: pipeline.JsonValidate(out),
    "csv findings": lambda out, adapter: pipeline.FindingRows(out, "csv"),
    "jsonl findings": lambda out, adapter: pipeline.FindingRows(out, "jsonl"),
}
CASES = [("DXGK_SEGMENTFLAGS", ("x64", "WDDM3_2")), ("DXGK_SEGMENTFLAGS", ("x86", "VISTA")),
         ("DXGK_ALLOCATIONINFO", ("x64", "WDDM3_0")), ("DXGK_ALLOCATIONINFO", ("x86", "WDDM2_0")),
         ("DXGK_SEGMENTDESCRIPTOR4", ("arm64", "WDDM2_7")), ("DXGK_QUERYSEGMENTIN", ("x64", "WIN7")),
         ("DXGK_SEGMENTBANKPREFERENCE", ("x64", "WDDM3_2"))]


def blob(size: int, count: int, seed: int) -> bytes:
    """Records where many bytes are 0 and some repeat, so rules both fire and hold and groups form."""
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, 256, size * count, dtype=np.uint8)
    raw[rng.random(raw.size) < 0.6] = 0
    sparse = rng.random(raw.size) < 0.3
    raw[sparse] &= (1 << rng.integers(0, 8, int(sparse.sum()))).astype(np.uint8)
    records = raw.reshape(count, size)
    records[count // 2:] = records[rng.integers(0, count // 2, count - count // 2)]  # repeats
    return records.tobytes()


def printed(layout, data: bytes, sink_name: str, adapter, monkeypatch, column_wise: bool) -> str:
    monkeypatch.setattr(pipeline.decode, "NUMPY_FROM", 1 if column_wise else 1 << 40)
    out = io.StringIO()
    records = pipeline.Records(layout, data=data, count="all")
    summary = pipeline.run(records, SINKS[sink_name](out, adapter), adapter=adapter, values="decode" in sink_name)
    return out.getvalue() + repr((summary.records, summary.errors, summary.warnings))
