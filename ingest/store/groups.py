"""Access groups: the names a document may be given, and the filter expression that every search
and read carries so a reader only ever sees chunks of the groups they are in.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable

from ingest.lang import CJK
from ingest.models import DEFAULT_GROUP

log = logging.getLogger(__name__)


MAX_GROUPS = 64  # the ARRAY field's capacity


_GROUP_RE = re.compile(f"^[A-Za-z0-9_.@:\\-{CJK}]{{1,64}}$")  # letters, digits, Han


def checked_names(groups: Iterable[str] | str | None) -> list[str]:
    """Group names from a list or a comma-separated string, each checked, duplicates dropped."""
    if groups is None:
        items: list[str] = []
    elif isinstance(groups, str):
        items = [g.strip() for g in groups.split(",") if g.strip()]
    else:
        items = [str(g).strip() for g in groups]
    result: list[str] = []
    for name in items:
        if not _GROUP_RE.match(name):
            raise ValueError(f"invalid group name {name!r}: use letters, digits and _.@:- only")
        if name not in result:
            result.append(name)
    return result


def validate_groups(groups: Iterable[str] | str | None) -> list[str]:
    """A reader's groups, "all" first; a bad name raises ValueError so no filter is widened."""
    names = checked_names(groups)
    return [DEFAULT_GROUP] + [g for g in names if g != DEFAULT_GROUP]


def validate_chunk_groups(groups: Iterable[str] | str | None) -> list[str]:
    """A document's readers as given (checked names); no groups means everyone ("all")."""
    names = checked_names(groups)
    if len(names) > MAX_GROUPS:
        raise ValueError(f"a document can have at most {MAX_GROUPS} groups")
    return names or [DEFAULT_GROUP]


def group_filter(groups: Iterable[str] | str | None) -> str:
    """The ACL expression for a user's groups; every value is JSON-quoted after validation."""
    values = ", ".join(json.dumps(g, ensure_ascii=False) for g in validate_groups(groups))
    return f"array_contains_any(groups, [{values}])"


def clip(value: str, max_bytes: int) -> str:
    """Cut a metadata string to fit a VARCHAR limit (bytes), never mid-character."""
    data = value.encode("utf-8")
    if len(data) <= max_bytes:
        return value
    return data[:max_bytes].decode("utf-8", errors="ignore")


def quote_value(value: str) -> str:
    """A string as a Milvus expression literal (JSON-quoted: no way out of the quotes)."""
    return json.dumps(value, ensure_ascii=False)


def version_expr(doc_id: str, version: int) -> str:
    """The rows of one document version."""
    return f"doc_id == {quote_value(doc_id)} and doc_version == {int(version)}"


def current_expr(doc_id: str, version: int, checksum: str) -> str:
    """The rows of one version made from its current bytes (not a deleted namesake's: chunk
    ids restart at v1 when a deleted document's name comes back)."""
    return f"{version_expr(doc_id, version)} and checksum == {quote_value(checksum)}"
