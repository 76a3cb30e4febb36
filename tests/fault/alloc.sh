#!/bin/sh
# tests/fault/alloc.sh BUILD - allocation failure at every allocation site
# the programs reach.
#
# The test-only hook TOPO_FAIL_ALLOC=N (libtopo/alloc.c) makes the N-th
# allocation of the process (0-based; jansson's included) fail.  For each
# command below, N = 0, 1, 2, ... until the command succeeds; every failing
# run must
#   - exit 1 (not 2, not a signal) with stderr exactly one line
#     "PROG: ...out of memory..." (so no sanitizer report, no second line),
#   - print nothing on standard output,
#   - leave its scratch directory as it found it (no output file, no
#     .NAME.XXXXXX temporary),
# and every run that succeeds must give the same output as a run without
# the hook (collrun's timing lines aside).  The sweep ends after STREAK
# (default 10) successes in a row: an allocation whose failure is
# tolerated (a fallback that loses nothing) succeeds in the middle of the
# sweep without ending it.  Prints, per command, how many allocation sites
# were failed and how many tolerated, then "alloc: N passed, N failed"
# (one check per command and N).
#
# MAX_SITES (default 20000) bounds the search: reaching it fails the test.
# JOBS (default: online processors) sweeps run at once.
B=$(cd "${1:?usage: alloc.sh BUILD}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
EX=$top/examples
MAX_SITES=${MAX_SITES:-20000}
STREAK=${STREAK:-10}
JOBS=${JOBS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
m=$EX/uneven.json

# The compile output the replays and `collc dot` read: one tree per group
# keeps the sweeps of its loader (an allocation per JSON value) short.
"$B/collc" compile "$EX/tiny.json" -t physical -o "$work/routes.json" || {
	echo "FAIL: cannot compile $EX/tiny.json without the hook"
	echo "alloc: 0 passed, 1 failed"
	exit 1
}

# A machine whose first token is a 16-character key, and one with a name of
# 5000 characters: failures while jansson's lexer grows its token buffer
# (a dropped closing quote once ran jansson's copy off the heap).
printf '{"tasks_per_node": 2, "nodes": 4, "network": {"type": "kary", "fanout": 2}}' \
    >"$work/key16.json"
python3 -c '
import json, sys
json.dump({"name": "n" * 5000, "nodes": 3, "tasks_per_node": [1, 2, 3],
           "network": {"type": "tree", "parent": [-1, 0, 0]},
           "groups": {"g" * 300: "node " + ",".join(["0"] * 400)}},
          open(sys.argv[1], "w"))' "$work/long.json"
# A compile output with a hand-edited table in full, for the loader's
# departures.
"$B/collc" compile "$EX/tiny.json" -t physical --routes full \
    -o "$work/full.json" && python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
rows = d["groups"][0]["trees"][0]["routes"]
rows[0][2].append(rows[0][2][0])
del rows[1]
json.dump(d, open(sys.argv[1], "w"))' "$work/full.json"
# A host file for `collc import hostfile`, in the three syntaxes.
printf '# job\nn01 slots=2 max_slots=4\nn02:3\nn01\nn03\n' >"$work/job.hosts"

# Timing varies from run to run; everything else must match.
normalise() {
	grep -Ev '^seconds:|^ *"(min|median|max)": ' "$1"
}

# fresh DIR: DIR made anew with the two inputs the commands read.  A sweep
# keeps its directory from one failing run to the next while nothing is
# left in it (checked after every run) and makes it anew after any other
# run.
fresh() {
	rm -rf "$1"
	mkdir "$1"
	cp "$work/routes.json" "$work/full.json" "$1/"
}
# entries DIR: its entries, dot files too, sorted, each followed by a space
# (ls -A | tr '\n' ' ' without the two processes).  Called in a command
# substitution: the globbing it turns back on (the sweeps run under set -f)
# ends with it.
entries() {
	set +f
	out=
	for f in "$1"/.[!.]* "$1"/..?* "$1"/*; do
		[ -e "$f" ] || [ -L "$f" ] || continue
		out="$out${f##*/} "
	done
	printf '%s' "$out"
}
# sweep ID NAME PROG OUTFILE ARGS...: PROG is collc or collrun; OUTFILE
# the file the command writes in its directory ("-": standard output only).
# Writes its report to $work/ID.log and "PASS FAIL" to $work/ID.counts.
sweep() {
	id=$1
	sweep_one "$@" >"$work/$id.log" 2>&1
	echo "$pass $fail" >"$work/$id.counts"
}

sweep_one() {
	id=$1 name=$2 prog=$3 outfile=$4
	shift 4
	pass=0 fail=0
	ref=$work/$id.ref
	norm=$work/$id.norm
	rm -rf "$ref"
	mkdir "$ref"
	cp "$work/routes.json" "$work/full.json" "$ref/"
	(cd "$ref" && "$B/$prog" "$@" >.stdout 2>.stderr)
	st=$?
	if [ $st != 0 ]; then
		echo "FAIL $name: exits $st without the hook:"
		cat "$ref/.stderr"
		fail=$((fail + 1))
		return
	fi
	normalise "$ref/.stdout" >"$norm"
	n=0 failed=0 streak=0 tolerated=0 d=$work/$id.run
	fresh "$d"
	while [ $n -lt "$MAX_SITES" ]; do
		(cd "$d" && TOPO_FAIL_ALLOC=$n "$B/$prog" "$@" >.stdout 2>.stderr)
		st=$?
		n=$((n + 1))
		if [ $st = 0 ]; then
			# A success must be the unhooked run's result, whether the
			# N-th allocation was never reached or its failure was
			# tolerated (a fallback that loses nothing).
			why=
			if [ "$outfile" != - ] && ! cmp -s "$ref/$outfile" "$d/$outfile"; then
				why="$outfile differs from the unhooked run"
			elif ! normalise "$d/.stdout" | cmp -s "$norm" -; then
				why="standard output differs from the unhooked run"
			elif ! cmp -s "$ref/.stderr" "$d/.stderr"; then
				why="standard error differs from the unhooked run"
			fi
			if [ -n "$why" ]; then
				echo "FAIL $name: N=$((n - 1)): exit 0 but $why:"
				normalise "$d/.stdout" | diff "$norm" - | head -10
				head -5 "$d/.stderr"
				fail=$((fail + 1))
			else
				pass=$((pass + 1))
			fi
			fresh "$d"
			streak=$((streak + 1))
			[ $streak -ge "$STREAK" ] && break
			continue
		fi
		# Successes followed by a failure were tolerated sites.
		tolerated=$((tolerated + streak))
		streak=0
		failed=$((failed + 1))
		why=
		# Shell builtins only (a process costs 10 ms or more on some CI
		# machines, and a sweep runs thousands): the lines of stderr
		# (as wc -l counts them: a last line without its newline is
		# not one), the first one's text, the directory's entries.
		lines=0 first=
		while IFS= read -r line; do
			[ $lines = 0 ] && first=$line
			lines=$((lines + 1))
		done <"$d/.stderr"
		if [ $st != 1 ]; then
			why="exit status $st, want 1"
		elif [ "$lines" != 1 ]; then
			why="$lines lines on standard error, want 1"
		else
			case $first in
			"$prog: "*"out of memory"*) ;;
			*) why="the message does not say out of memory" ;;
			esac
		fi
		if [ -z "$why" ] && [ -s "$d/.stdout" ]; then
			why="it printed on standard output"
		fi
		if [ -z "$why" ]; then
			left=$(entries "$d")
			[ "$left" = ".stderr .stdout full.json routes.json " ] ||
				why="it left files behind: $left"
		fi
		if [ -n "$why" ]; then
			echo "FAIL $name: N=$((n - 1)): $why:"
			head -20 "$d/.stderr"
			fail=$((fail + 1))
			fresh "$d"
		else
			pass=$((pass + 1))
		fi
	done
	if [ $streak -lt "$STREAK" ]; then
		echo "FAIL $name: still failing at N=$MAX_SITES (MAX_SITES)"
		fail=$((fail + 1))
	fi
	echo "$name: $failed allocation sites failed, $tolerated tolerated"
}

