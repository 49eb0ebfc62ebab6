#!/usr/bin/env python3
"""The table and the targets of make bench-async, from the files bench/hetsgd/async.sh writes.

    bench/hetsgd/async_table.py --target 0.85 RUNS_DIR

RUNS_DIR holds summary.txt (one line per run: level=L policy=P seed=S then
hetsgd's own key=value summary) and, per run, L.P.sS.csv: hetsgd --curve's
evaluations (train_s,samples,test_acc; the model kept every K global
batches and evaluated after training, so train_s holds training only).

Per level, per policy, medians over the seeds with the spread (least-most):
  - test accuracy at fixed training times: 25, 50, 75 and 100% of T_eq, the
    shortest median training time of the level's policies (every run has
    reached it), each run's accuracy at t being its last evaluation at or
    before t;
  - time to the target accuracy (NA: not reached, counted as infinite);
  - the accuracy at equal time: at T_eq;
  - async runs: every worker's staleness, mean and p99 (median per worker),
    the largest over the least mean, updates and samples per second, the
    server's busy fraction, pushes lost (pushes - applied - dropped).
Then the ratios of async omnibatch to the others, per seed (the runs of a
seed ran one after the other), median and spread, and the targets.
Python's standard library only; tests/bench/check_async_table.sh feeds it
made-up runs.
"""

import argparse
import math
import os
import statistics
import sys

POLICIES = ("sync-static", "sync-omnibatch", "async-static", "async-omnilearn", "async-omnibatch")
LABEL = {
    "hl1": "12,12,12,12", "hl2": "12,12,8,16", "hl4": "9,9,6,24", "hl8": "6,6,4,32",
    "ramp": "HL1>2>4>8>4>2>1", "quota": "CPU quotas",
}
STALENESS_SPREAD = 1.5
FRACTIONS = (0.25, 0.5, 0.75, 1.0)


def parse_summary(path):
    """The runs: a dict per line."""
    runs = []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            fields = {}
            for item in line.split():
                if "=" not in item:
                    continue
                key, value = item.split("=", 1)
                fields.setdefault(key, value)
            for key in ("level", "policy", "seed"):
                if key not in fields:
                    sys.exit("async_table: %s line %d: no %s=" % (path, number, key))
            runs.append(fields)
    return runs


def read_curve(path):
    """[(train_s, test_acc)] in time order."""
    points = []
    with open(path) as f:
        header = f.readline().strip().split(",")
        if header[:3] != ["train_s", "samples", "test_acc"]:
            sys.exit("async_table: %s: not a hetsgd --curve file" % path)
        for line in f:
            t, _, acc = line.strip().split(",")[:3]
            points.append((float(t), float(acc)))
    if not points:
        sys.exit("async_table: %s: no evaluation" % path)
    return sorted(points)


def accuracy_at(curve, t):
    """The last evaluation at or before t (the first one before any)."""
    acc = curve[0][1]
    for when, value in curve:
        if when > t:
            break
        acc = value
    return acc


def time_to(curve, target):
    for when, value in curve:
        if value >= target:
            return when
    return math.inf


def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def spread(values, fmt):
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    lo, hi = min(values), max(values)
    show = lambda v: "NA" if math.isinf(v) else fmt % v
    return show(lo) if lo == hi else "%s-%s" % (show(lo), show(hi))


def show(value, fmt):
    if value is None:
        return "-"
    return "NA" if math.isinf(value) else fmt % value


def numbers(text):
    return [float(x) for x in text.split(",")] if text else []


class Level:
    """The runs of one level: run[policy][seed] = (fields, curve)."""

    def __init__(self, name):
        self.name = name
        self.run = {}

    def add(self, fields, curve):
        self.run.setdefault(fields["policy"], {})[fields["seed"]] = (fields, curve)

    def policies(self):
        return [p for p in POLICIES if p in self.run]

    def seeds(self, policy):
        return sorted(self.run[policy])

    def label(self):
        """The workers' speeds as the runs give them (4 or 8 workers), else the level's own."""
        if self.name.startswith("hl"):
            for runs in self.run.values():
                for fields, _ in runs.values():
                    if "speeds" in fields:
                        return fields["speeds"]
        return LABEL.get(self.name, "")

    def t_eq(self):
        times = [med(float(f["train_s"]) for f, _ in self.run[p].values()) for p in self.policies()]
        return min(times)


def policy_row(level, policy, target, t_eq):
    runs = level.run[policy].values()
    accs = [[accuracy_at(c, k * t_eq) for _, c in runs] for k in FRACTIONS]
    ttt = [time_to(c, target) for _, c in runs]
    cells = ["%-16s" % policy]
    cells += ["%.4f" % med(a) for a in accs]
    cells.append("%8s (%s)" % (show(med(ttt), "%.1f"), spread(ttt, "%.1f")))
    cells.append("%.4f (%s)" % (med(accs[-1]), spread(accs[-1], "%.4f")))
    cells.append("%7.1f" % med(float(f["train_s"]) for f, _ in runs))
    return "  ".join(cells), med(ttt), med(accs[-1])


