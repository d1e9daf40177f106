# Hopwise developer commands. `make install` then `make test` is the whole set-up.
PY ?= python3

.PHONY: install test test-slow lint bench eval browser

install:
	$(PY) -m pip install -q -e '.[dev]'
	@command -v pyenv >/dev/null 2>&1 && pyenv rehash || true

# Debian's chromium for the browser end-to-end test (never a test tool's own download).
browser:
	@command -v chromium >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

test:
	$(PY) -m pytest -q

test-slow: browser
	$(PY) -m pytest -q -m slow

lint:
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m mypy

bench:
	hopwise bench all

eval:
	hopwise eval ../shared/eval/dev/musique_en --mode adaptive
