# collc / collrun / libtopo - plain GNU Makefile.
#
#   make              build libtopo (static and shared) and the programs
#   make check        build and run the quick suites (unit, CLI, schema, man
#                     lint, the library's exports, install, the predictions
#                     beside the simulators, the MPI suite's main cases)
#   make check-long   the longer suites, which CI runs too: ThreadSanitizer,
#                     the whole MPI suite, AddressSanitizer + UBSan, fault
#                     injection, valgrind, the fuzzers' corpora and a smoke run
#   make demo         compile the shipped examples and show a result
#   make bench        benchmarks: compile, replay, data movement vs Open MPI
#   make install      PREFIX=/usr/local DESTDIR= ; make uninstall
#   make deps         install the Debian packages the build and tests need
#   make SANITIZE=address,undefined   or   make SANITIZE=thread

PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
DATADIR    ?= $(PREFIX)/share
MANDIR     ?= $(DATADIR)/man
SCHEMADIR  ?= $(DATADIR)/collc/schemas
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
DESTDIR    ?=

# The version is topo.h's, so that the shared library's file name cannot
# drift from what topo_version_string() says.
VERSION := $(shell sed -n 's/^\#define TOPO_VERSION_STRING "\(.*\)"/\1/p' libtopo/topo.h)
SOVERSION := 0
# The builds that the test targets make before they test (check, the
# sanitized and fault builds, valgrind's) use every CPU: on a 2-CPU machine
# a serial build of the library, the programs and the tests takes half as
# long again, several times over in CI.
NPROC := $(shell nproc 2>/dev/null || echo 1)

CC      ?= cc
OPT     ?= -O2
CFLAGS  ?= $(OPT) -g
WARN    := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2
ALL_CFLAGS := -std=c11 -D_GNU_SOURCE -pthread $(WARN) $(CFLAGS)
LDLIBS  := -ljansson -lpthread -lm

ifneq ($(SANITIZE),)
ALL_CFLAGS += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS    += -fsanitize=$(SANITIZE)
endif

# Sanitized builds get their own directory, so their objects never mix
# with the plain build's.
comma := ,
B ?= build$(if $(SANITIZE),-$(subst $(comma),-,$(SANITIZE)))

