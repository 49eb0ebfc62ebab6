# shellcheck shell=sh
# bench/hosts/lib.sh: several hosts on one machine, made of network
# namespaces, for the scripts that measure across hosts (bench/hosts/run.sh,
# bench/probe/run.sh).  Sourced, not run.
#
# Host obhostI is a network namespace joined by a veth pair to a bridge of
# its own, with address S.(I+1) on a private /24 S.0 nobody on this machine
# uses, entered with its own host name (a UTS namespace) and its own
# /etc/hosts naming every host (a mount namespace).  Open MPI is launched
# across them over TCP: mpirun runs as host 0, and its rsh agent is a small
# script that enters the namespace of the host named.
#
# The sourcing script defines `cannot REASON` (say that the hosts cannot be
# made, and exit) and calls, in this order:
#   hosts_can_make MPIRUN   root, and the tools (ip, unshare, tc, timeout, MPIRUN)
#   hosts_make N WORK TAG   N hosts (1 to 9); WORK is the caller's directory
#                           (the hosts file and the two scripts go there);
#                           TAG names the links and namespaces (TAG-I, TAGvI,
#                           TAGbr), at most 10 characters, unique to the run
#                           (e.g. a prefix and $$)
#   hosts_mpirun LIMIT NP MPIRUN ARGS...
#                           MPIRUN as host 0, NP ranks on hosts 0..NP-1, one
#                           each, over TCP on the hosts' /24 only; killed
#                           after LIMIT seconds
#   hosts_mpirun_on LIMIT LIST NP MPIRUN ARGS...
#                           the same on LIST, Open MPI's --host form with
#                           slots (obhost0:2,obhost1:2): several ranks a host
#   hosts_hydra_on LIMIT LIST NP MPIEXEC ARGS...
#                           the same with MPICH's mpiexec (hydra): LIST as
#                           hydra's -hosts takes it (obhost0:1,obhost1:2),
#                           its rsh launcher the same script, UCX over the
#                           hosts' eth0 (TCP) and shared memory on a host
#   hosts_remove            from the caller's EXIT trap, also on failure:
#                           every process of ours in the namespaces, the
#                           namespaces, the links and the bridge
# and may read hosts_subnet (S), hosts_ns I (host I's namespace) and
# hosts_port I (the bridge's end of host I's link, where tc shapes what
# goes to the host).  hosts_kill_tree PID kills what PID started, deepest
# first (a run cut short by a signal).

hosts_made_ns=""
hosts_made_br=""
hosts_made_ports=""
hosts_tag=""
hosts_subnet=""
hosts_work=""

hosts_ns() {
    echo "${hosts_tag}-$1"
}
hosts_port() {
    echo "${hosts_tag}v$1"
}

# The functions' own variables start with _h: the shell has no local ones.

hosts_can_make() {
    [ 0 = "$(id -u)" ] || cannot "not root"
    for _htool in ip unshare tc "$1" timeout; do
        command -v "$_htool" >/dev/null 2>&1 || cannot "no $_htool"
    done
}

