"""The one path from input to output: source -> chunks of records -> decode and check -> sink.

``decode`` and ``validate``, from Python and from the command line, for one record or millions,
run here.  A chunk is a run of whole records as bytes plus their TypeLayout; it is decoded
into columns (NumPy, when installed) or record by record, checked with the rules of
``semantics.checks`` (column-wise where it can), and handed to a sink that writes as it
goes, so memory stays at one chunk and the first record is printed at once.

The modules follow the flow:

- ``source``: Records (bytes or a file, checked before the first read) and their Chunks;
- ``decode``: a chunk decoded and checked (Decoded);
- ``texts``: what the sinks share: finding texts, titles, tallies, meanings;
- one module per output format, each with its per-record and its per-column form: ``text``
  (``dt -r`` style, and validate's lines), ``jsonl`` (JSON lines), ``rows`` (tables: a row per
  finding, or a row per record with every leaf a column, through ``bulk.table``'s writers);
- ``run``: the loop from source to sink, ``sink_for`` (the one choice of a format's sink) and ``report``
  (the commands' output from Python).
"""
from __future__ import annotations

from ..span import check_range
from .decode import Decoded, decode_chunk, findings_of
from .jsonl import JsonDecode, JsonValidate
from .rows import ColumnRows, FindingRows
from .run import Summary, keep_heap, report, run, sink_for
from .source import (CHUNK_BYTES, MAX_UNSIZED_BYTES, Chunk, Followed, Records, flag_hint, input_kind,
                     looks_like_text_dump, open_input, read_unsized, wanted_bytes)
from .text import TextDecode, TextValidate

__all__ = ["Chunk", "Records", "Decoded", "Summary", "check_range", "decode_chunk", "findings_of", "run",
           "TextDecode", "JsonDecode", "TextValidate", "JsonValidate", "FindingRows", "ColumnRows",
           "CHUNK_BYTES", "MAX_UNSIZED_BYTES", "report", "sink_for",
           "keep_heap", "open_input", "read_unsized", "wanted_bytes",
           "looks_like_text_dump", "Followed", "flag_hint", "input_kind"]
