#!/usr/bin/env python3
"""The table and the targets of make bench, from the files bench/run.sh writes.

    bench/table.py --mode MODE --repeat N --scenarios "headline ramp ..." \
        [--no-overhead] [--no-simulate] summary.txt recovery.txt [overhead.json] [simulate.json]

Inputs (each optional but the first two):
  summary.txt    one line per run: scenario=S rep=R key=value ... (hetsgd --summary)
  recovery.txt   one line per dynamic scenario and repetition: bench/hetsgd/recovery's figures
  overhead.json  bench/overhead/run.sh --summary: one JSON record per line
  simulate.json  bench/simulate/simulate --summary: one JSON record per line

Every ratio is the median over the repetitions of the paired ratios (the
policies of one repetition ran side by side).  Python's standard library
only; tests/bench/check_bench_table.sh feeds it made-up runs.

The runs of the chunks policy (omnibatch with each step worked in chunks
that move to a free rank) get a table and targets of their own, after the
others: recovery.txt's lines with vs=chunks hold their side-by-side figures.
"""

import argparse
import json
import math
import re
import statistics
import sys

DYNAMIC = ("ramp", "transient", "vanish")
# Speeds of their own in every step: no recovery, and not a static scenario.
JITTER = ("jitter",)
LABEL = {
    "headline": "1,1,0.5,0.25", "hl2": "12,12,8,16", "hl4": "9,9,6,24", "hl8": "6,6,4,32",
    "ramp": "HL1>2>4>8>4>2>1", "transient": "1,1,1,1 +2-5x", "vanish": "1,1,1,1 1->1/20",
    "jitter": "1,1,1,1 FlexRR",
}
# The targets.
STEADY_LIMIT = 1.05
RECOVERY_STEPS = 5
VANISH_LIMIT = 1.25
TTA_SPEEDUP = 1.8
ACC_POINTS = 0.3
OVERHEAD_LIMIT = 1.01
CROWDED_SHARE = 0.05
# The chunks policy's targets (issue 33).
CHUNK_VANISH_LIMIT = 1.05
CHUNK_FIRST_STEP_LIMIT = 1.25
CHUNK_RECOVERY_STEPS = 1
CHUNK_JITTER_LIMIT = 1.05
CHUNK_STATIC_LIMIT = 1.01
CHUNK_COST_LIMIT = 1.01

NUMBER = re.compile(r"^[-+]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][-+]?[0-9]+)?$")


def num(x):
    """The value as a float, or None when it is not a plain number."""
    if isinstance(x, (int, float)):
        return float(x)
    if isinstance(x, str) and NUMBER.match(x):
        return float(x)
    return None


def fmt(x, f):
    return f % x if isinstance(x, float) else x


def key_values(line):
    out = {}
    for field in line.split():
        k, _, v = field.partition("=")
        out[k] = v
    return out


class Runs:
    """Every run's figures: v[(scenario, policy, rep)][key]."""

    def __init__(self, repeat):
        self.repeat = repeat
        self.v = {}
        self.ran = set()
        self.overrun = {}
        self.steps = {}
        self.target = None

    def read_summary(self, path):
        with open(path) as f:
            for line in f:
                kv = key_values(line)
                s, p, r = kv.get("scenario"), kv.get("policy"), kv.get("rep")
                self.v[(s, p, r)] = kv
                self.ran.add((s, p))
                share = num(kv.get("overrun_share"))
                if share is not None and share > self.overrun.get(s, 0.0):
                    self.overrun[s] = share
                self.steps[s] = kv.get("steps", "")
                if "headline" == s:
                    self.target = kv.get("target")

    def read_recovery(self, path):
        with open(path) as f:
            for line in f:
                kv = key_values(line)
                who = "vs-oracle-chunks" if "chunks" == kv.get("vs") else "vs-oracle"
                self.v[(kv.get("scenario"), who, kv.get("rep"))] = kv

    def get(self, s, pol, r, key):
        return self.v.get((s, pol, str(r)), {}).get(key)

    def has(self, s, pol, r, key):
        return key in self.v.get((s, pol, str(r)), {})

    def paired(self, s, num_pol, den_pol, key, diff=False):
        """Median over repetitions of num/den (or num - den)."""
        vals = []
        for r in range(1, self.repeat + 1):
            x, y = num(self.get(s, num_pol, r, key)), num(self.get(s, den_pol, r, key))
            if x is not None and y is not None and (diff or y > 0):
                vals.append(x - y if diff else x / y)
        return statistics.median(vals) if vals else "NA"

    def single(self, s, pol, key):
        vals = [x for x in (num(self.get(s, pol, r, key)) for r in range(1, self.repeat + 1))
                if x is not None]
        return statistics.median(vals) if vals else "NA"

    def per_rep(self, s, num_pol, den_pol, key):
        """num/den of each repetition that has both."""
        vals = []
        for r in range(1, self.repeat + 1):
            x, y = num(self.get(s, num_pol, r, key)), num(self.get(s, den_pol, r, key))
            if x is not None and y is not None and y > 0:
                vals.append(x / y)
        return vals

    def first_steps(self, s, who):
        """Per repetition, the step of the scenario's first change over the oracle's (vsorc_first_steps)."""
        vals = []
        for r in range(1, self.repeat + 1):
            first = num((self.get(s, who, r, "vsorc_first_steps") or "").split(";")[0])
            if first is not None:
                vals.append(first)
        return vals


