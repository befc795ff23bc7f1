# kasgen — build, test, install.
#
#   make deps          install missing Debian packages (as root, apt-get)
#   make               build ./kasgen
#   make test          unit, golden and integration tests (SAN=1: under ASan + UBSan)
#   make install PREFIX=/usr/local
#   make benchdb       on a GPU machine: refresh this GPU's timing database
#   make fuzz          build the fuzz targets (clang, libFuzzer)
#
# BUILD=dir keeps objects apart (several builds in one tree, or a sanitizer build).

PREFIX ?= /usr/local
SAN ?= 0
BUILD ?= $(if $(filter 1,$(SAN)),build-san,build)

CC ?= cc
DEBIAN_PACKAGES := build-essential pkg-config libinih-dev libxml2-dev liblpsolve55-dev \
                   libcmocka-dev gnuplot-nox graphviz clang

PKG_CFLAGS := $(shell pkg-config --cflags libxml-2.0 inih 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs libxml-2.0 inih 2>/dev/null)
CFLAGS ?= -O2 -g
CFLAGS += -std=c11 -D_GNU_SOURCE -Wall -Wextra -Isrc -I/usr/include/lpsolve $(PKG_CFLAGS)
LDLIBS := $(PKG_LIBS) -llpsolve55 -lcolamd -ldl -lm
ifeq ($(SAN),1)
CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS += -fsanitize=address,undefined
endif

LIB_SRC := $(filter-out src/main.c,$(wildcard src/*.c))
LIB_OBJ := $(patsubst src/%.c,$(BUILD)/obj/%.o,$(LIB_SRC))
TEST_SRC := $(wildcard tests/test_*.c)
TEST_BIN := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRC))

.PHONY: all deps test unit-tests install clean fuzz benchdb
all: kasgen

kasgen: $(BUILD)/kasgen
	@if [ "$(BUILD)" = build ]; then cp $(BUILD)/kasgen kasgen; fi

$(BUILD)/kasgen: $(BUILD)/obj/main.o $(BUILD)/libkasgen.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/libkasgen.a: $(LIB_OBJ)
	rm -f $@
	ar rcs $@ $^

$(BUILD)/obj/%.o: src/%.c src/kasgen.h | $(BUILD)/obj
	$(CC) $(CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/tests/%: tests/%.c $(BUILD)/libkasgen.a tests/testutil.h | $(BUILD)/tests
	$(CC) $(CFLAGS) -Itests -o $@ $< $(BUILD)/libkasgen.a $(LDFLAGS) $(LDLIBS) -lcmocka

$(BUILD)/obj $(BUILD)/tests:
	mkdir -p $@

-include $(wildcard $(BUILD)/obj/*.d)

deps:
	@missing=""; for p in $(DEBIAN_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  if [ "$$(id -u)" != 0 ]; then echo "make deps: run as root to install:$$missing" >&2; exit 1; fi; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	else echo "all Debian packages present"; fi

unit-tests: $(TEST_BIN) $(BUILD)/kasgen

test: unit-tests
	BUILD=$(BUILD) SAN=$(SAN) tests/run.sh

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/kasgen
	install -m 755 $(BUILD)/kasgen $(DESTDIR)$(PREFIX)/bin/kasgen
	cp -r library $(DESTDIR)$(PREFIX)/share/kasgen/
	cp -r benchmarks $(DESTDIR)$(PREFIX)/share/kasgen/

fuzz:
	tests/fuzz/build.sh

benchdb:
	tests/../bench/benchdb.sh

clean:
	rm -rf build build-san build-* kasgen
