"""Constant memory: reading 200k events (~200 MB of XML) peaks no higher than reading 20k."""
from __future__ import annotations

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent('''
    import resource, sys
    sys.path.insert(0, {root!r})
    from d3dkmddi_py import etw
    from tests.etw.helpers import alloc_fields, viewer_event

    OTHER = ("Microsoft-Windows-Kernel-Process", "{{22fb2cd6-0e7b-422b-a0c7-2fad1fd0e716}}")
    PAD = "<Data Name='CommandLine'>" + "x" * 900 + "</Data>"
    DXG = viewer_event(33, alloc_fields()).encode()
    NOISE = viewer_event(1, {{"ProcessID": 4}}, provider=OTHER).replace("</EventData>", PAD + "</EventData>").encode()

    class Stream:
        """An XML trace of n events, made as it is read (never whole in memory)."""
        def __init__(self, n):
            self.left, self.buf, self.n, self.closed = n, b"<Events>", 0, False
        def read(self, size):
            while len(self.buf) < size and self.left:
                piece = DXG if self.left % 4 == 0 else NOISE
                self.buf += piece
                self.n += len(piece)
                self.left -= 1
            if not self.left and not self.closed:
                self.buf += b"</Events>"
                self.closed = True
            out, self.buf = self.buf[:size], self.buf[size:]
            return out

    def peak_kb():
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    for n in (20000, 200000):
        s = Stream(n)
        r = etw.read(s)
        decoded = sum(1 for _ in r)
        assert r.total == n and decoded == n // 4, (r.total, decoded)
        print(n, peak_kb(), s.n, flush=True)
''')


def test_memory_does_not_grow_with_the_trace():
    import pathlib

    root = str(pathlib.Path(__file__).resolve().parents[2])
    out = subprocess.run([sys.executable, "-c", SCRIPT.format(root=root)], capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr
    (small, small_kb, _), (big, big_kb, streamed) = [tuple(map(int, line.split())) for line in out.stdout.split("\n")
                                                     if line.strip()]
    assert streamed > 180_000_000  # the 200k-event trace is ~200 MB of XML
    assert big_kb - small_kb < 20_000, f"peak grew {big_kb - small_kb} kB from {small} to {big} events"


STATE = textwrap.dedent('''
    import resource, sys
    sys.path.insert(0, {root!r})
    from d3dkmddi_py import etw
    from tests.etw.helpers import ADAPTER, viewer_event

    def event(i):
        if i % 2:
            return viewer_event(274, {{"DxgAdapter": hex(ADAPTER), "SegmentId": i % 4 + 1,
                                       "TotalBytesResident": i * 4096}}, version=0).encode()
        return viewer_event(367, {{"NewUsage": i * 4096, "OldUsage": 0, "pDxgAdapter": hex(ADAPTER), "ProcessId": i % 8,
                                   "PhysicalAdapterIndex": 0, "MemorySegmentGroup": i % 2}}, version=0).encode()

    class Stream:
        def __init__(self, n):
            self.i, self.n, self.buf, self.closed = 0, n, b"<Events>", False
        def read(self, size):
            while len(self.buf) < size and self.i < self.n:
                self.buf += event(self.i)
                self.i += 1
            if self.i == self.n and not self.closed:
                self.buf += b"</Events>"
                self.closed = True
            out, self.buf = self.buf[:size], self.buf[size:]
            return out

    for n in (20000, 200000):
        tracker = etw.Tracker()  # the text's: every summary, no samples kept
        for e in etw.read(Stream(n)):
            tracker.apply(e)
        (a,) = tracker.adapters.values()
        assert sum(s.count for s in a.resident.values()) == n // 2 and len(a.usage) == 4
        print(n, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, flush=True)
''')


def test_the_state_of_the_memory_events_does_not_grow_with_the_trace():
    """Resident bytes and usage per key are summaries unless series are asked for: 200k events cost what 20k do."""
    import pathlib

    root = str(pathlib.Path(__file__).resolve().parents[2])
    out = subprocess.run([sys.executable, "-c", STATE.format(root=root)], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    (_small, small_kb), (_big, big_kb) = [tuple(map(int, line.split())) for line in out.stdout.split("\n") if line]
    assert big_kb - small_kb < 20_000, f"peak grew {big_kb - small_kb} kB from 20,000 to 200,000 events"
