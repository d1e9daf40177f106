"""Hopwise entry point: `streamlit run ui/app.py`.

An st.App (Streamlit's ASGI app) that runs the pages of `ui/main.py` with Hopwise's own HTTP
routes beside them (`ui.routes`: the HttpOnly session cookie, downloads checked at the fetch, a
closed metrics endpoint) and a page-error handler that shows a reference, never a traceback.
When the server starts, the knowledge base opens in the background (`warm_up`), so the first
reader does not wait for it.
`uvicorn ui.app:app` serves the same app.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from ui.routes import middleware, routes, script_error, warm_up

app = st.App(
    Path(__file__).with_name("main.py"),
    routes=routes(),
    middleware=middleware(),
    on_script_error=script_error,
    lifespan=warm_up,
)
