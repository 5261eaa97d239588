# scheduler-extender: `make run` starts the daemon, `make test` runs the whole suite.
# Both install missing Debian packages first when run as root (scripts/install-deps.sh).

BUILD_DIR ?= build
ASAN_DIR  ?= build-asan
TSAN_DIR  ?= build-tsan
FUZZ_DIR  ?= build-fuzz
FUZZ_SECONDS ?= 60
JOBS      ?= 2
CONFIG    ?= examples/config.yaml
CMAKE_FLAGS ?=
# ccache (installed by scripts/install-deps.sh) keeps rebuilds of unchanged files cheap, across
# build folders and across clones: paths under the checkout are hashed relative to it, and the
# working directory is not hashed, so a second clone of the same commit compiles nothing again.
# It is looked for when a build folder is configured, after deps may have installed it.
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := 1
# The tests' precompiled header is cached too (its timestamps and defines are not part of its text).
export CCACHE_SLOPPINESS := pch_defines,time_macros,include_file_mtime,include_file_ctime
LAUNCHER = $$(command -v ccache >/dev/null 2>&1 && echo -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# The sanitizer builds: -O1 (ASan's and TSan's advice) with line tables only, enough for their
# stack traces; assertions as in Release.
SANITIZER_FLAGS = -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DEXTENDER_BENCH=OFF

.PHONY: all deps configure daemon build run test test-guards test-asan test-tsan fuzz benchmarks bench e2e e2e-v1.20 clean

all: build

deps:
	@scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release $(LAUNCHER) $(CMAKE_FLAGS) >/dev/null

# The daemon alone (what `make run` needs); `build` adds the relay and the tests; `benchmarks` builds
# the programs of bench/.
daemon: configure
	@cmake --build $(BUILD_DIR) -j$(JOBS) --target scheduler-extender

build: configure
	@cmake --build $(BUILD_DIR) -j$(JOBS)

run: daemon
	./$(BUILD_DIR)/scheduler-extender --config $(CONFIG)

test: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j$(JOBS)

# One folder of tests/ (make test-policy, test-engine, ...): builds its executable, which links only
# the modules it tests (tests/CMakeLists.txt), and runs its tests (ctest label = folder). A build
# folder already configured is reused as it is (cmake reconfigures it when a CMakeLists.txt changed).
test-%: | $(BUILD_DIR)/CMakeCache.txt
	@cmake --build $(BUILD_DIR) -j$(JOBS) --target $*_tests
	ctest --test-dir $(BUILD_DIR) -L '^$*$$' --output-on-failure -j$(JOBS)

# The guard scripts (include rules, function length, self-containment) and their self-tests.
test-guards: | $(BUILD_DIR)/CMakeCache.txt
	ctest --test-dir $(BUILD_DIR) -L '^guards$$' --output-on-failure -j$(JOBS)

$(BUILD_DIR)/CMakeCache.txt:
	@$(MAKE) --no-print-directory configure

# The same suite built with AddressSanitizer and UndefinedBehaviorSanitizer.
test-asan: deps
	@cmake -S . -B $(ASAN_DIR) $(SANITIZER_FLAGS) -DEXTENDER_SANITIZE=ON $(LAUNCHER) $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(ASAN_DIR) -j$(JOBS)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --test-dir $(ASAN_DIR) --output-on-failure -j$(JOBS)

# The same suite built with ThreadSanitizer (the event loop, the decide lanes, the election, the
# reflectors and the sweeper share state); tests/tsan.supp names what is deliberately not reported.
test-tsan: deps
	@cmake -S . -B $(TSAN_DIR) $(SANITIZER_FLAGS) -DEXTENDER_TSAN=ON $(LAUNCHER) $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(TSAN_DIR) -j$(JOBS)
	TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$(CURDIR)/tests/tsan.supp" \
	  ctest --test-dir $(TSAN_DIR) --output-on-failure -j$(JOBS)

# libFuzzer on the decoders of untrusted input (the HTTP request parser, request bodies,
# quantities, config and inventory YAML, watch lines), built with clang, ASan and UBSan;
# FUZZ_SECONDS per target.
fuzz:
	@scripts/install-deps.sh --fuzz
	@cmake -S . -B $(FUZZ_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ -DEXTENDER_FUZZ=ON $(LAUNCHER) $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(FUZZ_DIR) -j$(JOBS)
	FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_JOBS=$(JOBS) tests/fuzz/run.sh $(FUZZ_DIR)

# The daemon against a real kube-apiserver and kube-scheduler on loopback: the current Kubernetes
# (tests/e2e/kube-current/go.mod, built once from Go modules and cached under
# ~/.cache/scheduler-extender). e2e-v1.20 runs the same suites against v1.20.2 (built from Debian's
# source); it is not part of .ci/run (tests/e2e/README.md, Time).
e2e: build
	tests/e2e/run.sh

e2e-v1.20: build
	E2E_KUBE=1.20 tests/e2e/run.sh

benchmarks: configure
	@cmake --build $(BUILD_DIR) -j$(JOBS) --target benchmarks

bench: build benchmarks
	bench/run.sh $(BUILD_DIR)

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR) $(TSAN_DIR) $(FUZZ_DIR)
