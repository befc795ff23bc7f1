# kasgen — build, test, install.
#
#   make deps          install what is missing: Debian packages (as root, apt-get), the Python
#                      environment .venv, and a CUDA compiler when the machine has none
#   make               build ./kasgen
#   make test          unit, golden and integration tests (SAN=1: under ASan + UBSan)
#   make install PREFIX=/usr/local [DESTDIR=...]    make uninstall (same PREFIX and DESTDIR)
#   make benchdb       on a GPU machine: refresh this GPU's timing database
#   make fuzz          build the fuzz targets (clang, libFuzzer)
#
# BUILD=dir keeps objects apart (several builds in one tree, or a sanitizer build).

PREFIX ?= /usr/local
SAN ?= 0
BUILD ?= $(if $(filter 1,$(SAN)),build-san,build)

CC ?= cc
# The interpreter of the tests' Python environment (tools/requirements.txt), made by make deps.
PYTHON ?= $(CURDIR)/.venv/bin/python

# pkg-config is asked when the flags are first used, not when this file is read: in
# `make deps all` it must run after deps has installed it and the headers.  The $(eval) keeps
# the first answer for the rest of the run.
pkg_config = $(or $(shell pkg-config $(1) libxml-2.0 inih 2>/dev/null),$(error \
  pkg-config finds no libxml-2.0 or inih: run 'make deps' (as root) first))
PKG_CFLAGS = $(eval PKG_CFLAGS := $(call pkg_config,--cflags))$(PKG_CFLAGS)
PKG_LIBS = $(eval PKG_LIBS := $(call pkg_config,--libs))$(PKG_LIBS)
CFLAGS ?= -O2 -g
CFLAGS += -std=c11 -D_GNU_SOURCE -Wall -Wextra -Isrc -I/usr/include/lpsolve $(PKG_CFLAGS)
LDLIBS = $(PKG_LIBS) -llpsolve55 -lcolamd -ldl -lm
ifeq ($(SAN),1)
CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS += -fsanitize=address,undefined
endif

LIB_SRC := $(filter-out src/main.c,$(wildcard src/*.c))
LIB_OBJ := $(patsubst src/%.c,$(BUILD)/obj/%.o,$(LIB_SRC)) $(BUILD)/obj/runtime_files.o
# The programs kasgen writes into generated folders: real files in src/runtime/, embedded into
# the binary at build time by src/embed.sh (runtime_file() in kasgen.h).
RUNTIME := $(sort $(wildcard src/runtime/*))
TEST_SRC := $(wildcard tests/test_*.c)
TEST_BIN := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRC))

.PHONY: all deps test unit-tests install uninstall clean fuzz benchdb
all: kasgen

# With deps among the goals, nothing is compiled before it is done, even under make -j.
$(BUILD)/obj/main.o $(LIB_OBJ) $(TEST_BIN): | $(filter deps,$(MAKECMDGOALS))

kasgen: $(BUILD)/kasgen
	@if [ "$(BUILD)" = build ]; then cp $(BUILD)/kasgen kasgen; fi

$(BUILD)/kasgen: $(BUILD)/obj/main.o $(BUILD)/libkasgen.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/libkasgen.a: $(LIB_OBJ)
	rm -f $@
	ar rcs $@ $^

$(BUILD)/obj/%.o: src/%.c src/kasgen.h | $(BUILD)/obj
	$(CC) $(CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/obj/runtime_files.c: $(RUNTIME) src/embed.sh | $(BUILD)/obj
	sh src/embed.sh $(RUNTIME) >$@.tmp && mv $@.tmp $@

$(BUILD)/obj/runtime_files.o: $(BUILD)/obj/runtime_files.c src/kasgen.h
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/tests/%: tests/%.c $(BUILD)/libkasgen.a tests/testutil.h | $(BUILD)/tests
	$(CC) $(CFLAGS) -Itests -o $@ $< $(BUILD)/libkasgen.a $(LDFLAGS) $(LDLIBS) -lcmocka

$(BUILD)/obj $(BUILD)/tests:
	mkdir -p $@

-include $(wildcard $(BUILD)/obj/*.d)

deps:
	tools/deps.sh

unit-tests: $(TEST_BIN) $(BUILD)/kasgen

# The tests find nvcc through tools/find-nvcc.sh (NVCC=... overrides) and Python as $(PYTHON).
test: unit-tests
	BUILD=$(BUILD) SAN=$(SAN) PYTHON="$(PYTHON)" tests/run.sh

# The file list and the uninstall record: tools/install.sh.
install: all
	tools/install.sh install "$(DESTDIR)" "$(PREFIX)" "$(BUILD)/kasgen"

uninstall:
	tools/install.sh uninstall "$(DESTDIR)" "$(PREFIX)"

fuzz:
	tests/fuzz/build.sh

benchdb:
	tests/../bench/benchdb.sh

clean:
	rm -rf build build-san build-* kasgen
