"""Packages are found, not listed: every folder of d3dkmddi_py with an __init__.py. The one package
named here is the C mirror, kept once at the top of the repository as headers/ and installed as
d3dkmddi_py/include (package-dir in pyproject.toml). Everything else is in pyproject.toml."""
from setuptools import find_packages, setup

setup(packages=find_packages(include=["d3dkmddi_py", "d3dkmddi_py.*"]) + ["d3dkmddi_py.include"])
