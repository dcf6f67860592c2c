# ktlua: kernel tuner for OpenCL and CUDA, tuning programs in Lua.
#
#   make              build build/ktlua (executable) and build/ktlua.so (module)
#   make demo         install what is missing, build, tune an example on the default device
#   make check        install what is missing, build, run every test (also under ASan/UBSan)
#   make fuzz         the fuzzers of spec/fuzz_spec.lua for long (FUZZ_SEED, FUZZ_CASES)
#   make install      install into $(PREFIX) (default /usr/local)
#   make bundle       build/bundle: ktlua for a GPU machine without Lua (scripts/gpu-check.sh)
#   make bench-searchers  compare the searchers on the recorded spaces in $(DATASETS)
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

# The CUDA backend's files use the toolkit's headers when there are some
# (the libraries themselves are loaded at run time); `make CUDA_INC=`
# builds a ktlua whose CUDA backend says it was built without them.
CUDA_HOME ?= /usr/local/cuda
CUDA_INC ?= $(if $(wildcard $(CUDA_HOME)/include/cuda.h),$(CUDA_HOME)/include)
CUDA_SRC = core/backend_cuda.c core/cuda_lib.c core/nvrtc.c
CUDA_CFLAGS = $(if $(CUDA_INC),-DKT_HAVE_CUDA -I$(CUDA_INC))

WARN = -Wall -Wextra -Werror
BASE_CFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L $(WARN) -fPIC -I$(LUA_INC)
OPT ?= -O2 -g
LIBS = -lOpenCL -lsqlite3 -lz -ldl -lm -lpthread

