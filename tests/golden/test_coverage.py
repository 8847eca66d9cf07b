"""Every typedef of the table has hand-typed golden data, so a struct added to _spec without its
golden rows fails here instead of going unchecked.

tables.py keys golden data by typedef name: a flag word has a FLAG_TYPE_EXISTS row and a BIT_TABLES
table; a struct or union has a STRUCTS entry.  ALL_TYPES drives the size, offset and leaf tests;
a type outside it (LARGE_INTEGER) is checked where another type's rows nest it."""
from __future__ import annotations

from d3dkmddi_py import _spec
from tests.golden import tables


def _nested_types() -> set:
    """Types that the rows of a checked struct expand (its members of a golden type)."""
    out = set()
    for name in tables.ALL_TYPES:
        for row in getattr(tables.STRUCTS.get(name), "rows", ()):
            ctype = tables.ALIASES.get(row[1], row[1])
            if ctype in tables.STRUCTS or ctype in tables.BIT_TABLES:
                out.add(ctype)
    return out


def missing_golden(typedef_names) -> list:
    """The typedefs with no golden data, or with data no golden test reads."""
    checked = set(tables.ALL_TYPES) | _nested_types()
    missing = []
    for name in typedef_names:
        has_data = name in tables.STRUCTS or (name in tables.FLAG_TYPE_EXISTS and name in tables.BIT_TABLES)
        if not has_data or name not in checked:
            missing.append(name)
    return missing


def test_every_typedef_has_golden_data():
    missing = missing_golden(_spec.TYPEDEFS)
    assert not missing, (f"no golden data for {', '.join(missing)}: type its sizes, offsets or bit table from "
                         "the docs into tests/golden/tables.py (STRUCTS, or FLAG_TYPE_EXISTS and BIT_TABLES)")


def test_a_typedef_without_golden_rows_is_reported():
    assert missing_golden([*_spec.TYPEDEFS, "DXGK_NEWSTRUCT"]) == ["DXGK_NEWSTRUCT"]


def test_every_alias_of_the_table_is_golden():
    spec_aliases = {a: td.name for td in _spec.TYPEDEFS.values() for a in td.aliases}
    spec_aliases.update(_spec.ALIASES)
    assert spec_aliases == tables.ALIASES
