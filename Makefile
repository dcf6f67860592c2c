# ktlua: kernel tuner for OpenCL and CUDA, tuning programs in Lua.
#
#   make              build build/ktlua (executable) and build/ktlua.so (module)
#   make demo         install what is missing, build, tune an example on the default device
#   make check        install what is missing, build, run every test (also under ASan/UBSan)
#   make install      install into $(PREFIX) (default /usr/local)
#   make bench-space  time building and counting large tuning spaces
#   make clean

PREFIX ?= /usr/local
CC ?= cc
LUA ?= lua5.4
LUA_INC ?= /usr/include/lua5.4
LUA_LIB ?= /usr/lib/$(shell $(CC) -dumpmachine)/liblua5.4.a
# Where Lua 5.4 looks for modules once installed.
LUA_CMOD = $(PREFIX)/lib/lua/5.4
LUA_LMOD = $(PREFIX)/share/lua/5.4

WARN = -Wall -Wextra -Werror
BASE_CFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L $(WARN) -fPIC -I$(LUA_INC)
OPT ?= -O2 -g
LIBS = -lOpenCL -ldl -lm -lpthread

CORE_SRC = $(sort $(wildcard core/*.c))
BIND_SRC = $(sort $(filter-out bindings/main.c,$(wildcard bindings/*.c)))
STDLIB = $(sort $(wildcard stdlib/ktlua/*.lua))
HEADERS = $(wildcard core/*.h bindings/*.h)

B = build
OBJ = $(patsubst %.c,$(B)/obj/%.o,$(CORE_SRC) $(BIND_SRC)) $(B)/obj/stdlib_embed.o

ASAN = $(B)/asan
ASAN_FLAGS = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
ASAN_OBJ = $(patsubst %.c,$(ASAN)/obj/%.o,$(CORE_SRC) $(BIND_SRC) bindings/main.c) $(ASAN)/obj/stdlib_embed.o

.PHONY: all deps demo check test asan install clean bench-space
all: $(B)/ktlua $(B)/ktlua.so

$(B)/obj/%.o: %.c $(HEADERS)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(BASE_CFLAGS) $(OPT) -c $< -o $@

$(B)/stdlib_embed.c: $(STDLIB) scripts/embed.lua
	@mkdir -p $(B)
	$(LUA) scripts/embed.lua $@ $(STDLIB)

$(B)/obj/stdlib_embed.o: $(B)/stdlib_embed.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(OPT) -Wno-overlength-strings -c $< -o $@

# The executable links Lua statically and exports its symbols, so that C
# modules (lfs, ...) load into it as into lua5.4.
$(B)/ktlua: $(OBJ) $(B)/obj/bindings/main.o
	@echo "  LD      $@"
	@$(CC) -o $@ $^ $(LUA_LIB) -Wl,-E $(LIBS)

# The module leaves the Lua symbols to the interpreter that loads it.
$(B)/ktlua.so: $(OBJ)
	@echo "  LD      $@"
	@$(CC) -shared -o $@ $^ $(LIBS)

# The same code under AddressSanitizer and UndefinedBehaviorSanitizer.
asan: $(ASAN)/ktlua

$(ASAN)/obj/%.o: %.c $(HEADERS)
	@mkdir -p $(dir $@)
	@echo "  CC      $< (sanitized)"
	@$(CC) $(BASE_CFLAGS) -O1 -g $(ASAN_FLAGS) -c $< -o $@

$(ASAN)/obj/stdlib_embed.o: $(B)/stdlib_embed.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -O1 -g $(ASAN_FLAGS) -c $< -o $@

$(ASAN)/ktlua: $(ASAN_OBJ)
	@echo "  LD      $@"
	@$(CC) $(ASAN_FLAGS) -o $@ $^ $(LUA_LIB) -Wl,-E $(LIBS)

deps:
	@scripts/setup.sh

demo: deps
	@$(MAKE) --no-print-directory all
	$(B)/ktlua examples/tune_vectoradd.lua

check: deps
	@$(MAKE) --no-print-directory all asan
	@scripts/check.sh

# The suite once, without the sanitizer run (quicker while developing).
test: all
	@scripts/check.sh --quick

# Benchmarks: figures for bench/RESULTS.md. The space benchmark reads the
# CLBlast Xgemm dataset beside the repository.
DATASETS ?= ../shared/datasets

$(B)/bench_space: bench/space/bench_space.c $(OBJ)
	@echo "  LD      $@"
	@$(CC) $(BASE_CFLAGS) $(OPT) -o $@ $^ $(LUA_LIB) -Wl,-E -lz $(LIBS)

bench-space: deps $(B)/bench_space
	$(B)/bench_space $(DATASETS)/gemm_RTX_3090.json.gz

install: all
	install -d $(PREFIX)/bin $(LUA_CMOD) $(LUA_LMOD)/ktlua
	install -m 755 $(B)/ktlua $(PREFIX)/bin/ktlua
	install -m 755 $(B)/ktlua.so $(LUA_CMOD)/ktlua.so
	install -m 644 $(STDLIB) $(LUA_LMOD)/ktlua/

clean:
	rm -rf $(B)
