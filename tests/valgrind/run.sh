#!/bin/sh
# tests/valgrind/run.sh BUILD - valgrind memcheck over every CLI case
# (tests/cli/run.sh) and every unit test of BUILD (make check-valgrind).
#
# The CLI cases call the programs through $COLLC and $COLLRUN, which
# tests/cli/run.sh sets to BUILD/collc and BUILD/collrun: it is handed a
# directory of wrappers instead, which run the real programs under
#   valgrind --error-exitcode=99 --leak-check=full
#            --errors-for-leak-kinds=definite
# with valgrind's own report in a log file per process, so that the cases'
# expected standard error stays exact.  A memory error or a definitely lost
# block makes the program exit 99 (the case then fails on its status), and
# the logs are summed at the end: any error or lost byte fails the run.
# Reports in test code awaiting a fix are suppressed by known.supp.
#
# Prints "valgrind: N passed, N failed" (CLI cases and unit tests) and the
# totals: processes checked, errors, bytes definitely lost.
B=$(cd "${1:?usage: run.sh BUILD}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)

# Cases too slow under valgrind (20-50 times slower, about 0.5 s to start a
# program) are shrunk: SAMPLE_CASES run one program invocation in
# SAMPLE_EVERY under valgrind (the first, then every SAMPLE_EVERY-th) and
# the others natively.  They are matrices of hundreds of collrun runs
# (natively 1 s, under valgrind 2 to 2.5 minutes each):
#   run-reduce-types     280 reduces: type x operator x algorithm x machine
#   run-matrix-uneven    every operation x algorithm x tree x root
#   run-matrix-strided   the same over a strided group
#   collc-predict-matches-collrun  85 predictions, collc's and collrun's
#   predict-matches-replay-counts  8 operations replayed and predicted
# SKIP_CASES run every program natively: cases whose --timeout (0.2 s;
# 1 s for predict-emit-timeout, which must load and predict within it)
# is shorter than a program takes to start under valgrind, so that they
# would test valgrind's speed, not the timeout (their paths run under
# AddressSanitizer in make SANITIZE=address,undefined check):
#   run-timeout, run-timeout-before-first, predict-timeout,
#   collc-predict-timeout, predict-emit-timeout
SAMPLE_CASES=${SAMPLE_CASES-"run-reduce-types run-matrix-uneven run-matrix-strided collc-predict-matches-collrun predict-matches-replay-counts"}
SAMPLE_EVERY=${SAMPLE_EVERY:-8}
SKIP_CASES=${SKIP_CASES-"run-timeout run-timeout-before-first predict-timeout collc-predict-timeout predict-emit-timeout"}
# Unit tests run natively (names of BUILD/tests/test_*): none.  Their
# timing assertions ("... took 0.671 s") cannot hold under valgrind: a
# unit test whose only failed checks are such lines passes here (its
# memory is what this suite checks), and they are listed.
SKIP_UNITS=${SKIP_UNITS-""}
# The unit tests run with CHECK_QUICK=1: their largest sweeps (the
# allreduce type x operator matrix, the prediction's 120 random machines)
# run a sample, every path still taken; the full sweeps run natively and
# under AddressSanitizer.  CHECK_QUICK=0 runs everything.
CHECK_QUICK=${CHECK_QUICK-1}
export CHECK_QUICK
TIMING_FAIL='FAIL: .* took [0-9.]+ s'
# Known reports in test code (not the library), until fixed: see the file.
SUPP=$here/known.supp

command -v valgrind >/dev/null || {
	echo "valgrind: not installed (apt-get install valgrind)"
	echo "valgrind: 0 passed, 1 failed"
	exit 1
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/bin" "$work/logs"
# Cases that drop to another user (compile-o-readonly-dir runs as nobody
# when root) still reach the wrappers and leave their logs.
chmod 755 "$work" "$work/bin"
chmod 1777 "$work/logs"
VG_REAL=$B VG_LOGS=$work/logs VG_SKIP=$SKIP_CASES VG_SAMPLE=$SAMPLE_CASES
VG_EVERY=$SAMPLE_EVERY VG_SUPP=$SUPP
export VG_REAL VG_LOGS VG_SKIP VG_SAMPLE VG_EVERY VG_SUPP
for prog in collc collrun; do
	cat >"$work/bin/$prog" <<WRAP
#!/bin/sh
# \$CASE is the case directory (tests/cli/run.sh sets it).
c=\$(basename "\${CASE:-none}")
case " \$VG_SKIP " in *" \$c "*) exec "\$VG_REAL/$prog" "\$@" ;; esac
case " \$VG_SAMPLE " in
*" \$c "*)
	# The case's programs run one after the other: a plain counter.
	n=\$(cat "\$VG_LOGS/.count.\$c" 2>/dev/null || echo 0)
	echo \$((n + 1)) >"\$VG_LOGS/.count.\$c"
	[ \$((n % VG_EVERY)) = 0 ] || exec "\$VG_REAL/$prog" "\$@" ;;
esac
exec valgrind --error-exitcode=99 --leak-check=full \\
    --errors-for-leak-kinds=definite --suppressions="\$VG_SUPP" \\
    --log-file="\$VG_LOGS/%p.log" "\$VG_REAL/$prog" "\$@"
WRAP
	chmod +x "$work/bin/$prog"
done

