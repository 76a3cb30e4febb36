#!/bin/sh
# tests/tsan/run.sh TSAN_BUILD - the executor under ThreadSanitizer: the
# pool, engine, homes, lanes and combine-order unit tests, then collrun for every
# operation and algorithm with more threads than cores (participants block
# when idle), then with one per CPU (idle ones spin first, and heavy plans
# wake them before the clock starts).  Any ThreadSanitizer report fails
# (halt_on_error, a distinct exit code, and a scan of stderr).
B=$(cd "${1:?usage: run.sh TSAN_BUILD}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1"
export TSAN_OPTIONS
log=$(mktemp)
trap 'rm -f "$log"' EXIT
pass=0 fail=0
check() {  # check NAME CMD...: passes when CMD exits 0 with no TSan report
	name=$1; shift
	if "$@" >"$log" 2>&1 && ! grep -q "ThreadSanitizer" "$log"; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1)); echo "FAIL $name"; tail -30 "$log"
	fi
}
# collrun's runs get an hour, not its default minute: the suite looks for
# races, and ThreadSanitizer on a loaded 2-CPU machine took the 8192
# members' reduce past 60 s; a timeout there would test the host's speed.
long="--timeout 3600"
check test_pool "$B/tests/test_pool"
check test_exec "$B/tests/test_exec"
check test_homes "$B/tests/test_homes"
check test_lanes "$B/tests/test_lanes"
check test_order "$B/tests/test_order"
m="$top/examples/uneven.json"
for run in "bcast" "bcast --segment 16 --bytes 100" "scatter" \
	"scatter --algorithm or-combine" "gather" "gather --algorithm tree" \
	"reduce" "reduce --algorithm tree -t binomial --type double --op max" \
	"bcast --root 7 -t binomial" "reduce --root 3 --op bxor" \
	"allreduce" "allreduce --algorithm hierarchical" "allreduce --algorithm ring" \
	"allreduce --algorithm recursive-doubling --type double --op max" \
	"allreduce --algorithm rabenseifner --op bor" \
	"allreduce --algorithm tree -t binomial --segment 16" \
	"allgather" "allgather --algorithm tree" \
	"allgather --algorithm recursive-doubling" "allgather --algorithm bruck" \
	"allgather --algorithm direct" \
	"reduce-scatter" "reduce-scatter --algorithm tree --segment 16" \
	"reduce-scatter --algorithm recursive-halving --op min" \
	"reduce-scatter --algorithm direct --segment 16 --op max" \
	"reduce --algorithm direct --segment 16 --root 2" \
	"alltoall" "alltoall --algorithm bruck" "alltoall --algorithm direct" \
	"scatter --algorithm direct"; do
	# shellcheck disable=SC2086
	check "collrun $run" "$B/collrun" $run --threads 4 --iterations 3 --bytes 64 $long "$m"
done
for run in "barrier" "barrier --algorithm tree -t chain"; do
	# shellcheck disable=SC2086
	check "collrun $run" "$B/collrun" $run --threads 4 --iterations 5 $long "$m"
done
cpus=$(nproc)
# (the scatter's root input, members x 1 MiB, is filled in 4 MiB pieces
# by both threads)
for run in "bcast --bytes 1M" "scatter --algorithm direct --bytes 1M" \
	"gather --bytes 64K" "reduce --bytes 256K" "allreduce --bytes 4K" \
	"alltoall --bytes 1K" "allgather --algorithm direct --bytes 64K" \
	"barrier" "bcast --bytes 8"; do
	# shellcheck disable=SC2086
	check "collrun $run --threads $cpus" "$B/collrun" $run --threads "$cpus" \
	    --iterations 5 $long "$m"
done
# The reductions' check shared by both threads (tasks of 4096 positions
# over 8192 members), and a bcast's expected data made once.
big="$top/examples/bgq-midplane.json"
for run in "reduce --bytes 8K" "allreduce --bytes 8K --op bxor" \
	"bcast --bytes 8"; do
	# shellcheck disable=SC2086
	check "collrun $run --threads $cpus (8192 members)" "$B/collrun" $run \
	    --threads "$cpus" --iterations 2 $long "$big"
done
echo "tsan: $pass passed, $fail failed"
[ $fail = 0 ]
