"""The kernel's own round trip between two hosts, without MPI.

bench/probe/run.sh runs this beside steal_probe across the namespace hosts:
a 16-byte message and its echo over one TCP connection (TCP_NODELAY), both
ends polling their nonblocking socket as an MPI library polls, so that the
MPI rows across hosts can be read against what the hosts' network itself
costs at that moment.  It prints one row in steal_probe's columns.

    tcp_rtt.py server ADDRESS PORT
    tcp_rtt.py client ADDRESS PORT REPEAT SAMPLES LABEL
"""
import socket
import statistics
import sys
import time


def serve(address, port):
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.settimeout(30)
    listener.bind((address, port))
    listener.listen(1)
    conn, _ = listener.accept()
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    conn.setblocking(False)
    while True:
        try:
            data = conn.recv(16)
        except BlockingIOError:
            continue
        if not data:
            return
        conn.sendall(data)


def round_trip_us(conn):
    start = time.perf_counter()
    conn.sendall(b"x" * 16)
    while True:
        try:
            if conn.recv(16):
                return (time.perf_counter() - start) * 1e6
        except BlockingIOError:
            pass


def quantile(ordered, q):
    """Linear between order statistics, as steal_probe's (numpy's default)."""
    pos = q * (len(ordered) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (pos - lo) * (ordered[hi] - ordered[lo])


def connect(address, port):
    """The server may not listen yet: try again for 20 s."""
    for _ in range(200):
        try:
            return socket.create_connection((address, port), timeout=30)
        except ConnectionRefusedError:
            time.sleep(0.1)
    return socket.create_connection((address, port), timeout=30)


def client(address, port, repeat, samples, label):
    conn = connect(address, port)
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    conn.setblocking(False)
    medians = []
    every = []
    for _ in range(repeat):
        lat = [round_trip_us(conn) for _ in range(samples)]
        medians.append(statistics.median(lat))
        every.extend(lat)
    conn.close()
    medians.sort()
    every.sort()
    print("%-7s %-5s %-4s %-12s %-10s %-16s %11.3f %19s %11.3f %6d  %s" % (
        "none", "hosts", "-", "tcp-socket", "round-trip", label, quantile(medians, 0.5),
        "%.3f-%.3f" % (medians[0], medians[-1]), quantile(every, 0.9), len(every),
        "the hosts' network without MPI"))


def main(argv):
    if len(argv) == 4 and argv[1] == "server":
        serve(argv[2], int(argv[3]))
    elif len(argv) == 7 and argv[1] == "client":
        client(argv[2], int(argv[3]), int(argv[4]), int(argv[5]), argv[6])
    else:
        sys.stderr.write("usage: tcp_rtt.py server ADDRESS PORT | client ADDRESS PORT REPEAT SAMPLES LABEL\n")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
