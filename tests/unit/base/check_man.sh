#!/bin/sh
# The omnibatch(7) man page lists every variable of the configuration page's
# table, docs/configuration.md (both come from src/base/config.c's table),
# and groff formats it without a warning.
set -eu
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
man=$top_builddir/docs/omnibatch.7
page=$top_srcdir/docs/configuration.md
[ -f "$man" ] || { echo "check_man: $man is not built" >&2; exit 1; }
[ -f "$page" ] || { echo "check_man: $page is missing" >&2; exit 1; }
names=$(sed -n 's/^| `\(OMNIBATCH_[A-Z0-9_]*\)` |.*/\1/p' "$page")
[ -n "$names" ] || { echo "check_man: no configuration table in $page" >&2; exit 1; }
n=0
for v in $names; do
    grep -qx "\.B $v" "$man" || { echo "check_man: $v is in $page but not in omnibatch(7)" >&2; exit 1; }
    n=$((n + 1))
done
entries=$(grep -c '^\.B OMNIBATCH_' "$man")
[ "$entries" -eq "$n" ] || { echo "check_man: omnibatch(7) has $entries variables, $page $n" >&2; exit 1; }
if command -v groff >/dev/null 2>&1; then
    warnings=$(groff -man -ww -z "$man" 2>&1)
    [ -z "$warnings" ] || { echo "check_man: groff warns:" >&2; echo "$warnings" >&2; exit 1; }
else
    echo "check_man: no groff: the page's formatting is not checked"
fi
echo "check_man: omnibatch(7) documents the $n variables of $page"
