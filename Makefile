# kvfs: a FUSE file system over a Kvrocks-compatible RocksDB.
# Plain GNU Make. Objects go to $(BUILD)/, dependencies via -MMD -MP.
# `make V=1` echoes commands; PREFIX and DESTDIR are honoured by install.

PREFIX  ?= /usr/local
DESTDIR ?=
BUILD   ?= build
CC      ?= cc
V       ?= 0
Q       := $(if $(filter 1,$(V)),,@)

PKGS    := fuse3 rocksdb libxxhash libcjson
WARN    := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 \
           -Wno-format-nonliteral -Werror
OPT     ?= -O2 -g
SAN     ?=
CFLAGS_ALL := -std=gnu11 $(OPT) $(SAN) $(WARN) -D_GNU_SOURCE -DFUSE_USE_VERSION=314 \
           -Iinclude $(shell pkg-config --cflags $(PKGS) 2>/dev/null) $(CFLAGS)
LDLIBS_ALL := $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lpthread -lm $(LDLIBS)

# Debian packages the build, the tests and the demo need.
DEBS := gcc make pkg-config libfuse3-dev fuse3 librocksdb-dev libxxhash-dev libcjson-dev \
        bats rocksdb-tools attr rsync python3 xxd vim-tiny redis-server redis-tools xxhash \
        clang libclang-rt-14-dev clang-format man-db inotify-tools
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# src/LAYER/*.c (engine, keyspace, types, fs; docs/architecture.md) and
# src/main.c on top; headers in include/LAYER/.
SRCS     := $(wildcard src/*.c src/*/*.c)
LIB_SRCS := $(filter-out src/main.c,$(SRCS))
OBJS     := $(SRCS:src/%.c=$(BUILD)/obj/%.o)
LIB_OBJS := $(LIB_SRCS:src/%.c=$(BUILD)/obj/%.o)
# tests/unit/LAYER/test_MODULE.c tests src/LAYER/MODULE.c (t_ dropped).
UNIT_SRCS := $(wildcard tests/unit/*/test_*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
# Fuzz harnesses (tests/fuzz/fuzz_AREA.c): built with replay.c's main() as
# BUILD/tests/test_fuzz_AREA, which the unit runner runs over the corpus.
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_NAMES := $(FUZZ_SRCS:tests/fuzz/%.c=%)
FUZZ_REPLAY_BINS := $(FUZZ_NAMES:%=$(BUILD)/tests/test_%)
UNIT_BINS += $(FUZZ_REPLAY_BINS)

.PHONY: all deps test unit bats check asan bench stress install uninstall clean fmt fmt-check \
        check-layers demo fuzz fuzz-run fuzz-seeds

all: $(BUILD)/kvfs

$(BUILD)/kvfs: $(OBJS)
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS_ALL) -o $@ $^ $(LDLIBS_ALL)

$(BUILD)/obj/%.o: src/%.c
	@mkdir -p $(@D)
	@echo "  CC      $<"
	$(Q)$(CC) $(CFLAGS_ALL) -MMD -MP -c -o $@ $<

$(BUILD)/tests/%: tests/unit/%.c $(LIB_OBJS) tests/unit/check.h tests/unit/fixture.h
	@mkdir -p $(@D)
	@echo "  CC      $<"
	$(Q)$(CC) $(CFLAGS_ALL) -Itests/unit -MMD -MP -o $@ $< $(LIB_OBJS) $(LDLIBS_ALL)

$(BUILD)/tests/test_fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/replay.c tests/fuzz/fuzz.h $(LIB_OBJS)
	@mkdir -p $(@D)
	@echo "  CC      $<"
	$(Q)$(CC) $(CFLAGS_ALL) -Itests/fuzz -DFUZZ_CORPUS='"$(abspath tests/fuzz/corpus/fuzz_$*)"' \
		-MMD -MP -o $@ $< tests/fuzz/replay.c $(LIB_OBJS) $(LDLIBS_ALL)

# The store-backed harnesses' seeds, made with the type verbs (the
# other seeds are written by hand; see docs/testing.md).
$(BUILD)/tests/fuzz-seeds: tests/fuzz/seeds.c tests/fuzz/fuzz.h $(LIB_OBJS)
	@mkdir -p $(@D)
	@echo "  CC      $<"
	$(Q)$(CC) $(CFLAGS_ALL) -Itests/fuzz -MMD -MP -o $@ $< $(LIB_OBJS) $(LDLIBS_ALL)

fuzz-seeds: $(BUILD)/tests/fuzz-seeds
	$(Q)$(BUILD)/tests/fuzz-seeds tests/fuzz/corpus

-include $(OBJS:.o=.d) $(UNIT_BINS:=.d)

# libFuzzer builds of the harnesses (clang), in build-fuzz/: the library
# objects with -fsanitize=fuzzer-no-link, each harness with -fsanitize=fuzzer,
# all under AddressSanitizer and UndefinedBehaviorSanitizer.
FUZZ_BUILD := build-fuzz
FUZZ_CC ?= clang
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS := -std=gnu11 -O1 -g $(FUZZ_SAN) $(WARN) -D_GNU_SOURCE \
	-DFUSE_USE_VERSION=314 -Iinclude $(shell pkg-config --cflags $(PKGS) 2>/dev/null) $(CFLAGS)
FUZZ_LIB_OBJS := $(LIB_SRCS:src/%.c=$(FUZZ_BUILD)/obj/%.o)
FUZZ_BINS := $(FUZZ_NAMES:%=$(FUZZ_BUILD)/%)
FUZZ_SECONDS ?= 600

fuzz: $(FUZZ_BINS)

$(FUZZ_BUILD)/obj/%.o: src/%.c
	@mkdir -p $(@D)
	@echo "  FUZZCC  $<"
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c -o $@ $<

$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(FUZZ_LIB_OBJS)
	@echo "  FUZZLD  $@"
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -Itests/fuzz -MMD -MP -o $@ $< \
		$(FUZZ_LIB_OBJS) $(LDLIBS_ALL)

# Reached only through pattern rules: keep them (make would delete them
# as intermediate files).
.SECONDARY: $(FUZZ_LIB_OBJS)

-include $(FUZZ_LIB_OBJS:.o=.d) $(FUZZ_BINS:=.d)

# Run each harness for FUZZ_SECONDS, one after the other, from its seeds
# (new inputs go to build-fuzz/corpus/, crashes to build-fuzz/crashes/);
# FUZZ_TARGETS picks some (default all); FUZZ_ARGS replaces the libFuzzer
# options (default: fork mode, going on after a crash).
FUZZ_TARGETS ?= $(FUZZ_NAMES)
FUZZ_ARGS ?=
fuzz-run: $(FUZZ_BINS)
	$(Q)FUZZ_ARGS="$(FUZZ_ARGS)" tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# Install whatever Debian packages are missing (needs root or sudo).
deps:
	@missing=$$(for p in $(DEBS); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; \
	done); \
	if [ -n "$$missing" ]; then \
		echo "installing:" $$missing; \
		$(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing >/dev/null; \
	fi

unit: $(UNIT_BINS)
	$(Q)tests/run-unit.sh $(UNIT_BINS)

bats: $(BUILD)/kvfs
	$(Q)KVFS_BIN=$(abspath $(BUILD)/kvfs) tests/run-bats.sh

# Everything, from a fresh Debian 12 machine: packages, build, all tests.
test: deps
	$(Q)$(MAKE) --no-print-directory all $(UNIT_BINS)
	$(Q)$(MAKE) --no-print-directory check-layers
	$(Q)$(MAKE) --no-print-directory fmt-check
	$(Q)tests/run-all.sh $(BUILD) $(UNIT_BINS)

check: all $(UNIT_BINS) check-layers
	$(Q)tests/run-all.sh $(BUILD) $(UNIT_BINS)

# The same tests under AddressSanitizer and UndefinedBehaviorSanitizer.
asan: deps
	$(Q)$(MAKE) --no-print-directory BUILD=build-asan OPT="-O1 -g -fno-omit-frame-pointer" \
		SAN="-fsanitize=address,undefined -fno-sanitize-recover=all" all \
		$(patsubst $(BUILD)/%,build-asan/%,$(UNIT_BINS))
	$(Q)ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
		tests/run-all.sh build-asan $(patsubst $(BUILD)/%,build-asan/%,$(UNIT_BINS))

bench: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tests/bench/run.sh $(BUILD)

# The contention scenarios of tests/bats/97-contention.bats, longer:
# STRESS_SECONDS per scenario (default 30), STRESS_ROUNDS times each,
# STRESS_SCENARIOS to pick some (default all). Prints the driver's counts.
STRESS_SECONDS ?= 30
STRESS_ROUNDS ?= 1
STRESS_SCENARIOS ?=
stress: $(BUILD)/kvfs
	$(Q)KVFS_BIN=$(abspath $(BUILD)/kvfs) STRESS_SECONDS=$(STRESS_SECONDS) \
		STRESS_ROUNDS=$(STRESS_ROUNDS) tests/contention/stress.sh $(STRESS_SCENARIOS)

# The layer rules of DESIGN.md: who may include whom.
check-layers:
	$(Q)tests/check-layers.sh

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/man/man7 $(DESTDIR)/sbin
	install -m 755 $(BUILD)/kvfs $(DESTDIR)$(PREFIX)/bin/kvfs
	install -m 755 mountscripts/kvfs-backup $(DESTDIR)$(PREFIX)/bin/kvfs-backup
	install -m 644 docs/kvfs.1 $(DESTDIR)$(PREFIX)/share/man/man1/kvfs.1
	install -m 644 docs/kvfs-mapping.7 $(DESTDIR)$(PREFIX)/share/man/man7/kvfs-mapping.7
	install -m 755 mountscripts/mount.kvfs $(DESTDIR)/sbin/mount.kvfs
	install -m 755 mountscripts/mount.kvfs $(DESTDIR)/sbin/mount.fuse.kvfs

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/kvfs $(DESTDIR)$(PREFIX)/bin/kvfs-backup \
		$(DESTDIR)$(PREFIX)/share/man/man1/kvfs.1 \
		$(DESTDIR)$(PREFIX)/share/man/man7/kvfs-mapping.7 \
		$(DESTDIR)/sbin/mount.kvfs $(DESTDIR)/sbin/mount.fuse.kvfs

# Mount a demo database (see README.md).
demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)mountscripts/kvfs-demo

FMT_FILES = $(SRCS) $(wildcard include/*/*.h tests/unit/*.h tests/fuzz/*.c tests/fuzz/*.h \
	tests/bench/*.c) $(UNIT_SRCS)

fmt:
	clang-format -i $(FMT_FILES)

fmt-check:
	$(Q)clang-format --dry-run --Werror $(FMT_FILES) && echo "fmt-check: $(words $(FMT_FILES)) files formatted"

clean:
	rm -rf build build-asan build-fuzz
