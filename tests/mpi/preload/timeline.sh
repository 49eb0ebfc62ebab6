# OMNIBATCH_TIMELINE beside OMNIBATCH_TRACE: the timeline is valid JSON
# (python3 -m json.tool), one named track per rank, and on each track the
# compute, waiting and reduction spans add up to that rank's steps in the
# trace; the trace's rows carry the step's end time and the host.
command -v python3 >/dev/null 2>&1 || skip "no python3 to read the JSON"
steps=20
ob_run "$np" OMNIBATCH_TIMELINE="$work/timeline.json" OMNIBATCH_TRACE="$work/trace.csv" -- \
    "$tests/mpi_straggler" $steps 1 nonblocking || fail "the program failed"
grep -q "results right" "$work/out" || fail "wrong results under the preload"
python3 -m json.tool "$work/timeline.json" >/dev/null || fail "the timeline is not JSON"
head -1 "$work/trace.csv" | grep -qx "step,rank,batch,compute_s,blocked_s,reduction_s,waiting_s,time_s,host,cpu_s,involuntary_switches,off_cpu_s,throttled_s,taken,given" || fail "trace header"
awk -F, -v h="$(hostname)" 'NR > 1 && !($8 > 1e9 && $9 == h) { bad++ } END { exit bad > 0 }' \
    "$work/trace.csv" || fail "trace rows without a wall-clock time or this host"
python3 - "$work/timeline.json" "$work/trace.csv" "$np" <<'PY' || fail "the timeline does not match the trace"
import csv, json, sys
events = json.load(open(sys.argv[1]))
nranks = int(sys.argv[3])
names = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e["name"] == "process_name"}
assert sorted(names) == list(range(nranks)), "tracks %s, expected one per rank" % sorted(names)
for r in range(nranks):
    assert names[r].startswith("rank %d" % r), names[r]
steps = {}
for row in csv.DictReader(open(sys.argv[2])):
    r = int(row["rank"])
    steps[r] = steps.get(r, 0.0) + float(row["compute_s"]) + float(row["blocked_s"])
for r in range(nranks):
    spans = [e for e in events if e.get("ph") == "X" and e["pid"] == r]
    kinds = sorted(set(e["name"] for e in spans))
    assert kinds == ["compute", "reduction", "waiting"], kinds
    assert all("batch" in e["args"] and "step" in e["args"] for e in spans)
    total = sum(e["dur"] for e in spans) * 1e-6
    assert abs(total - steps[r]) <= 1e-6 * len(spans) + 1e-6 * steps[r], \
        "rank %d: spans %.6f s, trace steps %.6f s" % (r, total, steps[r])
    print("timeline: rank %d: %d spans, %.6f s = the trace's %.6f s" % (r, len(spans), total, steps[r]))
PY
