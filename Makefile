# The two commands: `make demo` and `make test`. Everything configures and
# builds as needed; nothing is installed outside this tree.

BUILD      ?= build
CC         ?= cc
# The C++ compiler follows CC (clang gives clang++) unless CXX is given.
ifeq ($(origin CXX),default)
CXX        := $(if $(findstring clang,$(CC)),$(subst clang,clang++,$(CC)),c++)
endif
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
PREFIX     ?= /usr/local
CMAKE_ARGS ?=

KCALL      := $(BUILD)/tools/kcall/kcall
HELLO      := $(BUILD)/examples/hello/libhello_plugin.so

.PHONY: all build demo test bench asan tsan install clean

all: build

# Configure once per build directory; cmake re-runs itself when lists change.
$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_C_COMPILER=$(CC) -DCMAKE_CXX_COMPILER=$(CXX) $(CMAKE_ARGS)

build: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

# The main job first (a program calling custom calls, through `kcall run`),
# then packed functions called by name.
demo: build
	@sh examples/xla/demo.sh $(BUILD)
	@sh examples/hello/demo.sh $(BUILD)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

bench:
	$(MAKE) build BUILD=build/bench-build CMAKE_ARGS="-DCMAKE_BUILD_TYPE=Release -DKCALL_BUILD_TESTS=OFF"
	@sh bench/run.sh build/bench-build build/bench

asan:
	$(MAKE) test BUILD=build-asan CMAKE_ARGS="-DCMAKE_BUILD_TYPE=Debug -DKCALL_SANITIZE=address"

tsan:
	$(MAKE) test BUILD=build-tsan CMAKE_ARGS="-DCMAKE_BUILD_TYPE=Debug -DKCALL_SANITIZE=thread"

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf build build-asan build-tsan build-clang