# The children's list in the positional parameters, which are the
# function's own: a loop variable would be overwritten by the recursion.
# Each child is stopped before its own children are listed, so that it
# cannot start another one (a shell running its next command) meanwhile.
hosts_kill_tree() {
    # shellcheck disable=SC2046
    set -- $(cat /proc/"$1"/task/*/children 2>/dev/null)
    while [ $# -gt 0 ]; do
        kill -STOP "$1" 2>/dev/null || true
        hosts_kill_tree "$1"
        kill -KILL "$1" 2>/dev/null || true
        shift
    done
}

hosts_remove() {
    for _hns in $hosts_made_ns; do
        # Processes of ours still in our namespaces (a run cut short).
        for _hpid in $(ip netns pids "$_hns" 2>/dev/null); do
            kill -KILL "$_hpid" 2>/dev/null || true
        done
        ip netns del "$_hns" 2>/dev/null || true
    done
    hosts_made_ns=""
    # The kernel frees a deleted namespace's links later (its cleanup runs
    # after the last reference goes): this side of each pair went on being
    # listed after the namespace was gone.  Deleting it takes both ends now.
    for _hport in $hosts_made_ports; do
        ip link del "$_hport" 2>/dev/null || true
    done
    hosts_made_ports=""
    if [ -n "$hosts_made_br" ]; then ip link del "$hosts_made_br" 2>/dev/null || true; fi
    hosts_made_br=""
}

# A private /24 nobody on this machine uses: 10.213.K.0/24.
hosts_pick_subnet() {
    for _hk in 47 93 141 187 233; do
        if ! ip -4 -o addr show 2>/dev/null | grep -q " 10\.213\.$_hk\." \
            && ! ip -4 route show 2>/dev/null | grep -q "10\.213\.$_hk\."; then
            hosts_subnet=10.213.$_hk
            return 0
        fi
    done
    cannot "no free private /24 among 10.213.{47,93,141,187,233}.0/24"
}

# hosts_add_one I: host I's namespace, its link to the bridge, its address.
hosts_add_one() {
    _hns=$(hosts_ns "$1")
    ip netns add "$_hns" 2>/dev/null || cannot "ip netns add failed"
    hosts_made_ns="$hosts_made_ns $_hns"
    ip link add "$(hosts_port "$1")" type veth peer name "${hosts_tag}p$1" || cannot "ip link add type veth failed"
    hosts_made_ports="$hosts_made_ports $(hosts_port "$1")"
    ip link set "${hosts_tag}p$1" netns "$_hns"
    ip link set "$(hosts_port "$1")" master "$hosts_made_br"
    ip link set "$(hosts_port "$1")" up
    ip -n "$_hns" link set lo up
    ip -n "$_hns" link set "${hosts_tag}p$1" name eth0
    ip -n "$_hns" addr add "$hosts_subnet.$(($1 + 1))/24" dev eth0
    ip -n "$_hns" link set eth0 up
    printf '%s obhost%d\n' "$hosts_subnet.$(($1 + 1))" "$1" >> "$hosts_work/hosts"
}

# The bridge may pass frames through the host's firewall (br_netfilter):
# check that the last host is reached over TCP before anything is measured.
hosts_check_reach() {
    _hpy=/usr/bin/python3
    [ -x "$_hpy" ] || return 0
    ip netns exec "$(hosts_ns $(($1 - 1)))" "$_hpy" -c '
import socket, sys
s = socket.socket(); s.settimeout(8); s.bind((sys.argv[1], 47999)); s.listen(1)
c, _ = s.accept(); c.sendall(b"ok"); c.close()' "$hosts_subnet.$1" >/dev/null 2>&1 &
    _hpid=$!
    sleep 1
    if ! ip netns exec "$(hosts_ns 0)" "$_hpy" -c '
import socket, sys
s = socket.create_connection((sys.argv[1], 47999), timeout=5); assert s.recv(2) == b"ok"' \
        "$hosts_subnet.$1" >/dev/null 2>&1; then
        kill "$_hpid" 2>/dev/null || true
        cannot "the namespaces do not reach each other over the bridge (a firewall on bridged traffic?)"
    fi
    wait "$_hpid" 2>/dev/null || true
}

# The two scripts: enter (run a command as host I: its namespace, its host
# name, its /etc/hosts) and rsh (Open MPI's agent: "rsh HOST COMMAND", the
# command one shell string).
hosts_write_scripts() {
    cat > "$hosts_work/enter" <<EOF
#!/bin/sh
# enter I CMD...: run CMD on host obhostI (its netns, UTS and mount namespace).
i=\$1; shift
exec ip netns exec "${hosts_tag}-\$i" unshare --uts --mount sh -c \
    'mount --bind "$hosts_work/hosts" /etc/hosts && hostname "obhost\$0" && exec "\$@"' "\$i" "\$@"
EOF
    cat > "$hosts_work/rsh" <<EOF
#!/bin/sh
host=\$1; shift
case \$host in
obhost[0-9]) ;;
*) echo "hosts rsh: unknown host '\$host'" >&2; exit 1 ;;
esac
exec "$hosts_work/enter" "\${host#obhost}" sh -c "\$*"
EOF
    chmod +x "$hosts_work/enter" "$hosts_work/rsh"
}

hosts_make() {
    hosts_work=$2
    hosts_tag=$3
    hosts_pick_subnet
    hosts_made_br=${hosts_tag}br
    ip link add "$hosts_made_br" type bridge 2>/dev/null || { hosts_made_br=""; cannot "ip link add type bridge failed"; }
    ip link set "$hosts_made_br" up
    printf '127.0.0.1 localhost\n' > "$hosts_work/hosts"
    _hi=0
    while [ "$_hi" -lt "$1" ]; do
        hosts_add_one "$_hi"
        _hi=$((_hi + 1))
    done
    ip netns exec "$(hosts_ns 0)" unshare --uts --mount true 2>/dev/null || cannot "unshare --uts --mount failed"
    hosts_check_reach "$1"
    hosts_write_scripts
}

# In the background and waited for, so that a signal to the caller is acted
# on at once (the shell runs a trap only after a foreground command ends).
hosts_mpirun() {
    _hi=0
    _hlist=
    while [ "$_hi" -lt "$2" ]; do
        _hlist="$_hlist${_hlist:+,}obhost$_hi:1"
        _hi=$((_hi + 1))
    done
    _hlimit=$1
    shift
    hosts_mpirun_on "$_hlimit" "$_hlist" "$@"
}

# hosts_mpirun_on LIMIT LIST NP MPIRUN ARGS...: the same with the hosts and
# their slots in Open MPI's --host form (obhost0:2,obhost1:1), NP ranks
# filling them in order; --oversubscribe, so that two ranks on a host of a
# 2-core machine may share its cores.
hosts_mpirun_on() {
    _hlimit=$1
    _hlist=$2
    _hnp=$3
    _hlauncher=$4
    shift 4
    timeout --signal=TERM --kill-after=10 "$_hlimit" "$hosts_work/enter" 0 \
        "$_hlauncher" -np "$_hnp" --host "$_hlist" --allow-run-as-root --bind-to none --oversubscribe \
        --mca plm_rsh_agent "$hosts_work/rsh" --mca plm_rsh_no_tree_spawn 1 \
        --mca pml ob1 --mca btl tcp,self \
        --mca btl_tcp_if_include "$hosts_subnet.0/24" --mca oob_tcp_if_include "$hosts_subnet.0/24" \
        "$@" &
    wait $!
}

hosts_hydra_on() {
    _hlimit=$1
    _hlist=$2
    _hnp=$3
    _hlauncher=$4
    shift 4
    timeout --signal=TERM --kill-after=10 "$_hlimit" "$hosts_work/enter" 0 \
        "$_hlauncher" -launcher rsh -launcher-exec "$hosts_work/rsh" -hosts "$_hlist" -iface eth0 -n "$_hnp" \
        -genv UCX_TLS tcp,sm,self -genv UCX_NET_DEVICES eth0 "$@" &
    wait $!
}
