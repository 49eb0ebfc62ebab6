#!/bin/sh
# bench/hosts/lib.sh without namespaces (no root needed): hosts_kill_tree
# kills every process under a PID, the intermediate ones too (a shell that
# would run on once its child is killed), and hosts_remove with nothing
# made removes nothing and succeeds.
set -eu
srcdir=${top_srcdir:-.}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hosts-lib.XXXXXX")
# Whatever is left of the tree (the test failed): its processes by their
# ids, each stopped first so that it starts no child meanwhile.
cleanup() {
    for p in $(cat "$tmp"/pid.* 2>/dev/null); do
        kill -STOP "$p" 2>/dev/null || true
        pkill -KILL -P "$p" 2>/dev/null || true
        kill -KILL "$p" 2>/dev/null || true
    done
    rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
fail() {
    echo "FAIL: $*" >&2
    exit 1
}
cannot() {
    fail "cannot called: $*"
}
# shellcheck source=bench/hosts/lib.sh
. "$srcdir/bench/hosts/lib.sh"

# A tree of three levels under a process of our own: the middle shell runs a
# second sleep once the first is killed, so only a kill of the middle one
# itself stops it.
sh -c 'echo $$ > "$1/pid.top"; sh -c "echo \$\$ > \"$1/pid.mid\"; sleep 60; sleep 60" & wait' sh "$tmp" &
top=$!
n=0
while [ ! -s "$tmp/pid.mid" ] || ! pgrep -P "$(cat "$tmp/pid.mid")" sleep >/dev/null 2>&1; do
    n=$((n + 1))
    [ "$n" -le 100 ] || fail "the process tree did not start"
    sleep 0.1
done
mid=$(cat "$tmp/pid.mid")
hosts_kill_tree "$top"
kill -KILL "$top" 2>/dev/null || true
wait "$top" 2>/dev/null || true
# A killed process ends when it is next scheduled: on a loaded machine
# that may take a while, so wait up to 10 s for the middle one to be gone
# (or a zombie).
alive() {
    kill -0 "$1" 2>/dev/null && [ "Z" != "$(ps -o stat= -p "$1" | cut -c1)" ]
}
n=0
while alive "$mid" && [ "$n" -lt 100 ]; do
    n=$((n + 1))
    sleep 0.1
done
alive "$mid" && fail "hosts_kill_tree left the middle process $mid running"
hosts_remove || fail "hosts_remove with nothing made"
echo "hosts_lib: the process tree killed at every level"
