#!/bin/sh
# tests/man/lint.sh [MANDIR] - checks every man page MANDIR/*.[1-8]
# (default: man/ at the top of the tree).
#
# A page passes when `mandoc -T lint -W warning` prints nothing about it and
# every page its SEE ALSO section references (.Xr NAME SECTION) exists in
# MANDIR, or is one of the external pages listed in EXTERNAL below.  Prints
# "ok PAGE" or "FAIL PAGE" with the reasons, then one closing line
# "man: N passed, N failed" (one count per page).  Exit status 1 if any page
# failed, or if there is no page at all.
#
# When a page starts referencing another program's or library's manual,
# add it to EXTERNAL; a reference to one of our own pages must be a file.

EXTERNAL="dot.1 jq.1 mpirun.1 pkg-config.1 cc.1 mandoc.1 fclose.3"

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
mandir=${1:-$top/man}
pass=0 fail=0

if ! command -v mandoc >/dev/null 2>&1; then
	echo "FAIL mandoc is not installed (make deps installs it)"
	echo "man: 0 passed, 1 failed"
	exit 1
fi

# Prints the NAME.SECTION of every .Xr in the SEE ALSO section of a page,
# one per line.  Handles several Xr on one line (".Xr a 1 , Xr b 5").
see_also() {
	awk '
	/^\.Sh[ \t]/ { in_see = ($0 ~ /^\.Sh[ \t]+"?SEE ALSO"?[ \t]*$/); next }
	in_see {
		n = split($0, tok, /[ \t]+/)
		for (i = 1; i + 2 <= n; i++)
			if (tok[i] == ".Xr" || tok[i] == "Xr")
				print tok[i + 1] "." tok[i + 2]
	}' "$1"
}

found=0
for page in "$mandir"/*.[1-8]; do
	[ -f "$page" ] || continue
	found=1
	name=$(basename "$page")
	problems=$(mandoc -T lint -W warning "$page" 2>&1 | grep -v 'mandoc\.db')
	status=$?
	# grep -v exits 1 when it printed nothing: that is the good case.
	[ $status -le 1 ] || problems="cannot run mandoc on $page"
	for ref in $(see_also "$page"); do
		[ -f "$mandir/$ref" ] && continue
		case " $EXTERNAL " in
		*" $ref "*) continue ;;
		esac
		problems="${problems:+$problems
}$name: SEE ALSO references $ref, which is not in $mandir and not listed as external"
	done
	if [ -z "$problems" ]; then
		echo "ok $name"
		pass=$((pass + 1))
	else
		echo "FAIL $name"
		printf '%s\n' "$problems" | sed 's/^/    /'
		fail=$((fail + 1))
	fi
done

if [ $found = 0 ]; then
	echo "FAIL no man pages in $mandir"
	fail=$((fail + 1))
fi
echo "man: $pass passed, $fail failed"
[ $fail = 0 ]
