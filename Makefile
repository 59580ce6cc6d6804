# peggy-jvm: the two set-up commands are `make demo` and `make test`.
# Both create .venv (if missing) and install the project into it in editable mode.

PYTHON ?= python3
JAVA ?= java
VENV := .venv
VPY := $(VENV)/bin/python
PYTEST_ARGS ?=

.PHONY: demo test fixtures clean distclean

# Create the virtualenv and install the project with its test extra.
# Re-runs only when pyproject.toml changes (or the stamp is removed).
$(VENV)/.installed: pyproject.toml
	$(VPY) -m pip --version >/dev/null 2>&1 || $(PYTHON) -m venv --clear $(VENV)
	$(VPY) -m pip install --progress-bar off -e '.[test]'
	touch $@

fixtures: $(VENV)/.installed
	$(VPY) scripts/build_fixtures.py

# Re-encode every method of a bundled example through the class-file layer,
# then run the original and the rewritten class under full verification and
# compare what they print.
demo: fixtures
	mkdir -p out
	$(VENV)/bin/peggy-jvm optimize fixtures/classes/release17/Kernels.class \
		-o out/Kernels.class --json out/report.json
	$(JAVA) -Xverify:all -cp fixtures/classes/release17 Kernels > out/original.txt 2>&1 \
		|| { cat out/original.txt; exit 1; }
	$(JAVA) -Xverify:all -cp out:fixtures/classes/release17 Kernels > out/optimized.txt 2>&1 \
		|| { cat out/optimized.txt; exit 1; }
	diff -u out/original.txt out/optimized.txt
	@echo "demo: identical output"
	$(VENV)/bin/peggy-jvm validate fixtures/classes/release17/Kernels.class out/Kernels.class \
		--json out/validate.json || test $$? -eq 3

# The type check first (mypy, configured in pyproject.toml; a few seconds), then the tests. Test files run in
# parallel, one worker per core (pytest-xdist); a file's tests stay in one worker, so its module fixtures (a jar
# optimized once, a JVM harness) are built once. The slowest tests are listed at the end.
# The fast tier, without the tests marked slow: make test PYTEST_ARGS="-m 'not slow'" (docs/architecture.md).
test: fixtures
	$(VPY) -m mypy
	$(VPY) -m pytest -q -n auto --dist loadfile --durations=15 $(PYTEST_ARGS)

clean:
	rm -rf out fixtures/classes build .pytest_cache .hypothesis .mypy_cache *.egg-info
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV)
