"""Running the real command as a user types it, for the edge tests: ``python -m d3dkmddi_py ...`` in a
subprocess of the source tree under test (PYTHONPATH), bounded by ``timeout=`` and, where memory
or time matters, by ``RLIMIT_AS`` or ``RLIMIT_CPU`` in the child (CPU seconds, unlike the wall clock, do not
grow when other tests load the machine)."""
from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "d3dkmddi_py" / "samples"
ALLOCATIONS = SAMPLES / "allocations.bin"  # 35 DXGK_ALLOCATIONINFO at x64 WDDM3_0, 88 bytes each
SEGMENTS = SAMPLES / "segments.bin"
DQ_DUMP = SAMPLES / "allocations.dq.txt"  # the same 35 records as `dq`, first address ffffb80c`4e2f1000
WDDM3_0 = ["--ddi", "WDDM3_0"]
GB = 1 << 30


def env() -> dict:
    """The environment of a child that imports the source tree under test."""
    return dict(os.environ, PYTHONPATH=str(REPO))


def _limits(address_space: int | None, umask: int | None, cpu_seconds: int | None = None):
    def apply():
        if address_space is not None:
            resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))
        if cpu_seconds is not None:
            resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds))
        if umask is not None:
            os.umask(umask)
    return apply


def cli(*args, stdin=None, cwd=None, timeout: float = 60, address_space: int | None = None,
        umask: int | None = None, cpu_seconds: int | None = None, **kw) -> subprocess.CompletedProcess:
    """One command line as a user types it; stdout and stderr captured as bytes."""
    return _run([sys.executable, "-m", "d3dkmddi_py", *map(str, args)], stdin, cwd, timeout,
                _limits(address_space, umask, cpu_seconds), kw)


def python(code: str, *, timeout: float = 60, cpu_seconds: int | None = None) -> subprocess.CompletedProcess:
    """``python -c code`` in a child that imports the source tree under test."""
    return _run([sys.executable, "-c", code], None, None, timeout, _limits(None, None, cpu_seconds), {})


def _run(argv: list, stdin, cwd, timeout: float, limits, kw: dict) -> subprocess.CompletedProcess:
    if isinstance(stdin, (bytes, type(None))):
        kw.setdefault("input", stdin)
    else:
        kw["stdin"] = stdin
    if "stdout" not in kw and "stderr" not in kw:
        kw["capture_output"] = True
    return subprocess.run(argv, env=env(), cwd=cwd or REPO, timeout=timeout, preexec_fn=limits, **kw)


def shell(command: str, cwd, timeout: float = 60) -> subprocess.CompletedProcess:
    """A bash command line (pipes, closed descriptors); ``D`` is the command."""
    return subprocess.run(["bash", "-c", "set -o pipefail; " + command], capture_output=True,
                          env=dict(env(), D=f"{sys.executable} -m d3dkmddi_py"), cwd=cwd, timeout=timeout)


def one_line(p: subprocess.CompletedProcess, status: int = 2) -> str:
    """The single stderr line of a refused run (status 2 unless told), with no traceback."""
    err = p.stderr.decode(errors="replace")
    assert p.returncode == status, (p.returncode, err[-2000:])
    assert "Traceback" not in err, err[-2000:]
    assert err.endswith("\n") and err.count("\n") == 1, err[-2000:]
    return err


def good(p: subprocess.CompletedProcess, status: int = 0) -> str:
    err = p.stderr.decode(errors="replace")
    assert p.returncode == status, (p.returncode, err[-2000:])
    assert "Traceback" not in err, err[-2000:]
    return p.stdout.decode()
