"""Parsed safely: no DTD, no entity, nothing external is ever expanded or fetched."""
from __future__ import annotations

import pytest

from d3dkmddi_py import etw
from d3dkmddi_py.errors import EtwInputError

from .helpers import alloc_fields, tracerpt_event

LAUGHS = ('<?xml version="1.0"?>\n<!DOCTYPE lolz [\n <!ENTITY lol "lol">\n'
          + "".join(f' <!ENTITY lol{i} "{("&lol%s;" % (i - 1 if i > 1 else "")) * 10}">\n' for i in range(1, 10))
          + ']>\n<Events>&lol9;</Events>\n')


def test_billion_laughs_is_refused_before_any_expansion():
    with pytest.raises(EtwInputError, match="refusing a <!DOCTYPE lolz>"):
        list(etw.read(LAUGHS.encode()))


def test_external_entity_is_refused():
    data = b'<!DOCTYPE Events SYSTEM "file:///etc/passwd"><Events>&x;</Events>'
    with pytest.raises(EtwInputError, match="refusing a <!DOCTYPE"):
        list(etw.read(data))


def test_doctype_in_utf16_is_refused_too():
    data = ('<?xml version="1.0" encoding="UTF-16"?><!DOCTYPE a [<!ENTITY x "y">]><Events>&x;</Events>')
    with pytest.raises(EtwInputError, match="refusing"):
        list(etw.read(data.encode("utf-16")))


def test_doctype_after_the_root_and_undefined_entities_are_errors():
    ev = tracerpt_event(33, alloc_fields())
    with pytest.raises(EtwInputError, match="not well-formed"):
        list(etw.read(("<Events>" + ev + '<!DOCTYPE x [<!ENTITY y "z">]></Events>').encode()))
    with pytest.raises(EtwInputError, match=r"not well-formed XML at line \d+, column \d+ \(in event #1\): "
                                            r"undefined entity"):
        list(etw.read(("<Events>" + ev.replace(">65536<", ">&big;<") + "</Events>").encode()))
