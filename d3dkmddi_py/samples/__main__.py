"""``python -m d3dkmddi_py.samples [DIRECTORY]``: write the sample files (default: this package)."""
import sys
from pathlib import Path

from .build import write

for path in write(Path(sys.argv[1]) if len(sys.argv) > 1 else None):
    print(path.name)
