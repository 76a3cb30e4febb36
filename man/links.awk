# links.awk - prints "FUNCTION PAGE" for every function in the SYNOPSIS of
# the libtopo(3) family pages, one pair a line:
#   awk -f man/links.awk man/libtopo-*.3
# `make install` makes a man page link FUNCTION.3 to PAGE for each, so that
# `man topo_plan_run` shows the page that documents the function, and
# tests/abi/run.sh checks that the pages together name every function of
# topo.h once.
FNR == 1 { page = FILENAME; sub(/.*\//, "", page) }
/^\.Sh / { sec = $2 }
sec == "SYNOPSIS" && /^\.F[on] / { print $2, page }