CORE_SRC = $(sort $(wildcard core/*.c))
BIND_SRC = $(sort $(filter-out bindings/main.c,$(wildcard bindings/*.c)))
STDLIB = $(sort $(wildcard stdlib/ktlua/*.lua))
HEADERS = $(wildcard core/*.h bindings/*.h)

B = build
OBJ = $(patsubst %.c,$(B)/obj/%.o,$(CORE_SRC) $(BIND_SRC)) $(B)/obj/stdlib_embed.o

ASAN = $(B)/asan
ASAN_FLAGS = -fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all -fno-omit-frame-pointer
ASAN_OBJ = $(patsubst %.c,$(ASAN)/obj/%.o,$(CORE_SRC) $(BIND_SRC) bindings/main.c) $(ASAN)/obj/stdlib_embed.o

.PHONY: all deps demo check test fuzz asan install bundle clean bench-searchers bench-space FORCE
all: $(B)/ktlua $(B)/ktlua.so

$(B)/obj/%.o: %.c $(HEADERS)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(BASE_CFLAGS) $(OPT) $(XCFLAGS) -c $< -o $@

# Only the CUDA files see the toolkit's headers (its include directory
# also holds headers that would shadow the system's), and they are built
# again when the CUDA flags change.
CUDA_OBJ = $(patsubst %.c,$(B)/obj/%.o,$(CUDA_SRC)) $(patsubst %.c,$(ASAN)/obj/%.o,$(CUDA_SRC))
$(CUDA_OBJ): XCFLAGS = $(CUDA_CFLAGS)
$(CUDA_OBJ): $(B)/cuda.flags

$(B)/cuda.flags: FORCE
	@mkdir -p $(B)
	@echo '$(CUDA_CFLAGS)' | cmp -s - $@ || echo '$(CUDA_CFLAGS)' > $@

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

# The same code under AddressSanitizer and UndefinedBehaviorSanitizer (with
# float-to-integer casts out of range, which files read can ask for).
asan: $(ASAN)/ktlua

$(ASAN)/obj/%.o: %.c $(HEADERS)
	@mkdir -p $(dir $@)
	@echo "  CC      $< (sanitized)"
	@$(CC) $(BASE_CFLAGS) -O1 -g $(ASAN_FLAGS) $(XCFLAGS) -c $< -o $@

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
	$(B)/ktlua examples/tune_reduction.lua --progress

check: deps
	@$(MAKE) --no-print-directory all asan
	@scripts/check.sh

# The suite once, without the sanitizer run (quicker while developing).
test: all
	@scripts/check.sh --quick

# The fuzzers of the suite (spec/fuzz_spec.lua), sanitized, with many more
# cases: FUZZ_CASES per fuzzer (5000) from FUZZ_SEED (the time); a failing
# case is left in build/fuzz.
fuzz: all asan
	@scripts/fuzz.sh

# Benchmarks: figures for bench/RESULTS.md, from the recorded spaces beside
# the repository. bench-searchers: every searcher, 50 seeded runs per
# budget, on replays; bench-space: building and counting large spaces.
DATASETS ?= ../shared/datasets
bench-searchers: all
	$(B)/ktlua bench/searchers/run.lua --datasets $(DATASETS)

$(B)/bench_space: bench/space/bench_space.c $(OBJ)
	@echo "  LD      $@"
	@$(CC) $(BASE_CFLAGS) $(OPT) -o $@ $^ $(LUA_LIB) -Wl,-E $(LIBS)

bench-space: deps $(B)/bench_space
	$(B)/bench_space $(DATASETS)/gemm_RTX_3090.json.gz

install: all
	install -d $(PREFIX)/bin $(LUA_CMOD) $(LUA_LMOD)/ktlua
	install -m 755 $(B)/ktlua $(PREFIX)/bin/ktlua
	install -m 755 $(B)/ktlua.so $(LUA_CMOD)/ktlua.so
	install -m 644 $(STDLIB) $(LUA_LMOD)/ktlua/

# A folder that runs on an x86-64 Linux machine with no Lua and no package
# registry (the GPU machines): ktlua (a launcher that finds what lies
# beside it), bin/ktlua (Lua linked statically), lib/ (the OpenCL ICD
# loader and the C modules busted needs, which need only libc), share/lua
# (busted and its pure-Lua modules, from this machine's Debian packages),
# stdlib, examples, spec, and gpu-check.sh.
ARCH_LIB = /usr/lib/$(shell $(CC) -dumpmachine)
LUA_SHARE ?= /usr/share/lua/5.4
LUA_CLIB ?= $(ARCH_LIB)/lua/5.4
OPENCL_LOADER ?= $(ARCH_LIB)/libOpenCL.so.1
SQLITE_LIB ?= $(ARCH_LIB)/libsqlite3.so.0
BUSTED ?= /usr/bin/busted
BUSTED_LUA = busted busted.lua cliargs cliargs.lua dkjson.lua luassert mediator.lua pl say system term
BUSTED_C = lfs.so system/core.so term/core.so
BUNDLE = $(B)/bundle

bundle: $(B)/ktlua
	@rm -rf $(BUNDLE)
	@mkdir -p $(BUNDLE)/bin $(BUNDLE)/lib/lua/system $(BUNDLE)/lib/lua/term $(BUNDLE)/share/lua
	cp $(B)/ktlua $(BUNDLE)/bin/ktlua
	cp -L $(BUSTED) $(BUNDLE)/bin/busted
	cp -L $(OPENCL_LOADER) $(SQLITE_LIB) $(BUNDLE)/lib/
	for m in $(BUSTED_C); do cp -L $(LUA_CLIB)/$$m $(BUNDLE)/lib/lua/$$m || exit 1; done
	for m in $(BUSTED_LUA); do cp -RL $(LUA_SHARE)/$$m $(BUNDLE)/share/lua/ || exit 1; done
	cp -R stdlib examples spec bench $(BUNDLE)/
	install -m 755 scripts/bundle-ktlua.sh $(BUNDLE)/ktlua
	install -m 755 scripts/gpu-check.sh $(BUNDLE)/gpu-check.sh
	@du -sh $(BUNDLE)

clean:
	rm -rf $(B)
