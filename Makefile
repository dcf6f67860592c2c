# ktlua: kernel tuner for OpenCL and CUDA, tuning programs in Lua.
#
#   make              build build/ktlua (executable), build/ktlua.so (module) and
#                     build/libktlua.a (the C core, for programs that embed it)
#   make demo         install what is missing, build, tune an example on the default device
#   make check        install what is missing, build, run every test (also under ASan/UBSan)
#   make fuzz         the fuzzers of spec/fuzz_spec.lua for long (FUZZ_SEED, FUZZ_CASES, FUZZ_ONLY)
#   make install      install into $(DESTDIR)$(PREFIX) (default /usr/local): the
#                     executable, the module, the library with its headers and
#                     ktlua.pc, the man page, the docs and the examples
#   make uninstall    remove what make install put there
#   make install-lua  only the module and the Lua modules, into $(LUA_CMOD) and
#                     $(LUA_LMOD) (what the LuaRocks rockspec runs)
#   make bundle       build/bundle: ktlua for a GPU machine without Lua (scripts/gpu-check.sh)
#   make bench-searchers  compare the searchers on the recorded spaces in $(DATASETS)
#   make bench-space  time building and counting large tuning spaces
#   make bench-model  time the model searcher's neural networks on 100,000 configurations
#   make clean

PREFIX ?= /usr/local
DESTDIR ?=
VERSION = $(shell sed -n 's/^\#define KTLUA_VERSION "\(.*\)"/\1/p' bindings/version.h)
CC ?= cc
LUA ?= lua5.4
LUA_INC ?= /usr/include/lua5.4
LUA_LIB ?= /usr/lib/$(shell $(CC) -dumpmachine)/liblua5.4.a
# Where Lua 5.4 looks for modules once installed.
LUA_CMOD ?= $(PREFIX)/lib/lua/5.4
LUA_LMOD ?= $(PREFIX)/share/lua/5.4

# The CUDA backend's files use the toolkit's headers when there are some
# (the libraries themselves are loaded at run time); `make CUDA_INC=`
# builds a ktlua whose CUDA backend says it was built without them.
CUDA_HOME ?= /usr/local/cuda
CUDA_INC ?= $(if $(wildcard $(CUDA_HOME)/include/cuda.h),$(CUDA_HOME)/include)
CUDA_SRC = $(addprefix core/device/,backend_cuda.c cuda_buffers.c cuda_binary.c cuda_devices.c \
           cuda_lib.c nvrtc.c cupti_lib.c counters.c)
# core/device/cupti_shim stands in for the C++ header that CUPTI 13's profiler host header includes.
CUDA_CFLAGS = $(if $(CUDA_INC),-DKT_HAVE_CUDA -I$(CUDA_INC) -Icore/device/cupti_shim)

# The model searcher's neural networks are FANN's (libfann-dev); without
# its headers (or with `make FANN_INC=`) that searcher says it is unavailable.
FANN_INC ?= $(if $(wildcard /usr/include/floatfann.h),/usr/include)
FANN_SRC = core/models/ensemble.c
# -O3 vectorises the predictions over a whole space (core/models/ensemble.c).
FANN_CFLAGS = -O3 $(if $(FANN_INC),-DKT_HAVE_FANN -I$(FANN_INC))
FANN_LIBS = $(if $(FANN_INC),-lfloatfann)

# One tuning over the devices of several MPI ranks (core/mpi*.c) where Open
# MPI's headers are (libopenmpi-dev); `make MPI_PC=` builds without it.
# build/ktlua-nompi, the same without MPI, goes into `make bundle`.
MPI_PC ?= $(shell pkg-config --exists ompi-c 2>/dev/null && echo ompi-c)
MPI_SRC = $(sort $(wildcard core/multi/mpi*.c))
MPI_CFLAGS = $(if $(MPI_PC),-DKT_HAVE_MPI $(shell pkg-config --cflags $(MPI_PC)))
MPI_LIBS = $(if $(MPI_PC),$(shell pkg-config --libs $(MPI_PC)))

WARN = -Wall -Wextra -Werror
BASE_CFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L $(WARN) -fPIC -I$(LUA_INC) $(CORE_INC)
OPT ?= -O2 -g
BASE_LIBS = -lOpenCL -lsqlite3 -lz $(FANN_LIBS) -ldl -lm -lpthread
LIBS = $(BASE_LIBS) $(MPI_LIBS)