class Recovery:
    """The recoveries of one scenario and policy over the repetitions."""

    def __init__(self, runs, s, pol, prefix):
        self.worst, self.changes, self.unrecovered = -1, 0, 0
        self.any, self.initial, self.never = False, -1, False
        for r in range(1, runs.repeat + 1):
            if not runs.has(s, pol, r, prefix + "_worst"):
                continue
            self.any = True
            self.worst = max(self.worst, int(float(runs.get(s, pol, r, prefix + "_worst"))))
            self.unrecovered += int(float(runs.get(s, pol, r, prefix + "_unrecovered") or 0))
            self.changes += int(float(runs.get(s, pol, r, prefix + "_changes") or 0))
            w = int(float(runs.get(s, pol, r, prefix + "_initial") or 0))
            if w < 0:
                self.never = True
            elif w > self.initial:
                self.initial = w
        self.text = self._text(s in DYNAMIC)

    def _text(self, dynamic):
        if not self.any:
            return "NA"
        if not dynamic:
            return ("never" if self.never else str(self.initial)) + " (start)"
        if 0 == self.changes:
            return "no change"
        worst = str(self.worst) if self.worst >= 0 else "never"
        return "%s (%d/%d)" % (worst, self.changes - self.unrecovered, self.changes)


def late_of(runs, s, r):
    """Changes of scenario s, repetition r, recovered later than RECOVERY_STEPS."""
    return int(float(runs.get(s, "vs-oracle", r, "vsorc_recover_late")
                     or runs.get(s, "vs-oracle", r, "vsorc_recover_over10") or 0))


class Totals:
    """The recoveries of one kind summed over the dynamic scenarios."""

    def __init__(self):
        self.changes, self.unrecovered, self.worst, self.worst_at, self.late = 0, 0, -1, "", 0

    def add(self, s, rec):
        if rec.changes <= 0:
            return
        self.changes += rec.changes
        self.unrecovered += rec.unrecovered
        if rec.worst > self.worst:
            self.worst, self.worst_at = rec.worst, s

    def clause(self, who):
        text = "%s %d of %d not recovered" % (who, self.unrecovered, self.changes)
        if self.worst >= 0:
            text += ", worst %d steps (%s)" % (self.worst, self.worst_at)
        return text


def json_records(path):
    with open(path) as f:
        for line in f:
            line = line.strip().rstrip(",")
            if line.startswith("{") and line.endswith("}"):
                try:
                    yield json.loads(line)
                except ValueError:
                    continue


def jnum(rec, key):
    return num(rec.get(key)) if key in rec else None


class Overhead:
    def __init__(self, path):
        self.n = 0
        self.worst = None
        self.allreduce = None
        self.instructions = {}
        self.interposing = None
        if path is None:
            return
        for rec in json_records(path):
            if "op" in rec and jnum(rec, "bytes") == 8 and "ratio" in rec:
                self.n += 1
                if self.worst is None or jnum(rec, "ratio") > jnum(self.worst, "ratio"):
                    self.worst = rec
                if "allreduce" == rec["op"] and "float" == rec.get("type"):
                    self.allreduce = rec
            if "interposition" in rec:
                k = "%s %s" % (rec.get("op"), rec.get("type"))
                self.instructions[k] = (jnum(rec, "interposition"), rec.get("class"))
            if "interposing" in rec:
                self.interposing = str(rec["interposing"]).lower()


class Simulate:
    def __init__(self, path):
        self.P = 0
        self.rows = []
        self.ol_worst, self.ol_worst_at = 0.0, ""
        if path is None:
            return
        for rec in json_records(path):
            if "scenario" not in rec:
                continue
            P = int(jnum(rec, "ranks") or 0)
            if P > self.P:
                self.P, self.rows = P, []
            if P == self.P:
                self.rows.append((rec["scenario"], jnum(rec, "steady_over_oracle") or 0.0))
                y = jnum(rec, "omnilearn_steady_over_oracle") or 0.0
                if y > self.ol_worst:
                    self.ol_worst, self.ol_worst_at = y, rec["scenario"]


