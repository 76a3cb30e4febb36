#!/bin/sh
# tests/fuzz/regress.sh BUILD - replays every committed corpus file and
# every regression input (tests/fuzz/{corpus,regress}/TARGET/*) once through
# BUILD/fuzz/fuzz_TARGET, without fuzzing.  A crash, leak, broken check or
# timeout fails it; the log is BUILD/fuzz/regress-TARGET.log.
B=${1:?usage: regress.sh BUILD}
here=$(cd "$(dirname "$0")" && pwd)
pass=0 fail=0
for t in machine spec routes; do
	files=$(find "$here/corpus/$t" "$here/regress/$t" -type f 2>/dev/null | sort)
	n=$(echo "$files" | grep -c .)
	log=$B/fuzz/regress-$t.log
	# shellcheck disable=SC2086
	if "$B/fuzz/fuzz_$t" -timeout=10 -rss_limit_mb=2048 $files >"$log" 2>&1; then
		echo "fuzz_$t: $n inputs replayed"
		pass=$((pass + 1))
	else
		echo "FAIL fuzz_$t: see $log"
		grep -E 'Running:|ERROR|SUMMARY|check failed|runtime error' "$log" | tail -8
		fail=$((fail + 1))
	fi
done
echo "fuzz-regress: $pass passed, $fail failed"
[ $fail = 0 ]
