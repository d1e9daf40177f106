"""Files a reader takes away (an original, a chat export, a trace JSON, the feedback CSV) and
pictures of restricted pages, kept off Streamlit's `/media/` store.

Streamlit serves `st.download_button` data and `st.image` bytes at `/media/<id>` to anyone who
has the URL, with no session and under an id that is a hash of the content (so it reappears in
every session that shows the same bytes). Hopwise never puts a restricted byte there:

- A download is a link to `/hopwise/file/<ticket>` (served by `ui.routes`). The ticket is a
  random id held in this process, naming who it was drawn for and a function that builds the
  file. Nothing is built until the link is fetched; then the route signs the request in again
  from its HttpOnly session cookie, refuses anyone but the ticket's user, and hands the builder
  the user as the configuration knows them *now* (a sign-out or a removed group applies at once).
  The bytes are streamed and dropped.
- A page image is written into the page itself (`data:` URI), so it has no URL at all.

Tickets live in memory: a restart or another replica does not know them (the link then says
"expired"; reopening the page draws a new one).
"""

from __future__ import annotations

import base64
import html
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from secrets import token_urlsafe

import streamlit as st

from ui.auth import User

TICKET_TTL_S = 15 * 60.0  # a link drawn on a page works this long (reopening draws a new one)
REUSE_MARGIN_S = 5 * 60.0  # a link is redrawn with a new ticket when less is left
MAX_TICKETS = 20_000  # the oldest go first beyond this (each is a few hundred bytes)
FILE_ROUTE = "hopwise/file"


@dataclass(frozen=True)
class Download:
    """A file as it leaves the server."""

    data: bytes
    file_name: str
    mime: str


@dataclass(frozen=True)
class Reader:
    """Who fetches a ticket, as the configuration and the session store know them at the fetch."""

    user: User
    admin: bool
    configured: bool = True  # users are configured (False: the implicit local user)

    @property
    def sees_scores(self) -> bool:
        """Raw retrieval scores go to the local single user and to admins (ui.services)."""
        return self.admin or not self.configured


Builder = Callable[[Reader], Download | None]  # None: this reader may not have it (refused)


@dataclass(frozen=True)
class Ticket:
    owner: str  # the user name the link was drawn for; only they may fetch it
    admin_unlocked: bool  # drawn in a tab unlocked with the admin password (password mode)
    build: Builder
    expires: float


class Tickets:
    """Random ids → tickets, in this process; expired ones are dropped as new ones come."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._tickets: dict[str, Ticket] = {}
        self._lock = threading.Lock()

    def issue(self, owner: str, build: Builder, *, admin_unlocked: bool = False) -> str:
        now = self._clock()
        ticket_id = token_urlsafe(24)
        with self._lock:
            for key in [k for k, t in self._tickets.items() if t.expires <= now]:
                del self._tickets[key]
            while len(self._tickets) >= MAX_TICKETS:
                del self._tickets[next(iter(self._tickets))]
            self._tickets[ticket_id] = Ticket(owner, admin_unlocked, build, now + TICKET_TTL_S)
        return ticket_id

    def reusable(self, ticket_id: str, owner: str, admin_unlocked: bool) -> bool:
        """Whether a ticket drawn before may be drawn again: the same user and unlock, and a
        few minutes left (an unchanged link is not redrawn, so a click never races a rerun)."""
        ticket = self.get(ticket_id)
        return (
            ticket is not None
            and ticket.owner == owner
            and ticket.admin_unlocked == admin_unlocked
            and ticket.expires - self._clock() > REUSE_MARGIN_S
        )

    def get(self, ticket_id: str) -> Ticket | None:
        with self._lock:
            ticket = self._tickets.get(ticket_id)
        if ticket is None or ticket.expires <= self._clock():
            return None
        return ticket


TICKETS = Tickets()


class Refused(Exception):
    """The ticket is unknown or expired (404), or not this reader's (403)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def fetch(ticket_id: str, reader: Reader | None, *, tickets: Tickets = TICKETS) -> Download:
    """The file behind a ticket for this reader (None: not signed in), or Refused."""
    ticket = tickets.get(ticket_id)
    if ticket is None:
        raise Refused(404, "This download link has expired. Open the page again for a new one.")
    if reader is None or reader.user.name != ticket.owner:
        raise Refused(403, "Sign in as the user who opened this page to download the file.")
    admin = reader.user.admin or (reader.admin and ticket.admin_unlocked)
    download = ticket.build(Reader(reader.user, admin, reader.configured))
    if download is None:
        raise Refused(403, "You may not download this file.")
    return download


def base_path() -> str:
    """The server's URL prefix ('' or '/prefix'), from `server.baseUrlPath`."""
    prefix = str(st.get_option("server.baseUrlPath") or "").strip("/")
    return f"/{prefix}" if prefix else ""


LINK_STYLE = (
    "<style>.hw-file{display:inline-flex;align-items:center;gap:.4rem;padding:.25rem .75rem;"
    "min-height:2.5rem;border:1px solid rgba(49,51,63,.2);border-radius:.5rem;"
    "text-decoration:none!important;color:inherit!important;font-size:.875rem;line-height:1.6;"
    "box-sizing:border-box}.hw-file:hover{border-color:#2b6cb0;color:#2b6cb0!important}"
    ".hw-file.hw-wide{width:100%;justify-content:center}</style>"
)


def download_link(
    label: str,
    build: Builder,
    *,
    user: User,
    file_name: str,
    key: str,
    admin_unlocked: bool = False,
    wide: bool = False,
) -> str:
    """Draw a download link for `user` (a ticket; nothing is built yet); returns the ticket id.
    `key` names what the builder builds (e.g. the document and version): the same key keeps
    its ticket across reruns of this tab while it is fresh, so the link is not redrawn."""
    slot = f"hopwise_ticket:{label}|{file_name}|{key}"
    held = st.session_state.get(slot)
    if isinstance(held, str) and TICKETS.reusable(held, user.name, admin_unlocked):
        ticket_id = held
    else:
        ticket_id = TICKETS.issue(user.name, build, admin_unlocked=admin_unlocked)
        st.session_state[slot] = ticket_id
    url = f"{base_path()}/{FILE_ROUTE}/{ticket_id}"
    css = "hw-file hw-wide" if wide else "hw-file"
    st.html(
        f'{LINK_STYLE}<a class="{css}" href="{html.escape(url)}" '
        f'download="{html.escape(file_name)}" data-testid="hw-download">'
        f'<span aria-hidden="true">↓</span>{html.escape(label)}</a>'
    )
    return ticket_id


def inline_png(png: bytes, *, alt: str) -> None:
    """A PNG drawn into the page (a `data:` URI): it has no URL another session could fetch."""
    data = base64.b64encode(png).decode("ascii")
    st.html(
        f'<img src="data:image/png;base64,{data}" alt="{html.escape(alt)}" '
        'style="width:100%;height:auto;display:block" data-testid="hw-page-image">'
    )