pass=0 fail=0
# The work, as tasks run two at a time (CHECK_JOBS: the CPUs), longest
# first: the CLI cases in four shards (SHARD=K/4 of tests/cli/run.sh), and
# each unit test on its own.  From the top, as tests/check.sh runs them
# (test_examples reads examples/).
cd "$top" || exit 1
jobs=${CHECK_JOBS:-$(nproc 2>/dev/null || echo 1)}
cat >"$work/unit.sh" <<'UNIT'
# unit.sh TEST WORK: one unit test under valgrind; its verdict in
# WORK/unit.NAME.res ("passed" or "failed"), its lines in WORK/unit.NAME.out
t=$1 work=$2 name=$(basename "$1")
s=$(date +%s)
valgrind --error-exitcode=99 --leak-check=full \
    --errors-for-leak-kinds=definite --suppressions="$VG_SUPP" \
    --log-file="$work/logs/%p.log" "$t" >"$work/unit.$name.log" 2>&1
st=$?
took=$(($(date +%s) - s))
fails=$(grep -E 'FAIL' "$work/unit.$name.log" | grep -Evc "$TIMING_FAIL")
if [ $st = 0 ] || { [ $st = 1 ] && [ "$fails" = 0 ]; }; then
	echo passed >"$work/unit.$name.res"
	{
		echo "valgrind: $name: passed, $took s"
		grep -E "$TIMING_FAIL" "$work/unit.$name.log" |
		    sed 's/^/  timing check ignored under valgrind: /'
	} >"$work/unit.$name.out"
else
	echo failed >"$work/unit.$name.res"
	{
		echo "FAIL $name under valgrind: exit status $st, $took s"
		tail -20 "$work/unit.$name.log"
	} >"$work/unit.$name.out"
fi
UNIT
cat >"$work/cli.sh" <<'CLI'
# cli.sh K WORK: shard K of the CLI cases
s=$(date +%s)
SHARD=$1/4 sh "$TOP/tests/cli/run.sh" "$2/bin" >"$2/cli.$1.out" 2>&1
echo $(($(date +%s) - s)) >"$2/cli.$1.took"
CLI
TIMING_FAIL=$TIMING_FAIL TOP=$top
export TIMING_FAIL TOP
t0=$(date +%s)
{
	for k in 0 1 2 3; do echo "cli $k"; done
	# the unit tests, the slowest under valgrind first
	for t in "$B"/tests/test_*; do
		[ -x "$t" ] || continue
		name=$(basename "$t")
		case " $SKIP_UNITS " in *" $name "*) continue ;; esac
		case $name in
		test_predict | test_reduce_scatter) w=3 ;;
		test_pset | test_allreduce | test_trees | test_sched) w=2 ;;
		*) w=1 ;;
		esac
		echo "$w $t"
	done | sort -k1,1nr -s | sed 's/^[0-9]* /unit /'
} | while read -r kind arg; do
	if [ "$kind" = cli ]; then
		printf 'sh\n%s\n%s\n%s\n' "$work/cli.sh" "$arg" "$work"
	else
		printf 'sh\n%s\n%s\n%s\n' "$work/unit.sh" "$arg" "$work"
	fi
done | xargs -d '\n' -n 4 -P "$jobs" sh -c '"$@"' sh
took=$(($(date +%s) - t0))

for t in "$B"/tests/test_*; do
	[ -x "$t" ] || continue
	name=$(basename "$t")
	case " $SKIP_UNITS " in *" $name "*) echo "valgrind: $name skipped"; continue ;; esac
	cat "$work/unit.$name.out" 2>/dev/null
	case $(cat "$work/unit.$name.res" 2>/dev/null) in
	passed) pass=$((pass + 1)) ;;
	*) fail=$((fail + 1)) ;;
	esac
done
for k in 0 1 2 3; do
	cat "$work/cli.$k.out"
	counts=$(sed -n 's/^cli: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$work/cli.$k.out")
	if [ -n "$counts" ]; then
		pass=$((pass + ${counts% *})) fail=$((fail + ${counts#* }))
	else
		fail=$((fail + 1))
	fi
	echo "valgrind: CLI cases, shard $k of 4, took $(cat "$work/cli.$k.took") s"
done
echo "valgrind: the whole took $took s on $jobs CPUs (1 run in $SAMPLE_EVERY under valgrind: $SAMPLE_CASES)"

# The logs: one per process valgrind ran.
procs=$(ls "$work/logs" | grep -c '\.log$')
errors=$(cat "$work/logs"/* 2>/dev/null |
    sed -n 's/.*ERROR SUMMARY: \([0-9,]*\) errors.*/\1/p' | tr -d , |
    awk '{s += $1} END {print s + 0}')
lost=$(cat "$work/logs"/* 2>/dev/null |
    sed -n 's/.*definitely lost: \([0-9,]*\) bytes.*/\1/p' | tr -d , |
    awk '{s += $1} END {print s + 0}')
echo "valgrind: $procs processes, errors: $errors, definitely lost: $lost bytes"
if [ "$errors" != 0 ] || [ "$lost" != 0 ]; then
	fail=$((fail + 1))
	for f in "$work/logs"/*; do
		if grep -q "ERROR SUMMARY: [1-9]" "$f" ||
		    grep -q "definitely lost: [1-9]" "$f"; then
			echo "FAIL valgrind report $(basename "$f"):"
			head -60 "$f"
		fi
	done
fi
echo "valgrind: $pass passed, $fail failed"
[ $fail = 0 ]