NOTES = """
omb/orc: steady step time omnibatch / oracle, measured (median over {repeat} run(s)); the step-time
  target is judged on it.
(pred): the same predicted by the model the oracle plans with: the cost calibrated before
  training x the true speeds.  Information only: on a crowded machine the real cost per
  sample and per step differs from the calibration (by rank and by load), so the split of
  the oracle can be a few % off the best and omnibatch, which learns from measurements,
  can beat it (omb/orc < 1).
omb/stat, OL/orc: steady step time omnibatch / static, omnilearn / oracle, measured.
TTA o/s: time to test accuracy {target}, omnibatch / static.
acc pts: final test accuracy, omnibatch - static, in points: the mean of the evaluations of
  the last steps (hetsgd --final-evals), then (last) that of the last evaluation alone, which
  moves by tenths of a point from one evaluation to the next.
balance: per step, T* = B / sum_i b_i/t_i from the batch b_i and compute time t_i of each rank
  (emulation included): the step time with the work spread by the measured throughputs.
  max t_i / T* is 1 when all ranks finish together; its mean includes timing noise, whose
  level the oracle column shows.  T* is exact for a cost proportional to the batch;
  with a fixed cost per step it is off by a fraction of the imbalance (hetsgd README).
recover: the most steps any speed change took until omnibatch was within 5% of the oracle:
  its balance over that of the oracle at the same steps, each a median of 3 steps, <= 1.05 for
  3 steps (changes recovered / changes).  In the balance table, the same on the balance
  alone (<= 1.05, which timing noise can deny even the oracle); (start): from step 0;
  model: judged by the model (plan within 5% of the oracle plan).
overrun: the largest share of steps whose real compute outlasted the emulated step."""


def gnum(x):
    """A number as awk's print shows it (%.6g)."""
    return "%.6g" % x