CORE_SRC = $(sort $(wildcard core/*/*.c))
# core/ is one folder per subsystem (doc/architecture.md); a file names
# another's header by its name alone, wherever it lies (quoted includes
# only: core/base/spawn.h must not hide <spawn.h>).
CORE_INC = $(addprefix -iquote ,$(sort $(dir $(CORE_SRC))))
# The executable's own files (its prompt links GNU readline; the module does not).
EXE_SRC = bindings/main.c bindings/prompt.c
BIND_SRC = $(sort $(filter-out $(EXE_SRC),$(wildcard bindings/*.c)))
STDLIB = $(sort $(wildcard stdlib/ktlua/*.lua))
HEADERS = $(wildcard core/*/*.h bindings/*.h)

B = build
OBJ = $(patsubst %.c,$(B)/obj/%.o,$(CORE_SRC) $(BIND_SRC)) $(B)/obj/stdlib_embed.o

ASAN = $(B)/asan
ASAN_FLAGS = -fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all -fno-omit-frame-pointer
ASAN_OBJ = $(patsubst %.c,$(ASAN)/obj/%.o,$(CORE_SRC) $(BIND_SRC) $(EXE_SRC)) $(ASAN)/obj/stdlib_embed.o

.PHONY: all deps demo check test fuzz asan install uninstall install-lua bundle clean bench-searchers bench-space bench-model FORCE
all: $(B)/ktlua $(B)/ktlua.so $(B)/libktlua.a

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

# Where the installed ktlua is, for programs that embed the core (core/base/ktlua_exe.h).
EXE_DIR_OBJ = $(B)/obj/core/base/ktlua_exe.o $(ASAN)/obj/core/base/ktlua_exe.o
$(EXE_DIR_OBJ): XCFLAGS = -DKT_BINDIR='"$(PREFIX)/bin"'

FANN_OBJ = $(patsubst %.c,$(B)/obj/%.o,$(FANN_SRC)) $(patsubst %.c,$(ASAN)/obj/%.o,$(FANN_SRC))
$(FANN_OBJ): XCFLAGS = $(FANN_CFLAGS)
$(FANN_OBJ): $(B)/fann.flags

MPI_OBJ = $(patsubst %.c,$(B)/obj/%.o,$(MPI_SRC)) $(patsubst %.c,$(ASAN)/obj/%.o,$(MPI_SRC))
$(MPI_OBJ): XCFLAGS = $(MPI_CFLAGS)
$(MPI_OBJ): $(B)/mpi.flags

$(B)/mpi.flags: FORCE
	@mkdir -p $(B)
	@echo '$(MPI_CFLAGS)' | cmp -s - $@ || echo '$(MPI_CFLAGS)' > $@

# The MPI files again without MPI, for build/ktlua-nompi.
NOMPI_OBJ = $(patsubst %.c,$(B)/nompi/%.o,$(MPI_SRC))
$(B)/nompi/%.o: %.c $(HEADERS)
	@mkdir -p $(dir $@)
	@echo "  CC      $< (without MPI)"
	@$(CC) $(BASE_CFLAGS) $(OPT) -c $< -o $@

$(B)/ktlua-nompi: $(filter-out $(patsubst %.c,$(B)/obj/%.o,$(MPI_SRC)),$(OBJ)) $(NOMPI_OBJ) $(patsubst %.c,$(B)/obj/%.o,$(EXE_SRC))
	@echo "  LD      $@"
	@$(CC) -o $@ $^ $(LUA_LIB) -Wl,-E $(BASE_LIBS) -lreadline

$(B)/fann.flags: FORCE
	@mkdir -p $(B)
	@echo '$(FANN_CFLAGS)' | cmp -s - $@ || echo '$(FANN_CFLAGS)' > $@

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
$(B)/ktlua: $(OBJ) $(patsubst %.c,$(B)/obj/%.o,$(EXE_SRC))
	@echo "  LD      $@"
	@$(CC) -o $@ $^ $(LUA_LIB) -Wl,-E $(LIBS) -lreadline

# The module leaves the Lua symbols to the interpreter that loads it.
$(B)/ktlua.so: $(OBJ)
	@echo "  LD      $@"
	@$(CC) -shared -o $@ $^ $(LIBS)

# The core alone (no Lua), for C programs that embed it (ktlua.pc).
CORE_OBJ = $(patsubst %.c,$(B)/obj/%.o,$(CORE_SRC))
$(B)/libktlua.a: $(CORE_OBJ)
	@echo "  AR      $@"
	@rm -f $@
	@ar rcs $@ $^

# ktlua.pc, written again when the prefix (or anything else in it) changes.
PC_LINES = 'prefix=$(PREFIX)' 'includedir=$${prefix}/include' 'libdir=$${prefix}/lib' '' \
  'Name: ktlua' 'Description: the C core of ktlua, a kernel auto-tuner for OpenCL and CUDA' \
  'Version: $(VERSION)' 'Cflags: -I$${includedir}' 'Libs: -L$${libdir} -lktlua $(LIBS)'
$(B)/ktlua.pc: FORCE
	@mkdir -p $(B)
	@printf '%s\n' $(PC_LINES) | cmp -s - $@ || printf '%s\n' $(PC_LINES) > $@

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
	@$(CC) $(ASAN_FLAGS) -o $@ $^ $(LUA_LIB) -Wl,-E $(LIBS) -lreadline

deps:
	@scripts/setup.sh

demo: deps
	@$(MAKE) --no-print-directory all
	$(B)/ktlua examples/tune_reduction.lua --n=1048576 --count=40 --progress

check: deps
	@$(MAKE) --no-print-directory all asan
	@scripts/check.sh

# The suite once, without the sanitizer run (quicker while developing).
test: all
	@scripts/check.sh --quick

# The fuzzers of the suite (spec/fuzz_spec.lua), sanitized, with many more
# cases: FUZZ_CASES per fuzzer (5000) from FUZZ_SEED (the time), only those
# named by FUZZ_ONLY (scripts/fuzz.sh); a failing case is left in build/fuzz.
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

# bench-model: what the model searcher's networks cost on 100,000 configurations.
$(B)/bench_model: bench/model/bench_model.c $(OBJ)
	@echo "  LD      $@"
	@$(CC) $(BASE_CFLAGS) $(OPT) -o $@ $^ $(LUA_LIB) -Wl,-E $(LIBS)

bench-model: $(B)/bench_model
	$(B)/bench_model

bench-space: deps $(B)/bench_space
	$(B)/bench_space $(DATASETS)/gemm_RTX_3090.json.gz

# Everything install puts under $(DESTDIR)$(PREFIX), so that uninstall
# removes exactly that; the directories of ktlua's own go with it.
D = $(DESTDIR)$(PREFIX)
CORE_H = $(sort $(wildcard core/*/*.h))
# README.md links to doc/NAME.md: the pages keep that place beside it.
DOC_PAGES = $(sort $(wildcard doc/*.md))
EXAMPLES = $(sort $(wildcard examples/*.lua))
EXAMPLES_EMBED = $(sort $(wildcard examples/embed/*.c))
EXAMPLE_KERNELS = $(sort $(wildcard examples/kernels/*))
INSTALLED = $(D)/bin/ktlua $(DESTDIR)$(LUA_CMOD)/ktlua.so $(D)/lib/libktlua.a \
  $(D)/lib/pkgconfig/ktlua.pc $(D)/share/man/man1/ktlua.1 \
  $(addprefix $(DESTDIR)$(LUA_LMOD)/,$(STDLIB:stdlib/%=%)) \
  $(addprefix $(D)/include/ktlua/,$(notdir $(CORE_H))) \
  $(D)/share/doc/ktlua/README.md $(addprefix $(D)/share/doc/ktlua/,$(DOC_PAGES)) \
  $(addprefix $(D)/share/ktlua/,$(EXAMPLES) $(EXAMPLE_KERNELS) $(EXAMPLES_EMBED))
INSTALLED_DIRS = $(D)/share/ktlua/examples/kernels $(D)/share/ktlua/examples/embed \
  $(D)/share/ktlua/examples $(D)/share/ktlua \
  $(D)/share/doc/ktlua/doc $(D)/share/doc/ktlua $(D)/include/ktlua $(DESTDIR)$(LUA_LMOD)/ktlua

# What depends on $(PREFIX) is made in a folder of each install's own (mktemp), never under
# build/, so that installs to several prefixes at once (the suite's spec files) share no file:
# the prefix's ktlua.pc, and a copy of the library whose ktlua_exe.o is built for $(PREFIX)
# (the installed core knows where the installed ktlua is: core/base/ktlua_exe.h).
install: all
	install -d $(D)/bin $(DESTDIR)$(LUA_CMOD) $(D)/lib/pkgconfig $(D)/share/man/man1 $(INSTALLED_DIRS)
	install -m 755 $(B)/ktlua $(D)/bin/ktlua
	install -m 755 $(B)/ktlua.so $(DESTDIR)$(LUA_CMOD)/ktlua.so
	@t=$$(mktemp -d) && trap 'rm -rf "$$t"' EXIT && \
	  $(CC) $(BASE_CFLAGS) $(OPT) -DKT_BINDIR='"$(PREFIX)/bin"' -c core/base/ktlua_exe.c -o $$t/ktlua_exe.o && \
	  cp $(B)/libktlua.a $$t/libktlua.a && ar rs $$t/libktlua.a $$t/ktlua_exe.o 2>/dev/null && \
	  printf '%s\n' $(PC_LINES) > $$t/ktlua.pc && \
	  install -m 644 $$t/libktlua.a $(D)/lib/libktlua.a && \
	  install -m 644 $$t/ktlua.pc $(D)/lib/pkgconfig/ktlua.pc
	install -m 644 doc/ktlua.1 $(D)/share/man/man1/ktlua.1
	install -m 644 $(STDLIB) $(DESTDIR)$(LUA_LMOD)/ktlua/
	install -m 644 $(CORE_H) $(D)/include/ktlua/
	install -m 644 README.md $(D)/share/doc/ktlua/
	install -m 644 $(DOC_PAGES) $(D)/share/doc/ktlua/doc/
	install -m 644 $(EXAMPLES) $(D)/share/ktlua/examples/
	install -m 644 $(EXAMPLE_KERNELS) $(D)/share/ktlua/examples/kernels/
	install -m 644 $(EXAMPLES_EMBED) $(D)/share/ktlua/examples/embed/

install-lua: $(B)/ktlua.so
	install -d $(DESTDIR)$(LUA_CMOD) $(DESTDIR)$(LUA_LMOD)/ktlua
	install -m 755 $(B)/ktlua.so $(DESTDIR)$(LUA_CMOD)/ktlua.so
	install -m 644 $(STDLIB) $(DESTDIR)$(LUA_LMOD)/ktlua/

uninstall:
	rm -f $(INSTALLED)
	rmdir $(INSTALLED_DIRS) 2>/dev/null || true

# A folder that runs on an x86-64 Linux machine with no Lua and no package
# registry (the GPU machines): ktlua (a launcher that finds what lies
# beside it), bin/ktlua (Lua linked statically), lib/ (the OpenCL ICD
# loader, SQLite, readline, FANN where ktlua has it, and the C modules
# busted needs, which need only libc), share/lua
# (busted and its pure-Lua modules, from this machine's Debian packages),
# stdlib, examples, spec, and gpu-check.sh.
ARCH_LIB = /usr/lib/$(shell $(CC) -dumpmachine)
LUA_SHARE ?= /usr/share/lua/5.4
LUA_CLIB ?= $(ARCH_LIB)/lua/5.4
OPENCL_LOADER ?= $(ARCH_LIB)/libOpenCL.so.1
SQLITE_LIB ?= $(ARCH_LIB)/libsqlite3.so.0
READLINE_LIB ?= $(ARCH_LIB)/libreadline.so.8
FANN_LIB = $(if $(FANN_INC),$(ARCH_LIB)/libfloatfann.so.2)
BUSTED ?= /usr/bin/busted
BUSTED_LUA = busted busted.lua cliargs cliargs.lua dkjson.lua luassert mediator.lua pl say system term
BUSTED_C = lfs.so system/core.so term/core.so
BUNDLE = $(B)/bundle

# Without MPI: the GPU machine has no Open MPI to load.
bundle: $(B)/ktlua-nompi
	@rm -rf $(BUNDLE)
	@mkdir -p $(BUNDLE)/bin $(BUNDLE)/lib/lua/system $(BUNDLE)/lib/lua/term $(BUNDLE)/share/lua
	cp $(B)/ktlua-nompi $(BUNDLE)/bin/ktlua
	cp -L $(BUSTED) $(BUNDLE)/bin/busted
	cp -L $(OPENCL_LOADER) $(SQLITE_LIB) $(READLINE_LIB) $(FANN_LIB) $(BUNDLE)/lib/
	for m in $(BUSTED_C); do cp -L $(LUA_CLIB)/$$m $(BUNDLE)/lib/lua/$$m || exit 1; done
	for m in $(BUSTED_LUA); do cp -RL $(LUA_SHARE)/$$m $(BUNDLE)/share/lua/ || exit 1; done
	cp -R stdlib examples spec bench $(BUNDLE)/
	install -m 755 scripts/bundle-ktlua.sh $(BUNDLE)/ktlua
	install -m 755 scripts/gpu-check.sh $(BUNDLE)/gpu-check.sh
	@du -sh $(BUNDLE)

clean:
	rm -rf $(B)