# The sweeps, JOBS at a time; their reports in this order.
set -- \
	"collc compile|collc|out.json|compile|$m|--routes|full|-g|odd=cols 1::2|-o|out.json" \
	"collc compile rule|collc|out.json|compile|$m|-o|out.json" \
	"collc compile key16|collc|-|compile|$work/key16.json|-t|chain" \
	"collc compile long|collc|-|compile|$work/long.json|-t|physical" \
	"collc routes departures|collc|-|routes|full.json|--departures" \
	"collc routes rule|collc|-|routes|routes.json|-g|world|--member|3" \
	"collc group|collc|-|group|$m|cols 0::2 - node 2" \
	"collc group hosts|collc|-|group|$EX/named.json|hosts dev[01-03] - hosts dev02" \
	"collc import hostfile|collc|out.json|import|hostfile|$work/job.hosts|-o|out.json" \
	"collc dot named|collc|-|dot|$EX/named.json|-g|rack-2" \
	"collc dot|collc|out.dot|dot|$m|-t|binomial|-o|out.dot" \
	"collc dot routes|collc|-|dot|routes.json|-g|even-tasks" \
	"collc dot --nodes|collc|out.dot|dot|$m|-t|binomial|--nodes|-o|out.dot" \
	"collrun bcast|collrun|-|bcast|--threads|2|--bytes|64|$m" \
	"collrun scatter|collrun|-|scatter|--threads|2|--bytes|64|$m" \
	"collrun gather|collrun|-|gather|--threads|2|--bytes|64|$m" \
	"collrun reduce|collrun|-|reduce|--threads|2|--bytes|64|$m" \
	"collrun reduce lanes|collrun|-|reduce|--threads|2|--bytes|64K|$m" \
	"collrun bcast routes|collrun|-|bcast|--threads|2|--root|5|routes.json" \
	"collrun gather routes json|collrun|-|gather|--threads|2|--json|routes.json"
# JOBS lanes, each taking the next sweep nobody has taken (mkdir claims
# it: atomic), so that a long sweep does not hold up the others.
lane() {
	k=0
	for spec in "$@"; do
		k=$((k + 1))
		mkdir "$work/claim.$k" 2>/dev/null || continue
		(
			IFS='|'
			# shellcheck disable=SC2086
			set -f -- $spec
			sweep "$k" "$@"
		)
	done
}
i=$#
l=0
while [ $l -lt "$JOBS" ]; do
	l=$((l + 1))
	lane "$@" &
done
wait
pass=0 fail=0
j=0
while [ $j -lt $i ]; do
	j=$((j + 1))
	cat "$work/$j.log"
	read -r p f <"$work/$j.counts" || { p=0 f=1; }
	pass=$((pass + p)) fail=$((fail + f))
done
echo "alloc: $pass passed, $fail failed"
[ $fail = 0 ]
