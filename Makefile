# Hopwise developer commands. `make install` then `make test` is the whole set-up.
# Everything runs in the project virtualenv .venv (created by `make install`), so the system
# Python is never modified and a dependency that is only on this machine cannot hide.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: install test test-slow lint bench eval eval-kb browser postgres run real-model

$(PY):
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else "Hopwise needs Python 3.11 (set PYTHON=python3.11)")'
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

install: $(PY)
	$(PY) -m pip install -q -e '.[dev]'

# Debian's chromium and CJK fonts for the browser end-to-end test (never a test tool's own
# browser download).
browser:
	@command -v chromium >/dev/null 2>&1 && [ -d /usr/share/fonts/opentype/noto ] || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-noto-cjk >/dev/null; }

# Debian's PostgreSQL server binaries for the deployment suites (tests/deploy: each test starts
# its own cluster in a temp dir on a loopback port; without them those tests skip and say why).
postgres:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; }

test: $(PY)
	$(PY) -m pytest -q

test-slow: browser $(PY)
	$(PY) -m pytest -q -m slow

lint: $(PY)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m mypy
	$(PY) -m mypy --strict graph ingest  # the libraries: strict (issue 25)

run: $(PY)
	$(VENV)/bin/streamlit run ui/app.py

bench: $(PY)
	$(VENV)/bin/hopwise bench all

eval: $(PY)
	$(VENV)/bin/hopwise eval ../shared/eval/dev/musique_en --mode adaptive

eval-kb: $(PY)
	$(VENV)/bin/hopwise eval-kb ../shared/eval/kb-dev

# The real local model for the slow suite and `hopwise bench llm` (downloads once, outside the
# repo: HOPWISE_REAL_MODEL_DIR, default ~/.cache/hopwise/real-model).
real-model:
	PYTHON=$(PYTHON) tools/real_model/prepare.sh
