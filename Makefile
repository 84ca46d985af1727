# nodecm — top-level entry points. The build itself is meson + ninja; this file only chooses
# build directories and the order of steps.
#
#   make          build build/nodecm
#   make run      set up, build, and run the demo
#   make check    set up, build, and pass every test (formatting, normal build, ASan+UBSan build,
#                 fuzz smoke)
#   make bench    release build, run bench/, write bench/RESULTS.md
#   make fuzz     run every fuzz target for FUZZ_SECONDS each

BUILD ?= build
FUZZ_SECONDS ?= 120
FUZZ_SMOKE_SECONDS ?= 5

.PHONY: all setup run check test asan-test fuzz-smoke fuzz-build bench fuzz format format-check clean

# Every source, test, fuzz target and bench program is listed in a meson.build; ninja
# reconfigures by itself when one of those changes.
all: setup $(BUILD)/build.ninja
	@ninja -C $(BUILD) >/dev/null || ninja -C $(BUILD)

setup:
	@./tools/setup.sh

$(BUILD)/build.ninja:
	meson setup $(BUILD) >/dev/null

# The demo: this machine as the kubelet sees it, then a web/db node simulated pod by pod, then
# the same node served by nodecmd (tools/demo-nodecmd.sh), which ends by writing the node's map
# (docs/map.md) to $(BUILD)/demo-map.html and printing its path.
run: all
	./$(BUILD)/nodecm topology
	@echo
	./$(BUILD)/nodecm simulate examples/web-db.yaml
	@echo
	@./tools/demo-nodecmd.sh $(BUILD) $(BUILD)/demo-map.html

test: all
	meson test -C $(BUILD) --print-errorlogs

asan-test: setup
	@[ -f build-asan/build.ninja ] || meson setup build-asan -Dbuildtype=debug \
		-Db_sanitize=address,undefined -Dc_args=-fno-sanitize-recover=all >/dev/null
	@ninja -C build-asan >/dev/null || ninja -C build-asan
	meson test -C build-asan --print-errorlogs

build-fuzz/build.ninja:
	CC=clang meson setup build-fuzz -Dfuzz=true -Dtests=disabled -Dbuildtype=debugoptimized \
		-Db_sanitize=address,undefined -Db_lundef=false >/dev/null

fuzz-build: setup build-fuzz/build.ninja
	@ninja -C build-fuzz >/dev/null || ninja -C build-fuzz

fuzz-smoke: fuzz-build
	./tools/run-fuzz.sh build-fuzz $(FUZZ_SMOKE_SECONDS)

fuzz: fuzz-build
	./tools/run-fuzz.sh build-fuzz $(FUZZ_SECONDS)

check: format-check test asan-test fuzz-smoke

build-bench/build.ninja:
	meson setup build-bench -Dbuildtype=release -Dtests=disabled >/dev/null

bench: setup build-bench/build.ninja
	@ninja -C build-bench >/dev/null || ninja -C build-bench
	./tools/run-bench.sh build-bench bench/RESULTS.md

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

# The tree must be exactly as clang-format (with .clang-format) writes it.
format-check: setup
	@clang-format --dry-run --Werror $$(git ls-files '*.c' '*.h')

clean:
	rm -rf build build-asan build-fuzz build-bench
