"""Test-only: where ../shared's copy of the DxgKrnl manifest is, for the tests that read it on their own (never
through the package's generated module)."""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
MANIFEST = SHARED / "etw" / "Microsoft-Windows-DxgKrnl.manifest.xml"