class Table:
    def __init__(self, runs, order, mode, policies=None):
        self.runs, self.order, self.mode = runs, order, mode
        self.policies = policies       # --policies: the only ones run, or None for all
        self.lines = []
        self.rec = {}
        self.totals = {k: Totals() for k in ("vsorc", "omnibatch", "oracle", "model")}
        self.late = 0
        self.static = []             # (scenario, measured, predicted, balance text)
        self.headline = {}
        self.no_static, self.no_ol, self.crowded = [], [], []
        self.na_tta = False

    def out(self, text=""):
        self.lines.append(text)

    def why_not(self, policy):
        """Why a policy has no runs: left out by --policies, or by the mode."""
        if self.policies is not None and policy not in self.policies:
            return "(--policies left it out)"
        return "(--full runs it)"

    def scenario_row(self, s):
        R = self.runs
        oo = R.paired(s, "omnibatch", "oracle", "steady_step_s")
        pr = R.single(s, "omnibatch", "pred_ratio_oracle")
        os_ = R.paired(s, "omnibatch", "static", "steady_step_s")
        lo = R.paired(s, "omnilearn", "oracle", "steady_step_s")
        tt = R.paired(s, "omnibatch", "static", "time_to_target_s")
        ad = R.paired(s, "omnibatch", "static", "final_acc_mean", diff=True)
        a1 = R.paired(s, "omnibatch", "static", "final_acc", diff=True)
        ad = ad * 100 if isinstance(ad, float) else ad
        a1 = a1 * 100 if isinstance(a1, float) else a1
        acc = "%+.2f (%+.2f)" % (ad, a1) if isinstance(ad, float) and isinstance(a1, float) else "NA"
        if (s, "static") not in R.ran:
            self.no_static.append(s)
        if (s, "omnilearn") not in R.ran:
            self.no_ol.append(s)
        if "headline" != s:
            self.na_tta = True
        dynamic = s in DYNAMIC
        jitter = s in JITTER
        rec = {
            "vsorc": Recovery(R, s, "vs-oracle", "vsorc_recover"),
            "omnibatch": Recovery(R, s, "omnibatch", "balance_recover"),
            "oracle": Recovery(R, s, "oracle", "balance_recover"),
            "model": Recovery(R, s, "omnibatch", "model_recover"),
        }
        self.rec[s] = rec
        if dynamic:
            for k, r in rec.items():
                self.totals[k].add(s, r)
            if rec["vsorc"].changes > 0:
                for r in range(1, R.repeat + 1):
                    self.late += late_of(R, s, r)
        if "headline" == s:
            self.headline = {
                "tta": tt, "acc": ad, "acc_last": a1,
                "static_acc": R.single(s, "static", "final_acc_mean"),
                "evals": R.single(s, "static", "final_acc_evals"),
                "from": R.single(s, "static", "final_acc_from_step"),
            }
        if not dynamic and not jitter and isinstance(oo, float):
            bal = "%s/%s" % (fmt(R.single(s, "omnibatch", "balance_steady"), "%.3f"),
                             fmt(R.single(s, "oracle", "balance_steady"), "%.3f"))
            self.static.append((s, oo, pr, bal))
        overrun = R.overrun.get(s, 0.0)
        if overrun > CROWDED_SHARE:
            self.crowded.append(s)
        self.out("%-9s %-16s %5s  %7s %6s  %8s  %7s  %8s  %-14s  %-12s %6s%%" % (
            s, LABEL.get(s, ""), R.steps.get(s, ""), fmt(oo, "%.3f"), "(" + fmt(pr, "%.3f") + ")",
            fmt(os_, "%.3f"), fmt(lo, "%.3f"), fmt(tt, "%.3f"), acc,
            rec["vsorc"].text if dynamic else "-", "%.1f" % (100 * overrun)))

    def balance_table(self):
        R = self.runs
        self.out("")
        self.out("%-9s  %-40s  %s" % ("balance", "max t_i / T*, mean over the steady steps",
                                      "steps until within 5% (measured; model)"))
        self.out("%-9s  %8s %9s %8s %9s    %-14s %-14s %-14s" % (
            "scenario", "static", "omnibatch", "oracle", "omnilearn", "omnibatch", "oracle", "omnibatch model"))
        for s in self.order:
            b = [fmt(R.single(s, p, "balance_steady"), "%.3f") for p in ("static", "omnibatch", "oracle", "omnilearn")]
            rec = self.rec[s]
            self.out("%-9s  %8s %9s %8s %9s    %-14s %-14s %-14s" % (
                s, b[0], b[1], b[2], b[3], rec["omnibatch"].text, rec["oracle"].text, rec["model"].text))

    def notes(self, target):
        for line in NOTES.format(repeat=self.runs.repeat, target=gnum(target)).split("\n"):
            self.out(line)
        if self.no_static:
            self.out("NA in omb/stat, acc pts, static: static does not run in %s %s." % (", ".join(self.no_static), self.why_not("static")))
        if self.no_ol:
            self.out("NA in OL/orc, omnilearn: omnilearn does not run in %s %s." % (", ".join(self.no_ol), self.why_not("omnilearn")))
        if self.na_tta:
            self.out("NA in TTA: only the headline trains to the target; the others run a fixed, short number of steps.")
        self.out("-: no speed change in a static scenario; the jitter changes every step (no recovery to judge).")
        if self.crowded:
            self.out("warning: more than 5%% of the steps overran in %s: those step times partly measure "
                     "the machine (try a larger --slowdown)" % ", ".join(self.crowded))
        if "quick" == self.mode:
            self.out("note: --quick: tiny data and few steps, the figures are not meaningful.")

    def overhead_lines(self, ov, simulate, run_overhead, run_simulate):
        if run_overhead:
            a = ov.allreduce or {}
            line = "\noverhead: preload / plain MPI_Allreduce float at 8 B %s (min..max %s..%s; plain %.3f us, preload %.3f us);" % (
                fmt(jnum(a, "ratio") if a else "NA", "%.3f"), fmt(jnum(a, "ratio_min") if a else "NA", "%.3f"),
                fmt(jnum(a, "ratio_max") if a else "NA", "%.3f"),
                (jnum(a, "plain") or 0.0) if a else 0.0, (jnum(a, "preload") or 0.0) if a else 0.0)
            kinds = []
            for k in ("allreduce float", "allreduce int", "iallreduce float", "iallreduce int"):
                if k in ov.instructions:
                    n, cls = ov.instructions[k]
                    kinds.append("%s (%s) %.0f" % (k, cls, n))
            self.out(line + " instructions per intercepted call: " + (", ".join(kinds) or "not measured"))
        else:
            self.out("\noverhead: not run (--no-overhead)")
        if run_simulate and simulate.P > 0:
            rows = " ".join("%s %.3f" % (sc, x) for sc, x in simulate.rows)
            self.out("simulate: P = %d, steady step / oracle: %s; omnilearn worst %.3f (%s)" % (
                simulate.P, rows, simulate.ol_worst, simulate.ol_worst_at))
        elif not run_simulate:
            self.out("simulate: not run (--no-simulate)")

    def target_steady(self):
        name = "  steady step <= %gx oracle (static scenarios)" % STEADY_LIMIT
        if not self.static:
            self.out(name + ": not measured (no static scenario ran)")
            return
        worst = max(self.static, key=lambda t: t[1])
        self.out("%s: %s: worst %.3f (%s), measured omnibatch / oracle (median of %d run(s)): %s; "
                 "the model (pred, not judged): %s; measured balance omnibatch/oracle: %s" % (
                     name, "met" if worst[1] <= STEADY_LIMIT else "MISSED", worst[1], worst[0], self.runs.repeat,
                     ", ".join("%s %.3f" % (s, m) for s, m, _, _ in self.static),
                     ", ".join("%s %s" % (s, fmt(p, "%.3f")) for s, _, p, _ in self.static),
                     ", ".join("%s %s" % (s, b) for s, _, _, b in self.static)))

    def target_recovery(self):
        name = "  recovery within 5%% of oracle in <= %d steps" % RECOVERY_STEPS
        t = self.totals
        vs = t["vsorc"]
        if 0 == vs.changes:
            self.out(name + ": not measured (no dynamic scenario ran with omnibatch and oracle)")
            return
        if 0 == vs.unrecovered and vs.worst <= RECOVERY_STEPS:
            text = "%s: met: worst %d steps (%s), %d changes" % (name, vs.worst, vs.worst_at, vs.changes)
        else:
            text = "%s: MISSED: %d of %d changes not recovered in <= %d steps (%d not before the next change or the end)" % (
                name, vs.unrecovered + self.late, vs.changes, RECOVERY_STEPS, vs.unrecovered)
            if vs.worst >= 0:
                text += "; worst recovered %d steps (%s)" % (vs.worst, vs.worst_at)
        text += " (balance over that of the oracle at the same steps <= 1.05 for 3 steps)"
        if t["omnibatch"].changes > 0:
            text += "; on the balance alone (<= 1.05): " + t["omnibatch"].clause("omnibatch")
        if t["oracle"].changes > 0:
            text += ", " + t["oracle"].clause("the oracle")
        if t["model"].changes > 0:
            text += "; " + t["model"].clause("the model (not judged):")
        text += "; " + self.recovery_spread()
        self.out(text)

    def recovery_spread(self):
        """Per repetition: did every change of every dynamic scenario recover in time, and its worst."""
        R = self.runs
        met, worst = 0, []
        for r in range(1, R.repeat + 1):
            ok, w, seen = True, -1, False
            for s in self.order:
                if s not in DYNAMIC or not R.has(s, "vs-oracle", r, "vsorc_recover_worst"):
                    continue
                seen = True
                unrec = int(float(R.get(s, "vs-oracle", r, "vsorc_recover_unrecovered") or 0))
                ok = ok and 0 == unrec and 0 == late_of(R, s, r)
                w = max(w, int(float(R.get(s, "vs-oracle", r, "vsorc_recover_worst"))))
            if seen:
                met += ok
                worst.append(str(w) if w >= 0 else "never")
        return "met in %d of %d repetitions (worst steps per repetition: %s)" % (met, len(worst), ", ".join(worst))

    def target_vanish(self):
        R = self.runs
        name = "  vanish: mean step <= %gx the clairvoyant oracle" % VANISH_LIMIT
        if ("vanish", "omnibatch") not in R.ran or ("vanish", "oracle") not in R.ran:
            self.out(name + ": not measured (vanish did not run with omnibatch and oracle)")
            return
        m = R.paired("vanish", "omnibatch", "oracle", "steady_step_s")
        per = []
        for r in range(1, R.repeat + 1):
            x, y = num(R.get("vanish", "omnibatch", r, "steady_step_s")), num(R.get("vanish", "oracle", r, "steady_step_s"))
            if x is not None and y is not None and y > 0:
                per.append(x / y)
        spread = " (per repetition %s)" % ", ".join("%.3f" % v for v in per) if per else ""
        if not isinstance(m, float):
            self.out(name + ": not measured")
        else:
            self.out("%s: %s: %.3f, median of %d%s" % (name, "met" if m <= VANISH_LIMIT else "MISSED", m, len(per), spread))

    def target_tta(self, target):
        R, h = self.runs, self.headline
        name = "  time to %g%% accuracy >= %gx faster than static (1,1,0.5,0.25)" % (100 * target, TTA_SPEEDUP)
        if ("headline", "omnibatch") not in R.ran or ("headline", "static") not in R.ran:
            self.out(name + ": not measured (the headline scenario did not run)")
        elif not isinstance(h.get("tta"), float):
            who = "omnibatch" if isinstance(R.single("headline", "static", "time_to_target_s"), float) else "static"
            self.out("%s: MISSED: the target accuracy was not reached by %s in %s steps" % (name, who, R.steps.get("headline", "")))
        elif 1 / h["tta"] >= TTA_SPEEDUP:
            self.out("%s: met: %.2fx" % (name, 1 / h["tta"]))
        else:
            self.out("%s: MISSED: %.2fx (omnibatch step / static %s)" % (
                name, 1 / h["tta"], fmt(R.paired("headline", "omnibatch", "static", "steady_step_s"), "%.3f")))

    def target_accuracy(self):
        h = self.headline
        name = "  final accuracy within %g points of static" % ACC_POINTS
        if not isinstance(h.get("acc"), float):
            self.out(name + ": not measured (the headline scenario did not run)")
            return
        ok = -ACC_POINTS <= h["acc"] <= ACC_POINTS
        self.out("%s: %s: %+.2f points, mean of the %s evaluations from step %s on (static %.2f%%); the last evaluation alone %+.2f" % (
            name, "met" if ok else "MISSED", h["acc"], gnum(h["evals"]) if isinstance(h["evals"], float) else h["evals"],
            gnum(h["from"]) if isinstance(h["from"], float) else h["from"],
            100 * h["static_acc"] if isinstance(h["static_acc"], float) else 0.0,
            h["acc_last"] if isinstance(h["acc_last"], float) else 0.0))

    def target_overhead(self, ov, run_overhead):
        name = "  overhead <= %g%% at 8 B" % round(100 * (OVERHEAD_LIMIT - 1))
        worst = ov.worst
        if not run_overhead or worst is None or jnum(worst, "ratio") is None:
            self.out(name + ": not measured" + ("" if run_overhead else " (--no-overhead)"))
            return
        r = jnum(worst, "ratio")
        at = "%s %s" % (worst.get("op"), worst.get("type"))
        if r <= OVERHEAD_LIMIT:
            self.out("%s: met: %+.1f%% (%s, the worst of %d kinds at 8 B)" % (name, 100 * (r - 1), at, ov.n))
            return
        plain, pre = jnum(worst, "plain") or 0.0, jnum(worst, "preload") or 0.0
        text = ("%s: MISSED: %+.1f%% (%s, the worst of %d kinds at 8 B: the median of the per-round ratios, which spread "
                "%.3f..%.3f); the median calls: plain %.3f us, preload %.3f us (%+.0f ns, %+.1f%%)" % (
                    name, 100 * (r - 1), at, ov.n, jnum(worst, "ratio_min") or 0.0, jnum(worst, "ratio_max") or 0.0,
                    plain, pre, 1000 * (pre - plain), 100 * (pre / plain - 1) if plain > 0 else 0.0))
        if "false" == ov.interposing:
            text += "; note: the library did not interpose (noise only)"
        self.out(text)


