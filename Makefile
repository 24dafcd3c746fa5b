# `make test`, `make demo` (and `make fuzz`, `make bench`). Each builds .venv with python3 -m venv and pip.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip

.PHONY: test demo bench fuzz clean

$(VENV)/bin/activate:
	$(PYTHON) -m venv $(VENV)

# the tests run the demo too, so they install its extras as well
$(VENV)/.test-installed: pyproject.toml $(VENV)/bin/activate
	$(PIP) install -q -e '.[test,demo]'
	touch $@

$(VENV)/.demo-installed: pyproject.toml $(VENV)/bin/activate
	$(PIP) install -q -e '.[demo]'
	touch $@

test: $(VENV)/.test-installed
	$(PY) -m pytest

# random autograd programs run under hookgrad and torch; shrunk mismatches go to fuzz-failures.py
SEED ?= 0
COUNT ?= 50000
JOBS ?= 1
fuzz: $(VENV)/.test-installed
	$(PY) -m tests.fuzz --seed $(SEED) --count $(COUNT) --jobs $(JOBS) --out fuzz-failures.py

demo: $(VENV)/.demo-installed
	$(VENV)/bin/hookgrad demo

# hookgrad against torch and MyGrad (the bench extra), 1 and 2 threads; a few minutes
$(VENV)/.bench-installed: pyproject.toml $(VENV)/.test-installed
	$(PIP) install -q -e '.[test,demo,bench]'
	touch $@

bench: $(VENV)/.bench-installed
	$(PY) benchmarks/compare.py --threads 1 2 --json bench.json

clean:
	rm -rf $(VENV) demo-output bench.json fuzz-failures.py
