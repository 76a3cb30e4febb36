# exports.awk - prints the public functions (and objects) of topo.h, one
# name per line, in header order: every declaration that starts a line
# with TOPO_EXTERN.  `awk -f libtopo/exports.awk libtopo/topo.h`.
#
# The Makefile installs a man page link per name from this list, and
# tests/abi/run.sh compares it with the functions the compiler sees
# declared in topo.h, the shared library's exports, libtopo/libtopo.map and
# libtopo(3), so that none of them can drift from the header.
/^TOPO_EXTERN[ \t]/ { decl = ""; collecting = 1 }
collecting {
	decl = decl " " $0
	if (index($0, ";") == 0)
		next
	collecting = 0
	# A function: the identifier before the first "(".  An object: the
	# last identifier before ";" or "[".
	if (match(decl, /[A-Za-z_][A-Za-z0-9_]*[ \t]*\(/)) {
		name = substr(decl, RSTART, RLENGTH)
	} else {
		sub(/[ \t]*(\[.*)?;.*$/, "", decl)
		match(decl, /[A-Za-z_][A-Za-z0-9_]*$/)
		name = substr(decl, RSTART, RLENGTH)
	}
	sub(/[ \t]*\($/, "", name)
	print name
}
