# The two commands a learner needs:  make lab   and   make test
# Each one creates .venv (if missing) and installs the project into it first.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-$(shell cksum < pyproject.toml | cut -d' ' -f1)

.PHONY: lab test setup exercises lint format bench grade clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test]"
	@rm -f $(VENV)/.installed-*
	@touch $@

setup: $(STAMP)  ## create .venv and install minitorch with everything the course and tests need

lab: $(STAMP)  ## open the course in JupyterLab
	$(BIN)/jupyter lab --notebook-dir=. chapters/01_tensors.ipynb

test: $(STAMP)  ## lint, format check, and the whole test suite (unit, notebooks, grading)
	$(BIN)/ruff check minitorch tests benchmarks chapters solutions
	$(BIN)/ruff format --check minitorch tests benchmarks chapters solutions
	$(BIN)/python -m pytest

exercises: $(STAMP)  ## regenerate exercises/ from solutions/
	$(BIN)/python -m minitorch.generate

lint: $(STAMP)
	$(BIN)/ruff check minitorch tests benchmarks chapters solutions
	$(BIN)/ruff format --check minitorch tests benchmarks chapters solutions

format: $(STAMP)
	$(BIN)/ruff check --fix minitorch tests benchmarks chapters solutions
	$(BIN)/ruff format minitorch tests benchmarks chapters solutions

bench: $(STAMP)  ## run the benchmarks (ratios against numpy / PyTorch)
	@for f in benchmarks/bench_*.py; do $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
