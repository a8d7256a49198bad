# The two commands a learner needs:  make lab   and   make test
# Each creates .venv if it is missing and installs what it needs into it first;
# a later run reinstalls only when pyproject.toml has changed.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
HASH   := $(shell cksum < pyproject.toml | cut -d' ' -f1)
COURSE := $(VENV)/.course-$(HASH)
# The reference PyTorch for the differential tests: cpu (a CPU build), pypi or none
# (tests/install_reference.py says what each does).
REFERENCE ?= cpu
TESTS  := $(VENV)/.tests-$(HASH)-$(REFERENCE)
PATHS  := minitorch tests benchmarks chapters solutions conftest.py
ROOTARG := $(if $(filter 0,$(shell id -u)),--allow-root)

.PHONY: lab test setup setup-tests test-install exercises notebooks lint format bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# The course: minitorch with its course extra (JupyterLab, pictures, the simulator, data),
# and the test tools the notebooks' check() cells use.
$(COURSE): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[course,test]"
	@rm -f $(VENV)/.course-*
	@touch $@

# The suite also installs mpi4py + MPICH for chapter 06's MPI backend, onnx + onnxruntime
# for chapter 05's ONNX export, cupy + NVRTC + ptxas (CUDA 12's), which compile chapter 07's
# kernels for sm_90 with or without a GPU, and then a CPU build of PyTorch, the reference
# for the differential tests (their tests skip, saying why, where one is missing).
$(TESTS): $(COURSE)
	$(BIN)/python -m pip install --quiet -e ".[course,test,mpi,onnx,cuda]"
	$(BIN)/python tests/install_reference.py --source $(REFERENCE)
	@rm -f $(VENV)/.tests-*
	@touch $@

setup: $(COURSE)  ## create .venv with everything the course needs

setup-tests: $(TESTS)  ## create .venv with everything the test suite needs

# The suite's install as a new user's machine runs it (a copy of the checkout, a fresh HOME,
# PyPI alone), with CUDA 13's NVRTC beside CUDA 12's toolchain. Downloads the course: minutes.
test-install: $(COURSE)  ## check make lab's and make test's install on a fresh machine
	$(BIN)/python -m pytest -p no:cacheprovider -s tests/install/check_fresh_install.py

# JupyterLab opens, and prints the URL of, the first lesson (the lab's default URL).
# LAB_ARGS passes more options, e.g.  make lab LAB_ARGS="--no-browser --port=8890"
FIRST_LESSON := chapters/01_tensors.ipynb
lab: $(COURSE)  ## open the course in JupyterLab, at chapter 01
	$(BIN)/jupyter lab $(ROOTARG) --ServerApp.root_dir=. \
		--LabApp.default_url=/lab/tree/$(FIRST_LESSON) $(LAB_ARGS)

# The suite runs on every core, up to 4 (pytest-xdist; JOBS=1 runs it in one process): each
# notebook's cells stay together on one worker, and each worker's numpy uses one thread, so
# that the workers' BLAS threads do not fight over the cores.
JOBS ?= auto
test: $(TESTS)  ## lint + format check, then the whole suite: unit, notebooks, grading
	$(BIN)/ruff check $(PATHS)
	$(BIN)/ruff format --check $(PATHS)
	OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 \
		$(BIN)/python -m pytest -n $(JOBS) --maxprocesses 4 --dist loadfile

exercises: $(COURSE)  ## regenerate exercises/ from solutions/
	$(BIN)/python -m minitorch.course.generate

# Executed notebooks get the metadata JupyterLab writes (minitorch.course.notebook), so that
# opening a committed notebook in the lab changes nothing.
notebooks: $(COURSE)  ## re-execute lessons and solutions in place, then regenerate exercises/
	@for nb in chapters/*.ipynb solutions/*.ipynb; do \
		echo "executing $$nb"; \
		$(BIN)/jupyter nbconvert --to notebook --execute --inplace --log-level=WARN "$$nb" || exit 1; \
	done
	$(BIN)/python -m minitorch.course.notebook chapters/*.ipynb solutions/*.ipynb
	$(BIN)/python -m minitorch.course.generate

lint: $(COURSE)
	$(BIN)/ruff check $(PATHS)
	$(BIN)/ruff format --check $(PATHS)

format: $(COURSE)
	$(BIN)/ruff check --fix $(PATHS)
	$(BIN)/ruff format $(PATHS)

bench: $(TESTS)  ## benchmarks: ratios against numpy and PyTorch, side by side
	@for f in benchmarks/bench_*.py; do $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
