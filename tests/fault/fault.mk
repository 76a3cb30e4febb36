# tests/fault/fault.mk - fault injection and valgrind, included by the top
# Makefile.
#
#   make check-fault     allocation failure at every site the programs reach
#                        (TOPO_FAIL_ALLOC), full and unwritable outputs,
#                        signals during a compile, replay timeouts, real
#                        memory limits (ulimit -v, plain build), and the
#                        executor's worker failures (test_fault, also under
#                        ThreadSanitizer); programs built with
#                        AddressSanitizer + UBSan into build-address-undefined/
#   make check-valgrind  valgrind memcheck over every CLI case and unit test
#                        of the plain build: no error, no definite leak
#
# Each suite prints "NAME: N passed, N failed".

FAULT_B := build-address-undefined

.PHONY: check-fault check-valgrind fault-build

fault-build:
	@$(MAKE) -j$(NPROC) all
	@$(MAKE) -j$(NPROC) SANITIZE=address,undefined B=$(FAULT_B) \
	    $(FAULT_B)/collc $(FAULT_B)/collrun $(FAULT_B)/tests/test_fault
	@$(MAKE) -j$(NPROC) SANITIZE=thread B=$(TSAN_B) $(TSAN_B)/tests/test_fault

check-fault: fault-build
	@sh tests/fault/run.sh $(FAULT_B) $(TSAN_B) $(B)

check-valgrind:
	@$(MAKE) -j$(NPROC) all $(UNIT_BIN)
	@sh tests/valgrind/run.sh $(B)