CHUNK_NOTES = """
chunks: omnibatch's controller with each step worked in chunks that move to a rank that is free
  (hetsgd --policy chunks).  chk/orc, chk/omb, chk/stat: its steady step over the oracle's, omnibatch's
  (without chunks) and static's, measured side by side (medians).  first step: in the step of the
  scenario's first speed change, the step time over the oracle's at that step (median; the oracle
  knows the change, also inside the step).  recover: the most steps any change took until the step
  time, over the oracle's at the same steps (each a median of 3 steps), stayed <= 1.05 for 3 steps
  (changes recovered / changes); the measured balance cannot judge chunks, which balance every step.
  moved: the share of the samples done by another rank than the plan's; calls: the time in
  omnibatch_next_chunk over the step."""


class Chunks:
    """The chunks policy beside the oracle, omnibatch and static: its table and its targets."""

    def __init__(self, runs, order):
        self.runs, self.order = runs, order
        self.ran = [s for s in order if (s, "chunks") in runs.ran]

    def recovery_text(self, s, who):
        rec = Recovery(self.runs, s, who, "vsorc_step_recover")
        return rec.text if s in DYNAMIC else "-"

    def first_text(self, s, who):
        vals = self.runs.first_steps(s, who)
        return "%.3f" % statistics.median(vals) if vals and s in DYNAMIC else "-" if s not in DYNAMIC else "NA"

    def table(self, out):
        R = self.runs
        if not self.ran:
            return
        out("")
        out("%-9s  %7s %7s %8s %7s   %-11s %-11s   %-12s %-12s  %6s %6s %6s" % (
            "chunks", "chk/orc", "chk/omb", "chk/stat", "omb/orc", "first step", "", "recover", "", "moved",
            "chunks", "calls"))
        out("%-9s  %7s %7s %8s %7s   %-11s %-11s   %-12s %-12s  %6s %6s %6s" % (
            "scenario", "", "", "", "", "chunks", "omnibatch", "chunks", "omnibatch", "%", "/step", "%"))
        for s in self.ran:
            moved = R.single(s, "chunks", "moved_share")
            calls = R.single(s, "chunks", "chunk_call_share")
            out("%-9s  %7s %7s %8s %7s   %-11s %-11s   %-12s %-12s  %6s %6s %6s" % (
                s, fmt(R.paired(s, "chunks", "oracle", "steady_step_s"), "%.3f"),
                fmt(R.paired(s, "chunks", "omnibatch", "steady_step_s"), "%.3f"),
                fmt(R.paired(s, "chunks", "static", "steady_step_s"), "%.3f"),
                fmt(R.paired(s, "omnibatch", "oracle", "steady_step_s"), "%.3f"),
                self.first_text(s, "vs-oracle-chunks"), self.first_text(s, "vs-oracle"),
                self.recovery_text(s, "vs-oracle-chunks"), self.recovery_text(s, "vs-oracle"),
                fmt(100 * moved if isinstance(moved, float) else moved, "%.1f"),
                fmt(R.single(s, "chunks", "chunks_per_step"), "%.1f"),
                fmt(100 * calls if isinstance(calls, float) else calls, "%.3f")))
        for line in CHUNK_NOTES.split("\n"):
            out(line)

    def spread(self, s, num_pol, den_pol):
        per = self.runs.per_rep(s, num_pol, den_pol, "steady_step_s")
        return " (per repetition %s)" % ", ".join("%.3f" % v for v in per) if per else ""

    def verdict(self, out, name, s, num_pol, den_pol, limit):
        m = self.runs.paired(s, num_pol, den_pol, "steady_step_s")
        if (s, num_pol) not in self.runs.ran or (s, den_pol) not in self.runs.ran or not isinstance(m, float):
            out("%s: not measured (%s did not run with %s and %s)" % (name, s, num_pol, den_pol))
            return None
        out("%s: %s: %.3f, median of %d%s" % (name, "met" if m <= limit else "MISSED", m,
                                              len(self.runs.per_rep(s, num_pol, den_pol, "steady_step_s")),
                                              self.spread(s, num_pol, den_pol)))
        return m

    def target_vanish(self, out):
        self.verdict(out, "  chunks: vanish mean step <= %gx the clairvoyant oracle" % CHUNK_VANISH_LIMIT,
                     "vanish", "chunks", "oracle", CHUNK_VANISH_LIMIT)
        name = "  chunks: vanish first slow step <= %gx the oracle's step in that step" % CHUNK_FIRST_STEP_LIMIT
        vals = self.runs.first_steps("vanish", "vs-oracle-chunks")
        if not vals:
            out(name + ": not measured (vanish did not run with chunks and oracle)")
            return
        m = statistics.median(vals)
        omb = self.runs.first_steps("vanish", "vs-oracle")
        out("%s: %s: %.3f, median of %d (per repetition %s); omnibatch without chunks %s" % (
            name, "met" if m <= CHUNK_FIRST_STEP_LIMIT else "MISSED", m, len(vals),
            ", ".join("%.3f" % v for v in vals),
            "%.3f" % statistics.median(omb) if omb else "NA"))

    def target_recovery(self, out):
        name = ("  chunks: ramp and transient, every speed change within 5%% of the oracle in <= %d step "
                "(step times side by side)" % CHUNK_RECOVERY_STEPS)
        R = self.runs
        met, seen, worst, changes = 0, 0, [], 0
        for r in range(1, R.repeat + 1):
            ok, w, never, any_ = True, -1, False, False
            for s in ("ramp", "transient"):
                if s not in self.order or not R.has(s, "vs-oracle-chunks", r, "vsorc_step_recover_worst"):
                    continue
                any_ = True
                rw = int(float(R.get(s, "vs-oracle-chunks", r, "vsorc_step_recover_worst")))
                unrec = int(float(R.get(s, "vs-oracle-chunks", r, "vsorc_step_recover_unrecovered") or 0))
                changes += int(float(R.get(s, "vs-oracle-chunks", r, "vsorc_step_recover_changes") or 0))
                ok = ok and 0 == unrec and rw <= CHUNK_RECOVERY_STEPS
                never = never or unrec > 0
                w = max(w, rw)
            if any_:
                seen += 1
                met += ok
                worst.append(("%d" % w if w >= 0 else "-") + (" (and never)" if never else ""))
        if 0 == seen:
            out(name + ": not measured (ramp and transient did not run with chunks and oracle)")
            return
        out("%s: %s: %d of %d repetitions (worst steps per repetition: %s; %d changes in all)" % (
            name, "met" if met == seen else "MISSED", met, seen, ", ".join(worst), changes))

    def target_jitter(self, out):
        m = self.verdict(out, "  chunks: jitter mean step <= %gx the per-step oracle" % CHUNK_JITTER_LIMIT,
                         "jitter", "chunks", "oracle", CHUNK_JITTER_LIMIT)
        if m is not None:
            R = self.runs
            out("    beside it, over the per-step oracle: omnibatch without chunks %s, static %s" % (
                fmt(R.paired("jitter", "omnibatch", "oracle", "steady_step_s"), "%.3f"),
                fmt(R.paired("jitter", "static", "oracle", "steady_step_s"), "%.3f")))

    def target_static(self, out):
        R = self.runs
        statics = [s for s in self.order if s not in DYNAMIC and s not in JITTER and (s, "chunks") in R.ran]
        name = "  chunks: static scenarios <= %gx oracle" % CHUNK_STATIC_LIMIT
        name_cost = "  chunks: stealing's cost with no noise, chunks / omnibatch <= %g (static scenarios)" % CHUNK_COST_LIMIT
        for label, den, limit in ((name, "oracle", CHUNK_STATIC_LIMIT), (name_cost, "omnibatch", CHUNK_COST_LIMIT)):
            vals = [(s, R.paired(s, "chunks", den, "steady_step_s")) for s in statics]
            vals = [(s, v) for s, v in vals if isinstance(v, float)]
            if not vals:
                out(label + ": not measured (no static scenario ran with chunks and %s)" % den)
                continue
            worst = max(vals, key=lambda t: t[1])
            out("%s: %s: worst %.3f (%s); %s" % (label, "met" if worst[1] <= limit else "MISSED", worst[1], worst[0],
                                                 ", ".join("%s %.3f" % t for t in vals)))

    def targets(self, out):
        if not self.ran:
            out("  chunks: not run")
            return
        self.target_vanish(out)
        self.target_recovery(out)
        self.target_jitter(out)
        self.target_static(out)


