"""Known brackets to parse under (``parse --constraints FILE``): one JSON object per line and sentence.

    {"require": [[0, 3, "NP"], [4, 7]], "forbid": [[2, 5], [1, 3, "VP"]], "complete": false}

Line n holds sentence n's constraints, over its input tokens (0-based, end exclusive, as the JSON output
counts them). ``require``: spans that must be constituents, a label optional; ``forbid``: spans that must
not be (of that label, if one is given); ``complete``: nothing but the required brackets. Every key is
optional; an empty line or ``{}`` leaves the sentence free. A malformed line stops with one error naming
the file and line; whether the brackets fit the sentence is checked when it is parsed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from clparse.read.ptb import split_lone_cr, without_bom
from clparse.search.brackets import Bracket, BracketError, Brackets

KEYS = ("require", "forbid", "complete")


def read_brackets(path: str | Path) -> Iterator[Brackets]:
    """Each line's constraints, in order (stdin is not accepted: the sentences may come from there)."""
    # Decoded line by line: a text-mode file decodes in chunks, so a bad byte was named by its place in
    # some 8 KB chunk ("at byte 831" for a byte 9,023 bytes in), on no line.
    with open(path, "rb") as handle:
        for number, raw in enumerate(split_lone_cr(handle), 1):
            try:
                line = without_bom(raw, number).decode("utf-8")
            except UnicodeDecodeError as exc:
                raise BracketError(f"{path}:{number}: byte {exc.start + 1} is not UTF-8 text (another "
                                   "encoding?)") from None
            yield parse_line(line, f"{path}:{number}")


def parse_line(line: str, where: str) -> Brackets:
    if not line.strip():
        return Brackets()
    try:
        value: Any = json.loads(line)
    except json.JSONDecodeError as exc:
        raise BracketError(f"{where}: not JSON ({exc.msg}, column {exc.colno})") from None
    if not isinstance(value, dict):
        raise BracketError(f"{where}: expected a JSON object with {', '.join(KEYS)}")
    unknown = sorted(set(value) - set(KEYS))
    if unknown:
        raise BracketError(f"{where}: unknown key {unknown[0]!r} (keys: {', '.join(KEYS)})")
    complete = value.get("complete", False)
    if not isinstance(complete, bool):
        raise BracketError(f"{where}: 'complete' must be true or false")
    return Brackets(_spans(value.get("require", []), "require", where),
                    _spans(value.get("forbid", []), "forbid", where), complete)


def _spans(value: Any, key: str, where: str) -> tuple[Bracket, ...]:
    if not isinstance(value, list):
        raise BracketError(f"{where}: {key!r} must be a list of [start, end] or [start, end, label]")
    spans = []
    for entry in value:
        ok = (isinstance(entry, list) and len(entry) in (2, 3)
              and all(isinstance(x, int) and not isinstance(x, bool) for x in entry[:2])
              and (len(entry) == 2 or isinstance(entry[2], str)))
        if not ok:
            raise BracketError(f"{where}: {key!r}: {json.dumps(entry)} is not [start, end] or "
                               f"[start, end, label] (whole-number positions, a label string)")
        spans.append(Bracket(entry[0], entry[1], entry[2] if len(entry) == 3 else None))
    return tuple(spans)