def async_row(level, policy):
    runs = [f for f, _ in level.run[policy].values()]
    if "stale_mean" not in runs[0]:
        return None, None
    workers = len(numbers(runs[0]["stale_mean"]))
    mean = [med(numbers(f["stale_mean"])[w] for f in runs) for w in range(workers)]
    p99 = [med(numbers(f["stale_p99"])[w] for f in runs) for w in range(workers)]
    ratio = [max(numbers(f["stale_mean"])) / max(min(numbers(f["stale_mean"])), 1e-9) for f in runs]
    lost = sum(int(f["pushes"]) - int(f["updates"]) - int(f["dropped"]) for f in runs)
    line = "  %-16s staleness mean %s p99 %s: largest/least %.2f (%s); %.1f updates/s, %.0f samples/s, " \
           "server busy %.1f%%; dropped %s; lost %d" % (
               policy, ",".join("%.2f" % m for m in mean), ",".join("%.0f" % p for p in p99), med(ratio),
               spread(ratio, "%.2f"), med(float(f["updates_per_s"]) for f in runs),
               med(float(f["samples"]) * float(f["epochs"]) / float(f["train_s"]) for f in runs),
               100 * med(float(f["busy_fraction"]) for f in runs),
               ",".join(f["dropped"] for f in runs), lost)
    return line, (med(ratio), lost)


def paired(level, a, b, key):
    """Per seed key(a run) / key(b run): median and spread."""
    ratios = []
    for seed in level.seeds(a):
        if seed in level.run.get(b, {}):
            x, y = key(level.run[a][seed]), key(level.run[b][seed])
            ratios.append(x / y if y and not math.isinf(y) else (math.inf if math.isinf(x) else 0.0))
    return med(ratios), spread(ratios, "%.3f")


def report_level(level, target, verdicts):
    t_eq = level.t_eq()
    print("== %s (%s): T_eq %.1f s (the shortest median training time)" % (level.name,
                                                                          level.label(), t_eq))
    print("  %-16s  %s  %-20s  %-22s  %s" % ("policy", "  ".join("acc@%.0f%%" % (100 * k) for k in FRACTIONS),
                                              "time_to_%g_s (range)" % target, "acc_at_T_eq (range)",
                                              "train_s"))
    figures = {}
    for policy in level.policies():
        line, ttt, acc = policy_row(level, policy, target, t_eq)
        figures[policy] = (ttt, acc)
        print("  " + line)
    for policy in level.policies():
        line, stale = async_row(level, policy)
        if line:
            print(line)
            figures[policy] += stale
    ttt_of = lambda run: time_to(run[1], target)
    acc_of = lambda run: accuracy_at(run[1], t_eq)
    for other in ("async-static", "async-omnilearn", "sync-static", "sync-omnibatch"):
        if "async-omnibatch" in level.run and other in level.run:
            r, s = paired(level, "async-omnibatch", other, ttt_of)
            print("  async-omnibatch / %-15s time to %g: %s (%s per seed)" % (other, target, show(r, "%.3f"), s))
    judge(level, figures, verdicts)
    print()


def judge(level, figures, verdicts):
    ob = figures.get("async-omnibatch")
    if ob is None:
        return
    if level.name in ("hl4", "hl8"):
        for other in ("async-static", "async-omnilearn"):
            if other in figures:
                sooner = ob[0] < figures[other][0]
                better = ob[1] >= figures[other][1]
                verdicts.append("%s: async-omnibatch reaches the target sooner than %s (%s vs %s s): %s; "
                                "accuracy at equal time %.4f vs %.4f: %s" % (
                                    level.name, other, show(ob[0], "%.1f"), show(figures[other][0], "%.1f"),
                                    "met" if sooner else "MISSED", ob[1], figures[other][1],
                                    "met" if better else "MISSED"))
    if len(ob) > 2:
        verdicts.append("%s: async-omnibatch's per-worker mean staleness within %.1fx: %.2f: %s; pushes lost: %d" % (
            level.name, STALENESS_SPREAD, ob[2], "met" if ob[2] <= STALENESS_SPREAD else "MISSED", ob[3]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--target", type=float, default=0.85)
    parser.add_argument("runs")
    args = parser.parse_args()
    summary = os.path.join(args.runs, "summary.txt")
    if not os.path.exists(summary):
        sys.exit("async_table: %s: no runs" % summary)
    levels = {}
    order = []
    for fields in parse_summary(summary):
        name = fields["level"]
        if name not in levels:
            levels[name] = Level(name)
            order.append(name)
        curve = os.path.join(args.runs, "%s.%s.s%s.csv" % (name, fields["policy"], fields["seed"]))
        levels[name].add(fields, read_curve(curve))
    verdicts = []
    for name in order:
        report_level(levels[name], args.target, verdicts)
    for line in verdicts:
        print("target: " + line)


if __name__ == "__main__":
    main()
