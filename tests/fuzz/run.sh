#!/bin/sh
# tests/fuzz/run.sh BUILD SECONDS [TARGET...] - fuzzes each target (default:
# machine spec routes) for SECONDS with BUILD/fuzz/fuzz_TARGET.
#
# The committed corpus (tests/fuzz/corpus/TARGET) and regression inputs
# (tests/fuzz/regress/TARGET) are copied to BUILD/fuzz/work/TARGET/corpus,
# which the run grows, so the repository's corpus stays as committed.  The
# log is BUILD/fuzz/work/TARGET/log; a crash, leak, timeout or out-of-memory
# input is written to BUILD/fuzz/work/TARGET/artifacts/.  Prints one summary
# line per target (libFuzzer's final statistics) and fails if any target
# found something.  FUZZ_FLAGS adds libFuzzer options (e.g. -jobs=2).
B=${1:?usage: run.sh BUILD SECONDS [TARGET...]}
secs=${2:?usage: run.sh BUILD SECONDS [TARGET...]}
shift 2
here=$(cd "$(dirname "$0")" && pwd)
targets=${*:-machine spec routes}
failed=""
for t in $targets; do
	case $t in
	machine) max_len=16384 ;;
	spec) max_len=1024 ;;
	routes) max_len=65536 ;;
	*) echo "run.sh: unknown target $t" >&2; exit 2 ;;
	esac
	bin=$B/fuzz/fuzz_$t
	work=$B/fuzz/work/$t
	rm -rf "$work"
	mkdir -p "$work/corpus" "$work/artifacts"
	cp "$here/corpus/$t"/* "$work/corpus/"
	for f in "$here/regress/$t"/*; do
		[ -f "$f" ] && cp "$f" "$work/corpus/regress-$(basename "$f")"
	done
	seeds=$(ls "$work/corpus" | wc -l)
	# shellcheck disable=SC2086
	"$bin" -max_total_time="$secs" -max_len=$max_len -timeout=10 \
	    -rss_limit_mb=2048 -dict="$here/$t.dict" -print_final_stats=1 \
	    -artifact_prefix="$work/artifacts/" $FUZZ_FLAGS "$work/corpus" \
	    >"$work/log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log")
	last=$(grep -E '^#[0-9]+' "$work/log" | tail -1)
	cov=$(echo "$last" | grep -oE 'cov: [0-9]+ ft: [0-9]+')
	corp=$(ls "$work/corpus" | wc -l)
	echo "fuzz_$t: ${runs:-?} runs in ${secs} s, ${cov:-cov: ?}, corpus $seeds -> $corp files"
	if [ $rc != 0 ] || [ -n "$(ls "$work/artifacts")" ]; then
		echo "FAIL fuzz_$t (exit $rc); log $work/log:"
		grep -E 'ERROR|SUMMARY|check failed|runtime error|Test unit written|timeout|out-of-memory' \
		    "$work/log" | head -20
		for a in "$work/artifacts"/*; do
			[ -f "$a" ] || continue
			echo "  reproducer: $a"
			echo "  replay:   $bin $a"
			echo "  minimise: $bin -minimize_crash=1 -runs=100000 -exact_artifact_path=tests/fuzz/regress/$t/NAME $a"
		done
		failed="$failed $t"
	fi
done
if [ -n "$failed" ]; then
	echo "fuzz: failed:$failed"
	exit 1
fi
echo "fuzz: $(echo $targets | wc -w) passed, 0 failed"
