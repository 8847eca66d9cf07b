"""The files of a folder that a recipe reads, checked before any task exists."""
from __future__ import annotations

import os
from glob import glob

from ..outfile import safe_name


def folder_files(folder, pattern: str, what: str, error) -> list:
    """The files of ``folder`` matching ``pattern``, sorted (the table's row order); ``error``
    (an exception class) names what is wrong, ``what`` what the folder should hold."""
    if not isinstance(folder, (str, os.PathLike)) or not isinstance(pattern, str):
        raise error(f"folder must be a path and pattern a str, not {type(folder).__name__} and "
                    f"{type(pattern).__name__}")
    folder = os.fspath(folder)
    if not os.path.isdir(folder):
        raise error(f"{safe_name(folder)} is not a folder of {what}")
    files = sorted(p for p in glob(os.path.join(folder, pattern)) if os.path.isfile(p))
    if not files:
        raise error(f"no file matches {pattern[:60]!r} in {safe_name(folder)}")
    return files
