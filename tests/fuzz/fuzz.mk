# tests/fuzz/fuzz.mk - libFuzzer targets (included by the top Makefile).
#
#   make fuzz [FUZZ_SECONDS=60]   fuzz each target for that many seconds,
#                                 from a scratch copy of its seed corpus
#   make fuzz-smoke               the same for 10 seconds each (CI)
#   make fuzz-regress             replay every committed corpus and
#                                 regression file once through its target
#   make fuzz-build               only build the fuzzers
#   make fuzz-deps                install clang and its fuzzer runtime
#
# Each target compiles libtopo's sources itself, with clang's fuzzer,
# AddressSanitizer and UndefinedBehaviorSanitizer instrumentation, into
# $(B)/fuzz/ (objects apart from the plain build's).  Scratch corpora, logs
# and crash reproducers are under $(B)/fuzz/work/TARGET/.

FUZZ_CC      ?= clang-14
FUZZ_PKGS    := clang-14 libclang-rt-14-dev
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := machine spec routes
FUZZ_BINS    := $(FUZZ_TARGETS:%=$(B)/fuzz/fuzz_%)
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all \
	-fno-omit-frame-pointer
FUZZ_CFLAGS  := -std=c11 -D_GNU_SOURCE -pthread $(WARN) -g -O1 $(FUZZ_SAN)
FUZZ_LIB_OBJ := $(LIB_SRC:%.c=$(B)/fuzz/obj/%.o)

.PHONY: fuzz fuzz-smoke fuzz-regress fuzz-build fuzz-deps

$(B)/fuzz/obj/%.o: %.c $(wildcard libtopo/*.h libtopo/*/*.h libtopo/*/*/*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -Ilibtopo -c $< -o $@

$(B)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_common.h $(FUZZ_LIB_OBJ)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -Ilibtopo -o $@ $< \
	    $(FUZZ_LIB_OBJ) $(LDLIBS)

fuzz-build: $(FUZZ_BINS)

fuzz-deps:
	@$(MAKE) -s deps DEB_PKGS="$(DEB_PKGS) $(FUZZ_PKGS)"

fuzz:
	@$(MAKE) -s fuzz-deps
	@$(MAKE) fuzz-build
	@sh tests/fuzz/run.sh $(B) $(FUZZ_SECONDS)

fuzz-smoke:
	@$(MAKE) fuzz FUZZ_SECONDS=10

fuzz-regress:
	@$(MAKE) -s fuzz-deps
	@$(MAKE) fuzz-build
	@sh tests/fuzz/regress.sh $(B)

# The instrumented objects are intermediates of the pattern rule above:
# keep them, so that a second fuzzer does not rebuild the library.
.SECONDARY: $(FUZZ_LIB_OBJ)
