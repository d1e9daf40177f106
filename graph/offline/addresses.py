"""An address written small to large ('Royston, Hertfordshire, England'; 'Dunmore, Lackawanna
County, Pennsylvania'): 'what county' or 'which state' asks for one of its levels, not the
town that stands first next to 'located in'.

The level named in the address wins ('Lackawanna County' for 'what county'); otherwise the
level after the town (an address's second place is its first division). English only: a
Chinese address is written large to small and names its levels (省, 市, 县) itself.
"""

from __future__ import annotations

import re

from ingest import lexicon

LEVELS = lexicon.words("region_levels")
_ASKED_RE = re.compile(
    rf"\b(?:what|which)\s+({'|'.join(sorted(LEVELS, key=len, reverse=True))})\b", re.IGNORECASE
)
_NEXT_RE = re.compile(r"\s*,\s*((?:the\s+)?[A-Z][\w'’.-]*(?:\s+(?:of\s+)?[A-Z][\w'’.-]*)*)")


def asked_level(part: str) -> str:
    """The division a part asks for ('county' of 'What county is … in?'), or ''."""
    found = _ASKED_RE.search(part)
    return found.group(1).lower() if found else ""


def address_level(sentence: str, span: str, level: str) -> str:
    """The place of the address that starts at `span` which is of the asked level: the one
    that names the level, else the one after the first; '' when `span` starts no address."""
    at = sentence.find(span)
    if at < 0 or not level:
        return ""
    chain, pos = [span], at + len(span)
    while (step := _NEXT_RE.match(sentence, pos)) is not None:
        place = step.group(1)
        chain.append(place[:-1] if place.endswith(".") and place.count(".") == 1 else place)
        pos = step.end()
    named = [p for p in chain if p.split()[-1].lower().rstrip(".") == level]
    if named:
        return named[0]
    return chain[1] if len(chain) > 1 else ""