def build(args):
    runs = Runs(args.repeat)
    runs.read_summary(args.summary)
    runs.read_recovery(args.recovery)
    ov = Overhead(args.overhead)
    sim = Simulate(args.simulate)
    order = args.scenarios.split()
    t = Table(runs, order, args.mode, args.policies.split(",") if args.policies else None)
    target = num(runs.target) if runs.target not in (None, "") else None
    target = 0.85 if target is None else target
    t.out("%-9s %-16s %5s  %7s %6s  %8s  %7s  %8s  %-14s  %-12s %7s" % (
        "scenario", "speeds", "steps", "omb/orc", "(pred)", "omb/stat", "OL/orc", "TTA o/s",
        "acc pts (last)", "recover", "overrun"))
    for s in order:
        t.scenario_row(s)
    t.balance_table()
    chunks = Chunks(runs, order)
    chunks.table(t.out)
    t.notes(target)
    t.overhead_lines(ov, sim, args.overhead_ran, args.simulate_ran)
    t.out("\ntargets:")
    t.target_steady()
    t.target_recovery()
    t.target_vanish()
    t.target_tta(target)
    t.target_accuracy()
    t.target_overhead(ov, args.overhead_ran)
    chunks.targets(t.out)
    return "\n".join(t.lines) + "\n"


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--mode", default="default", choices=("quick", "default", "full"))
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--scenarios", required=True, help="the scenarios, in table order, separated by spaces")
    p.add_argument("--policies", help="the only policies run (bench/run.sh --policies), separated by commas")
    p.add_argument("--no-overhead", dest="overhead_ran", action="store_false")
    p.add_argument("--no-simulate", dest="simulate_ran", action="store_false")
    p.add_argument("summary")
    p.add_argument("recovery")
    p.add_argument("extra", nargs="*", help="overhead.json and/or simulate.json")
    args = p.parse_args(argv)
    if args.repeat < 1:
        p.error("--repeat %d: expected at least 1" % args.repeat)
    args.overhead = next((f for f in args.extra if f.endswith("overhead.json")), None)
    args.simulate = next((f for f in args.extra if f.endswith("simulate.json")), None)
    sys.stdout.write(build(args))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
