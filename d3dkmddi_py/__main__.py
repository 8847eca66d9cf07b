"""``python -m d3dkmddi_py``: the same as the ``d3dkmddi`` command."""
import sys

from .cli import main

sys.exit(main())
