# Two commands on a fresh machine: `make lab` and `make test`.
# Each recipe line is its own shell, so every line calls .venv/bin/... directly.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

# A test that hangs (once in many runs a notebook kernel's reply never came, and the run sat
# idle) fails after 20 minutes and runs once more; a test that fails for any other reason is
# not run again.
HANG_GUARD := --timeout=1200 --reruns=1 --only-rerun=Timeout --only-rerun=DeadKernel

.PHONY: lab test test-slow test-browser test-pack classroom-pack lint handouts bench clean

# A .venv of an older Python, or one left without pip (Debian without python3-venv), is made
# anew with $(PYTHON): `make lab PYTHON=python3.12` after a first try with 3.10 must not reuse it.
$(STAMP): pyproject.toml
	@if ! $(BIN)/python -c 'import sys, pip; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then \
	  $(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null || { \
	    echo "speclab needs Python 3.11 or newer; $(PYTHON) is $$($(PYTHON) -V 2>&1 || echo not found):" \
	         "name another, e.g. make lab PYTHON=python3.12" >&2; exit 1; }; \
	  echo "$(PYTHON) -m venv $(VENV)"; rm -rf $(VENV) && $(PYTHON) -m venv $(VENV); \
	fi
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

lab: $(STAMP)
	$(BIN)/jupyter lab --notebook-dir=notebooks

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	TQDM_DISABLE=1 OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 $(BIN)/python -m pytest -n 2 --nbmake-timeout=600 tests notebooks --nbmake -q $(HANG_GUARD)

test-slow: $(STAMP)
	TQDM_DISABLE=1 $(BIN)/python -m pytest -m slow tests -q

test-browser: $(STAMP)
	$(BIN)/python -m pytest -m browser tests -q $(HANG_GUARD)

# build/handouts/: lessons/*.md and lessons/answers/*.md, and their Chinese and Persian
# translations in lessons/zh/ and lessons/fa/, as print-ready HTML, plus A4 and Letter PDFs
# when /usr/bin/chromium exists; open build/handouts/index.html.
handouts: $(STAMP)
	$(BIN)/speclab handouts

# build/classroom-pack/: the lessons with every wheel they need for CPython 3.11-3.13 on
# Linux, macOS and Windows, the handouts and install scripts, for classrooms without internet
# (README, "For teachers: a classroom pack"). Fewer pairs or the test extra, e.g.
# make classroom-pack PACK_ARGS="--platforms windows-x86_64 --pythons 3.12 --with-test-extras"
classroom-pack: $(STAMP)
	$(BIN)/python tools/classroom_pack.py $(PACK_ARGS)

# A pack for this machine from PyPI, installed offline into a fresh venv; runs lesson 02.
test-pack: $(STAMP)
	TQDM_DISABLE=1 $(BIN)/python -m pytest -m pack tests -q -rP

lint: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# Benchmarks unset the OpenBLAS overrides for their own command only (data/bench/README.md);
# the report names the BLAS kernel that actually ran. Tests never touch these variables.
bench: $(STAMP)
	env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $(BIN)/speclab bench forward
	env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $(BIN)/speclab bench decode
	env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $(BIN)/python benchmarks/draft_cost.py

clean:
	rm -rf $(VENV) build .pytest_cache
