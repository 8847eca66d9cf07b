"""The prolog guard: an expat parser that sees everything before the root element (the one place
XML allows a DOCTYPE) and refuses any DOCTYPE or entity declaration, so no entity is ever defined,
let alone expanded (billion laughs, external references).  After the root starts, expat rejects a
DOCTYPE, and a reference to an undefined entity is an error.
"""
from __future__ import annotations

import pyexpat

from ...errors import EtwInputError


class _RootSeen(Exception):
    pass


def _guard(reader):
    """An expat parser for the prolog that refuses DOCTYPE and entity declarations."""
    g = pyexpat.ParserCreate()
    g.SetParamEntityParsing(pyexpat.XML_PARAM_ENTITY_PARSING_NEVER)

    def doctype(name, *args):
        raise EtwInputError(f"{reader.name}: refusing a <!DOCTYPE {name}> declaration: a trace has none, and a "
                            f"DTD can define entities (billion laughs, external files); nothing was expanded",
                            field="DOCTYPE")

    def entity(name, *args):
        raise EtwInputError(f"{reader.name}: refusing the entity declaration {name!r}: nothing was expanded",
                            field="ENTITY")

    def root(name, attrs):
        reader._root_at = g.CurrentByteIndex
        raise _RootSeen

    g.StartDoctypeDeclHandler = doctype
    g.EntityDeclHandler = entity
    g.StartElementHandler = root
    return g
