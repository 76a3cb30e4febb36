#!/bin/sh
# tests/fault/output.sh BUILD - output faults: a full device, an unwritable
# directory, a directory in the way, a file size limit and (where a tmpfs
# can be mounted) a file system that fills up midway.  Every failure must
# exit 1 with one line naming the output and the system's reason, leave an
# existing output byte-identical and leave no temporary file.  The cases
# that write run twice: through an unnamed O_TMPFILE file, and through the
# named .NAME.XXXXXX of file systems without it (COLLC_TEST_NO_TMPFILE=1).
# Prints "output: N passed, N failed" (and why a case was skipped).
B=$(cd "${1:?usage: output.sh BUILD}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
EX=$top/examples
work=$(mktemp -d)
mnt=
cleanup() {
	[ -n "$mnt" ] && umount "$mnt" 2>/dev/null
	chmod -R u+w "$work" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
pass=0 fail=0

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

# expect NAME STATUS STDERR: compares the last run (status $st, standard
# error in $work/err) with what is wanted.
expect() {
	if [ "$st" != "$2" ]; then
		bad "$1: exit status $st, want $2"; sed 's/^/  /' "$work/err"
	elif [ "$(cat "$work/err")" != "$3" ]; then
		bad "$1: standard error:"; sed 's/^/  got:  /' "$work/err"
		echo "  want: $3"
	else
		ok
	fi
}

# untouched NAME DIR: DIR holds only out.json, still "old output".
untouched() {
	if [ "$(cat "$2/out.json" 2>/dev/null)" != "old output" ]; then
		bad "$1: the existing $2/out.json was changed"
	elif [ "$(ls -A "$2" | tr '\n' ' ')" != "out.json " ]; then
		bad "$1: files left in $2: $(ls -A "$2" | tr '\n' ' ')"
	else
		ok
	fi
}

fresh() {  # fresh DIR: DIR with out.json = "old output"
	rm -rf "$1"
	mkdir -p "$1"
	echo "old output" >"$1/out.json"
}

# 1. /dev/full, as -o (written in place: it is a device) and as standard
# output.  /dev/full must still be the device afterwards.
for cmd in compile dot; do
	"$B/collc" $cmd "$EX/tiny.json" -o /dev/full 2>"$work/err"
	st=$?
	expect "collc $cmd -o /dev/full" 1 \
	    "collc: /dev/full: cannot write: No space left on device"
	if [ -c /dev/full ]; then ok; else bad "/dev/full is no longer a character device"; fi
done
for run in "collc compile $EX/tiny.json" "collc group $EX/tiny.json all" \
	"collc dot $EX/tiny.json" "collrun bcast $EX/tiny.json" \
	"collrun gather --json $EX/tiny.json"; do
	prog=${run%% *}
	# shellcheck disable=SC2086
	"$B/$prog" ${run#* } >/dev/full 2>"$work/err"
	st=$?
	expect "$run >/dev/full" 1 \
	    "$prog: standard output: cannot write: No space left on device"
done

# 2. A directory nobody may write to.  root writes anywhere, so as root the
# program runs as user nobody (setpriv, else su).
d=$work/ro
fresh "$d"
chmod 0755 "$work"
chmod 0555 "$d"
as_user=
if [ "$(id -u)" != 0 ]; then
	as_user=" "
elif command -v setpriv >/dev/null && id nobody >/dev/null 2>&1; then
	as_user="setpriv --reuid=$(id -u nobody) --regid=$(id -g nobody) --clear-groups"
elif command -v su >/dev/null && id nobody >/dev/null 2>&1; then
	as_user=su
fi
if [ -z "$as_user" ]; then
	echo "skipped: unwritable directory (running as root, and neither setpriv nor su can switch to user nobody)"
else
	for cmd in compile dot; do
		if [ "$as_user" = su ]; then
			su nobody -s /bin/sh -c "cd '$work' && '$B/collc' $cmd '$EX/tiny.json' -o ro/out.json" 2>"$work/err"
		else
			# shellcheck disable=SC2086
			(cd "$work" && $as_user "$B/collc" $cmd "$EX/tiny.json" -o ro/out.json) 2>"$work/err"
		fi
		st=$?
		expect "collc $cmd -o into a read-only directory" 1 \
		    "collc: ro/out.json: cannot write: cannot create a file in directory \"ro\": Permission denied"
		untouched "collc $cmd -o into a read-only directory" "$d"
	done
fi
chmod 0755 "$d"

# 3. A directory where the output should go: left as it is.
mkdir "$work/adir"
(cd "$work" && "$B/collc" compile "$EX/tiny.json" -o adir) 2>"$work/err"
st=$?
expect "collc compile -o DIRECTORY" 1 "collc: adir: cannot write: Is a directory"
if [ -d "$work/adir" ] && [ -z "$(ls -A "$work/adir")" ] &&
    [ "$(ls -A "$work" | grep -c '^\.adir\.')" = 0 ]; then ok; else
	bad "collc compile -o DIRECTORY: the directory changed or a temporary file was left"
fi

# 4. The file size limit (ulimit -f 1: 512 or 1024 bytes, whichever the
# shell counts in): the write fails with EFBIG (collc ignores SIGXFSZ,
# which would otherwise kill it before it could clean up) after part of
# the output reached the temporary file.
for named in 0 1; do
for cmd in "compile $EX/uneven.json --routes full" "dot $EX/uneven.json -t binomial"; do
	d=$work/fsize
	fresh "$d"
	# shellcheck disable=SC2086
	(cd "$d" && ulimit -f 1 && COLLC_TEST_NO_TMPFILE=$named exec "$B/collc" $cmd -o out.json) 2>"$work/err"
	st=$?
	expect "collc ${cmd%% *} past ulimit -f ($named)" 1 "collc: out.json: cannot write: File too large"
	untouched "collc ${cmd%% *} past ulimit -f ($named)" "$d"
done
done

# 5. A file system that fills up midway: an 8 KiB tmpfs, a page of which
# the existing output takes (both outputs of endpoints.json are larger).
# Needs the right to mount, so as root only.
d=$work/small
mkdir "$d"
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=8k tmpfs "$d" 2>/dev/null; then
	mnt=$d
	for named in 0 1; do
	for cmd in "compile $EX/endpoints.json --routes full" "dot $EX/endpoints.json -t binomial"; do
		rm -f "$d"/* "$d"/.[!.]* 2>/dev/null
		echo "old output" >"$d/out.json"
		# shellcheck disable=SC2086
		(cd "$d" && COLLC_TEST_NO_TMPFILE=$named "$B/collc" $cmd -o out.json) 2>"$work/err"
		st=$?
		expect "collc ${cmd%% *} onto a full file system ($named)" 1 \
		    "collc: out.json: cannot write: No space left on device"
		untouched "collc ${cmd%% *} onto a full file system ($named)" "$d"
	done
	done
	umount "$d" && mnt=
else
	echo "skipped: full file system (cannot mount a tmpfs: needs root and CAP_SYS_ADMIN)"
fi

echo "output: $pass passed, $fail failed"
[ $fail = 0 ]
