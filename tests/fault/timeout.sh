#!/bin/sh
# tests/fault/timeout.sh BUILD - a replay past --timeout stops and reports.
#
# collrun bcast over 65,536 members (4,096 nodes x 16 tasks), 1 KiB each,
# for a million iterations would take hours; with --timeout 1 it must end
# at the deadline (not before it, and within 60 s of it: a bound on a run
# that goes on for hours, not on a loaded host's speed), exit 1, and report one
# error of kind "timeout" for the run as a whole, in text and in JSON,
# with fewer iterations than asked for.  Which phase the deadline fell in
# is not checked: it depends on the host's load.  The stop in
# the middle of an iteration, the workers joined and a failed delivery are
# tests/unit/test_fault.c's (a transport of its own can stall and fail).
# Prints "timeout: N passed, N failed".
B=$(cd "${1:?usage: timeout.sh BUILD}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

cat >"$work/mid.json" <<'EOF'
{
  "name": "mid",
  "nodes": 4096,
  "tasks_per_node": 16,
  "network": { "type": "torus", "dims": [16, 16, 16] }
}
EOF

now() { date +%s.%N; }

for threads in 2 8; do
	for fmt in text json; do
		name="bcast --threads $threads ($fmt)"
		opt=
		[ $fmt = json ] && opt=--json
		t0=$(now)
		"$B/collrun" bcast --bytes 1K --iterations 1000000 --timeout 1 \
		    --threads $threads $opt "$work/mid.json" >"$work/out" 2>"$work/err"
		st=$?
		t1=$(now)
		took=$(echo "$t1 $t0" | awk '{printf "%.2f", $1 - $2}')
		echo "$name: exit $st after $took s"
		if [ $st != 1 ]; then
			bad "$name: exit status $st, want 1"; head -5 "$work/err"
		else
			ok
		fi
		if awk -v t="$took" 'BEGIN { exit !(t >= 1 && t <= 61) }'; then ok; else
			bad "$name: took $took s, want 1 to 61 s (timeout 1 s + a hang bound of 60 s)"
		fi
		if [ -s "$work/err" ]; then
			bad "$name: standard error:"; head -5 "$work/err"
		else
			ok
		fi
		if [ $fmt = text ]; then
			if grep -q '^verified:    no, 1 error$' "$work/out" &&
			    grep -q '^  timeout: the run did not finish within 1 s (' "$work/out" &&
			    [ "$(grep -c '^  ' "$work/out")" = 1 ]; then ok; else
				bad "$name: report:"; cat "$work/out"
			fi
		else
			python3 - "$work/out" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
e = d["errors"]
ok = (d["verified"] is False and d["errors_total"] == 1 and len(e) == 1
      and e[0]["kind"] == "timeout" and e[0]["endpoint"] is None
      and e[0]["detail"].startswith("the run did not finish within 1 s (")
      and 0 <= d["iterations"] < 1000000 and d["timeout"] == 1)
sys.exit(0 if ok else 1)
EOF
			if [ $? = 0 ]; then ok; else bad "$name: report:"; cat "$work/out"; fi
		fi
	done
done

# --timeout bounds the whole run, whatever is running when it passes:
# planning (a bcast of 1 MiB in one-byte segments: 22 million messages),
# filling the inputs or an iteration (a reduce of 32 KiB over 65,536
# members), or many runs of --fresh.  Each used to run on for 12 s to
# 108 s and, for some, exit 0.  Now: exit 1 with the timeout message,
# which a run that went on to the end would not give; the time is bounded
# only against a hang (60 s past the deadline, so that a loaded host's
# stalls and the sanitizer's slowness never decide), and the phase is
# named only where it cannot depend on the load.
# Under AddressSanitizer the bcast's 1.1 GB message list alone takes
# 0.6 s to reserve and 0.45 s to free (its shadow written each time):
# planning looks at the clock after each reservation, so the run ends at
# 1.2 s, where it took 1.6-2.1 s when the first look came after 4096
# messages and 0.3 GB more of reservations and background page faults.
# The reduce's 2.2 GB of buffers are mappings of their own (libtopo(3)),
# not heap blocks whose shadow the sanitizer writes when they are freed:
# it ends 0.1 s after its deadline, where it took 0.7-1.1 s.
EX=$(cd "$(dirname "$0")/../../examples" && pwd)
timed() {  # timed NAME TIMEOUT WANT_PATTERN ARGS...: checks one run
	name=$1 limit=$2 want=$3
	shift 3
	t0=$(now)
	"$B/collrun" "$@" --timeout "$limit" >"$work/out" 2>"$work/err"
	st=$?
	took=$(echo "$(now) $t0" | awk '{printf "%.2f", $1 - $2}')
	echo "$name: exit $st after $took s"
	if [ $st != 1 ]; then
		bad "$name: exit status $st, want 1"; head -3 "$work/err"
	elif ! awk -v t="$took" -v l="$limit" 'BEGIN { exit !(t >= l && t <= l + 60) }'; then
		bad "$name: took $took s, want $limit s to $limit + 60 s"
	elif ! grep -q "$want" "$work/out" "$work/err"; then
		bad "$name: no \"$want\" in:"; cat "$work/out" "$work/err" | head -5
	else
		ok
	fi
}
timed "bcast in 1-byte segments" 0.5 \
    'the run did not finish within 0.5 s (planning: ' \
    bcast "$EX/uneven.json" --bytes 1M --segment 1
timed "reduce of 32 KiB over 65,536 members" 2 \
    'timeout: the run did not finish within 2 s (' \
    reduce "$work/mid.json" --bytes 32K
timed "20,000 fresh runs" 1 \
    'timeout: the run did not finish within 1 s (' \
    bcast "$EX/tiny.json" --fresh --iterations 20000
# Loading has no clock of its own in the library (reading the machine,
# building 8,388,608 endpoints' tree); a timer ends it at the deadline.
cat >"$work/big.json" <<'EOF'
{
  "name": "big",
  "nodes": 524288,
  "tasks_per_node": 16,
  "network": { "type": "torus", "dims": [32, 32, 32, 16] }
}
EOF
timed "loading 8,388,608 endpoints" 0.05 \
    'collrun: the run did not finish within 0.05 s (loading .*big.json)$' \
    bcast "$work/big.json"
if [ "$(wc -l <"$work/err")" = 1 ] && [ ! -s "$work/out" ]; then ok; else
	bad "loading: not one line, or a report:"; cat "$work/out" "$work/err" | head -5
fi

echo "timeout: $pass passed, $fail failed"
[ $fail = 0 ]