# libtopo/: the internal headers, and a folder per part: machine/
# (description, groups, costs), tree/ (trees and routes), io/ (reading and
# writing files), plan/ (planning and prediction), coll/OP/ (one file per
# operation and algorithm), run/ (pool, transports, verification).
# libtopo/mpi/ is built apart, with an MPI compiler (below).
LIB_SRC  := $(filter-out libtopo/mpi/%,$(sort $(wildcard libtopo/*.c libtopo/*/*.c libtopo/*/*/*.c)))
LIB_OBJ  := $(LIB_SRC:%.c=$(B)/%.o)
LIB_PIC  := $(LIB_SRC:%.c=$(B)/pic/%.o)
# cli/predict.c and cli/import.c are collc's alone (collc predict, collc
# import); the rest is shared.
CLI_COMMON_SRC := $(filter-out cli/collc.c cli/collrun.c cli/collrun_mpi.c cli/predict.c cli/import.c,$(sort $(wildcard cli/*.c)))
CLI_COMMON_OBJ := $(CLI_COMMON_SRC:%.c=$(B)/%.o)
PROGS    := $(B)/collc $(if $(wildcard cli/collrun.c),$(B)/collrun)
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(B)/tests/%)
# The sim suite's driver (tests/sim/run.sh, loggopsim.sh): a test tool.
SIM_TOOL := $(B)/tests/sim/simtool
MAN_PAGES := $(sort $(wildcard man/*.[1357]))
# libtopo(3) is an overview; each function is documented on one family page
# (libtopo-machine.3 ... libtopo-errors.3), and man/links.awk lists the
# pairs "FUNCTION PAGE" from those pages' SYNOPSIS.
MAN_LINKS = awk -f man/links.awk $(sort $(wildcard man/libtopo-*.3))
SCHEMAS   := $(sort $(wildcard schemas/*.schema.json))
# The public functions, from topo.h itself (libtopo/exports.awk): each gets
# a man page link to the family page that documents it (MAN_LINKS), so that
# `man topo_tree_new` works; uninstall removes a link per function.
LIB_FUNCS = awk -f libtopo/exports.awk libtopo/topo.h

.PHONY: bench-pmpi
.PHONY: FORCE all check check-long check-mpi check-unit check-cli check-schemas check-man check-abi check-install check-sim tsan-build demo bench bench-quick bench-costs bench-predict bench-deps \
	install uninstall deps clean format

all: $(B)/libtopo.a $(B)/libtopo.so $(PROGS) $(B)/libtopo.pc mpi

# ---------------------------------------------------------------- MPI
# collrun-mpi: collrun built with an MPI compiler (-DCOLLRUN_MPI) and
# libtopo/mpi/, the transport between processes.  Optional: without an MPI
# compiler the rest builds and this says what it skipped.  $(B)/collrun-mpi
# is made with MPICC (default: mpicc, Debian's default MPI); the tests
# build one per MPI library found, $(B)/openmpi/ and $(B)/mpich/, and run
# both.
MPICC ?= $(shell command -v mpicc 2>/dev/null)
MPI_FLAVOURS := $(if $(shell command -v mpicc.openmpi 2>/dev/null),openmpi) \
	$(if $(shell command -v mpicc.mpich 2>/dev/null),mpich)
MPI_HDRS = $(wildcard libtopo/*.h libtopo/*/*.h cli/*.h)
# libcollc-mpi.so's own parts (libtopo/mpi/pmpi.h)
PMPI_SRC := libtopo/mpi/collc_mpi.c libtopo/mpi/pmpi_common.c \
	libtopo/mpi/pmpi_setup.c libtopo/mpi/pmpi_state.c

# $(1): the binary's directory under $(B) ("" or "NAME/"); $(2): the MPI
# compiler
define mpi_rules
$(B)/$(1)collrun-mpi: $(B)/$(1)mpi/cli/collrun.o $(B)/$(1)mpi/cli/collrun_mpi.o \
		$(B)/$(1)mpi/libtopo/mpi/exec_mpi.o $(B)/$(1)mpi/libtopo/mpi/engine.o \
		$(CLI_COMMON_OBJ) $(B)/libtopo.a
	$(2) $(LDFLAGS) -pthread -o $$@ $$^ $(LDLIBS)

$(B)/$(1)tests/test_exec_mpi: tests/mpi/test_exec_mpi.c \
		$(B)/$(1)mpi/libtopo/mpi/exec_mpi.o $(B)/$(1)mpi/libtopo/mpi/engine.o \
		$(B)/libtopo.a $(MPI_HDRS)
	@mkdir -p $$(dir $$@)
	$(2) $(ALL_CFLAGS) -Ilibtopo -Ilibtopo/mpi -Itests/unit $(LDFLAGS) -o $$@ \
	    $$< $(B)/$(1)mpi/libtopo/mpi/exec_mpi.o $(B)/$(1)mpi/libtopo/mpi/engine.o \
	    $(B)/libtopo.a $(LDLIBS)

# libcollc-mpi.so (libcollc-mpi(7)): libtopo inside it, its own symbols
# hidden, the MPI_ wrappers exported
$(B)/$(1)libcollc-mpi.so: $(PMPI_SRC:%.c=$(B)/$(1)mpi-pic/%.o) \
		$(B)/$(1)mpi-pic/libtopo/mpi/engine.o $(LIB_PIC) libtopo/mpi/collc_mpi.map
	$(2) -shared -Wl,--version-script=libtopo/mpi/collc_mpi.map $(LDFLAGS) -o $$@ \
	    $$(filter %.o,$$^) $(LDLIBS)

$(B)/$(1)tests/test_collc_mpi: tests/mpi/test_collc_mpi.c
	@mkdir -p $$(dir $$@)
	$(2) $(ALL_CFLAGS) $(LDFLAGS) -o $$@ $$< $(LDLIBS)

# plain MPI programs that the library is tested under (tests/mpi/pmpi.py)
$(B)/$(1)tests/test_%: tests/mpi/test_%.c
	@mkdir -p $$(dir $$@)
	$(2) $(ALL_CFLAGS) $(LDFLAGS) -o $$@ $$< $(LDLIBS) -ldl

$(B)/$(1)tests/mpi-allreduce: examples/mpi-allreduce.c
	@mkdir -p $$(dir $$@)
	$(2) $(ALL_CFLAGS) $(LDFLAGS) -o $$@ $$< $(LDLIBS)

$(B)/$(1)mpi-pic/%.o: %.c $(MPI_HDRS)
	@mkdir -p $$(dir $$@)
	$(2) $(ALL_CFLAGS) -fPIC -fvisibility=hidden -Ilibtopo -Ilibtopo/mpi -c $$< -o $$@

$(B)/$(1)mpi/%.o: %.c $(MPI_HDRS)
	@mkdir -p $$(dir $$@)
	$(2) $(ALL_CFLAGS) -DCOLLRUN_MPI -Ilibtopo -Ilibtopo/mpi -Icli -c $$< -o $$@
endef
$(if $(MPICC),$(eval $(call mpi_rules,,$(MPICC))))
$(foreach f,$(MPI_FLAVOURS),$(eval $(call mpi_rules,$(f)/,mpicc.$(f))))

.PHONY: mpi mpi-all
# what make install installs beside PROGS
MPI_PROGS := $(if $(MPICC),$(B)/collrun-mpi)
MPI_LIBS := $(if $(MPICC),$(B)/libcollc-mpi.so)
ifneq ($(MPICC),)
mpi: $(B)/collrun-mpi $(B)/libcollc-mpi.so
else
mpi:
	@echo "make: no MPI compiler (mpicc): collrun-mpi and libcollc-mpi.so not built (apt-get install libopenmpi-dev, or set MPICC)"
endif
# collrun-mpi for every MPI library installed (the tests run each).
PMPI_TESTS := test_collc_mpi test_repro test_threads test_comms test_mismatch
mpi-all: mpi $(foreach f,$(MPI_FLAVOURS),$(B)/$(f)/collrun-mpi $(B)/$(f)/tests/test_exec_mpi \
	$(B)/$(f)/libcollc-mpi.so $(addprefix $(B)/$(f)/tests/,$(PMPI_TESTS)) \
	$(B)/$(f)/tests/mpi-allreduce)

$(B)/%.o: %.c $(wildcard libtopo/*.h libtopo/*/*.h libtopo/*/*/*.h cli/*.h tests/unit/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Ilibtopo -Icli -c $< -o $@

# The reduction kernels' loops start on 64-byte lines, wherever a change
# elsewhere in the file moves them: an unrelated change that moved
# topo__reduce3 by 32 bytes made reductions markedly slower, and aligning
# both builds undid it (docs/CONSTANTS.md).
KERNEL_ALIGN := -falign-functions=64 -falign-loops=64
$(B)/libtopo/run/redop.o $(B)/pic/libtopo/run/redop.o: ALL_CFLAGS += $(KERNEL_ALIGN)

# The shared library exports topo.h's TOPO_EXTERN functions and nothing
# else: hidden by default, and the version script lists them (TOPO_0).
$(B)/pic/%.o: %.c $(wildcard libtopo/*.h libtopo/*/*.h libtopo/*/*/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -fPIC -fvisibility=hidden -Ilibtopo -c $< -o $@

$(B)/libtopo.a: $(LIB_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

$(B)/libtopo.so: $(LIB_PIC) libtopo/libtopo.map
	$(CC) -shared -Wl,-soname,libtopo.so.$(SOVERSION) \
	    -Wl,--version-script=libtopo/libtopo.map $(LDFLAGS) -o $@ $(LIB_PIC) $(LDLIBS)

$(B)/collc: $(B)/cli/collc.o $(B)/cli/predict.o $(B)/cli/import.o $(CLI_COMMON_OBJ) $(B)/libtopo.a
	$(CC) $(LDFLAGS) -pthread -o $@ $^ $(LDLIBS)

$(B)/collrun: $(B)/cli/collrun.o $(CLI_COMMON_OBJ) $(B)/libtopo.a
	$(CC) $(LDFLAGS) -pthread -o $@ $^ $(LDLIBS)

$(B)/tests/%: tests/unit/%.c $(B)/libtopo.a $(wildcard tests/unit/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Ilibtopo -Itests/unit $(LDFLAGS) -o $@ $< $(B)/libtopo.a $(LDLIBS)

$(SIM_TOOL): tests/sim/simtool.c $(B)/libtopo.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Ilibtopo $(LDFLAGS) -o $@ $< $(B)/libtopo.a $(LDLIBS)

# Regenerated on every build: PREFIX may differ between `make` and
# `make install PREFIX=...`, and the file must name the installed paths.
$(B)/libtopo.pc: libtopo.pc.in FORCE
	@mkdir -p $(B)
	@sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	    -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' $< > $@

FORCE:

# ---------------------------------------------------------------- tests
# check and demo first install any missing Debian package (make deps), so
# that the README's two commands work on a fresh machine.
# make check runs the suites that test behaviour broadly and quickly
# (tests/check.sh's default); CHECK_SUITES names others (tests/check.sh
# lists them).
check:
	@$(MAKE) -s deps
	@$(MAKE) -j$(NPROC) all mpi-all $(UNIT_BIN) $(SIM_TOOL)
	@$(if $(filter tsan,$(CHECK_SUITES)),$(MAKE) tsan-build,:)
	@sh tests/check.sh $(B) $(CHECK_SUITES)

# make check-long: the suites too long for make check, which .ci/run runs
# as well, so that CI runs everything.  Under the sanitizers, the suites
# whose programs they change: tsan (built apart, the same in both runs),
# install (a plain build of its own), abi and man would only run again as
# they run in make check, and sim (the predictions beside SimGrid's and
# LogGOPSim's) took 200 s under them for code that test_predict and the
# CLI cases already run sanitized.
# Each step says how long it took: CI's time budget is spent here.
long_step = t0=$$(date +%s); $(MAKE) $(1) && \
	echo "check-long: $(strip $(1)) took $$(($$(date +%s) - t0)) s"
check-long:
	@$(call long_step,check CHECK_SUITES="tsan mpi")
	@$(call long_step,SANITIZE=address$(comma)undefined check \
	    CHECK_SUITES="unit cli schemas mpi")
	@$(call long_step,check-fault)
	@$(call long_step,check-valgrind)
	@$(call long_step,fuzz-regress)
	@$(call long_step,fuzz-smoke)

# The executor's tests and collrun, built with ThreadSanitizer into
# build-thread/ for the tsan suite of check (tests/tsan/run.sh).
TSAN_B := build-thread
tsan-build:
	@$(MAKE) -j$(NPROC) SANITIZE=thread B=$(TSAN_B) $(TSAN_B)/collrun \
	    $(TSAN_B)/tests/test_pool $(TSAN_B)/tests/test_exec \
	    $(TSAN_B)/tests/test_homes $(TSAN_B)/tests/test_lanes \
	    $(TSAN_B)/tests/test_order

check-unit: $(UNIT_BIN)
	@sh tests/check.sh $(B) unit
check-cli: all
	@sh tests/check.sh $(B) cli
check-schemas: all
	@sh tests/check.sh $(B) schemas
check-abi: all
	@sh tests/check.sh $(B) abi
check-install: all
	@sh tests/check.sh $(B) install
# SimGrid replays the schedules collc writes (tests/sim/run.sh; skipped
# without Debian's libsimgrid-dev, which .ci/run installs).
check-sim: all $(SIM_TOOL)
	@sh tests/check.sh $(B) sim
check-man:
	@sh tests/check.sh $(B) man
# collrun-mpi and the MPI transport under Open MPI and MPICH (tests/mpi/).
check-mpi: all mpi-all
	@sh tests/check.sh $(B) mpi

# ---------------------------------------------------------------- demo, bench
demo:
	@$(MAKE) -s deps
	@$(MAKE) all
	@sh examples/demo.sh $(B)

# The benchmarks (tests/bench/bench.py): compile scaling, replay scaling,
# and data movement beside Open MPI and the memory-copy limit, and the
# measured cost defaults of libtopo/machine/costs.c (reduce_rate, and loggp_fit
# where mpicc exists); results, CSVs and plots in bench-results/.  Needs
# Open MPI and gnuplot: make bench-deps.  bench-quick is a short smoke run;
# bench-costs the cost measurements alone.
bench: all mpi-all
	@python3 tests/bench/bench.py $(B) $(BENCH_ARGS)
	@python3 tests/bench/pmpi.py $(B)
	@python3 tests/bench/prod.py $(B)

# libcollc-mpi.so beside the MPI libraries' own collectives
# (tests/bench/pmpi.py; results in tests/bench/results/pmpi.md), and fit
# for production jobs: communicators, a process's plan of a million
# ranks, reproducible sums (tests/bench/prod.py, results/prod.md).
bench-pmpi: all mpi-all
	@python3 tests/bench/pmpi.py $(B)
	@python3 tests/bench/prod.py $(B)

bench-quick: all
	@python3 tests/bench/bench.py $(B) --quick $(BENCH_ARGS)

bench-costs: all
	@python3 tests/bench/bench.py $(B) --only costs $(BENCH_ARGS)

bench-predict: all
	@python3 tests/bench/bench.py $(B) --only predict $(BENCH_ARGS)

bench-deps:
	@$(MAKE) -s deps DEB_PKGS="$(DEB_PKGS) openmpi-bin libopenmpi-dev gnuplot-nox hyperfine"

# ---------------------------------------------------------------- install
install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) \
	    $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(SCHEMADIR)
	install -m 755 $(PROGS) $(MPI_PROGS) $(DESTDIR)$(BINDIR)/
	install -m 644 $(B)/libtopo.a $(DESTDIR)$(LIBDIR)/
	install -m 755 $(B)/libtopo.so $(DESTDIR)$(LIBDIR)/libtopo.so.$(VERSION)
	ln -sf libtopo.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libtopo.so.$(SOVERSION)
	ln -sf libtopo.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libtopo.so
	install -m 644 libtopo/topo.h $(DESTDIR)$(INCLUDEDIR)/
	install -m 644 $(B)/libtopo.pc $(DESTDIR)$(PKGCONFIGDIR)/
	for p in $(MAN_PAGES); do \
	    s=$${p##*.}; install -d $(DESTDIR)$(MANDIR)/man$$s; \
	    install -m 644 $$p $(DESTDIR)$(MANDIR)/man$$s/; done
	links=$$($(MAN_LINKS)) && test -n "$$links" && echo "$$links" | \
	    while read f page; do ln -sf $$page $(DESTDIR)$(MANDIR)/man3/$$f.3 || exit 1; done
	install -m 644 $(SCHEMAS) $(DESTDIR)$(SCHEMADIR)/
	$(if $(MPI_PROGS),ln -sf collrun.1 $(DESTDIR)$(MANDIR)/man1/collrun-mpi.1)
	$(if $(MPI_LIBS),install -m 755 $(MPI_LIBS) $(DESTDIR)$(LIBDIR)/)

uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(notdir $(PROGS)) collrun-mpi)
	rm -f $(DESTDIR)$(MANDIR)/man1/collrun-mpi.1 $(DESTDIR)$(LIBDIR)/libcollc-mpi.so
	rm -f $(DESTDIR)$(LIBDIR)/libtopo.a $(DESTDIR)$(LIBDIR)/libtopo.so \
	    $(DESTDIR)$(LIBDIR)/libtopo.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libtopo.so.$(VERSION)
	rm -f $(DESTDIR)$(INCLUDEDIR)/topo.h $(DESTDIR)$(PKGCONFIGDIR)/libtopo.pc
	for p in $(MAN_PAGES); do s=$${p##*.}; \
	    rm -f $(DESTDIR)$(MANDIR)/man$$s/$$(basename $$p); done
	for f in $$($(LIB_FUNCS)); do rm -f $(DESTDIR)$(MANDIR)/man3/$$f.3; done
	rm -f $(addprefix $(DESTDIR)$(SCHEMADIR)/,$(notdir $(SCHEMAS)))
	rmdir $(DESTDIR)$(SCHEMADIR) $(DESTDIR)$(DATADIR)/collc 2>/dev/null || true

# ---------------------------------------------------------------- misc
DEB_PKGS := build-essential libjansson-dev pkg-config python3 python3-jsonschema mandoc graphviz valgrind gnuplot-nox libsimgrid-dev \
	openmpi-bin libopenmpi-dev mpich libmpich-dev python3-mpi4py clustershell
deps:
	@command -v dpkg-query >/dev/null || { echo "make deps: not a Debian system; install: $(DEB_PKGS)"; exit 0; }; \
	missing=""; for p in $(DEB_PKGS); do \
	    dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	    echo "installing:$$missing"; \
	    if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	    $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

format:
	clang-format -i $(LIB_SRC) $(wildcard libtopo/mpi/*.c) $(wildcard libtopo/*.h libtopo/*/*.h libtopo/*/*/*.h) cli/*.[ch] tests/unit/*.[ch]

clean:
	rm -rf build build-*

# Hardening targets live beside their sources: fuzzing (make fuzz),
# valgrind and fault injection (make check-valgrind, check-fault).
-include tests/fuzz/fuzz.mk
-include tests/fault/fault.mk
