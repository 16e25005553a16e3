#!/usr/bin/env python3
"""Turns Listing-1 benchmark runs into Hubble's Table 2 (cost of a single trace point) and the
data behind its Figure 5 (overhead per amount of work).

Input: files holding the RESULT lines HubbleBench prints (other lines are ignored), from a
Hubble image with tracing off and on, and from a baseline image:

  RESULT image=<hubble|base> tracing=<on|off> abi=<os.arch> work=W depth=D iterations=N run=I ns=T sum=S

Method (Hubble §8.1): one run makes calls = iterations * depth method calls, each with one
entry and one exit trace point. For a mode m (tracing on, tracing off) and a work value:

  cost per trace point   = (mean(t_m) - mean(t_base)) / (2 * calls)         [ns]
  standard deviation     = sample SD over the runs of (t_m,i - mean(t_base)) / (2 * calls)
  performance overhead   = (mean(t_m) - mean(t_base)) / mean(t_base) * 100  [%]

Table 2 is the work-0 experiment; Figure 5 is the overhead for every work value. Runs are
grouped by ISA width (from abi) so 32- and 64-bit runs give separate rows, as in the paper.

Usage: bench_table.py [--format md|csv] FILE...
"""
import argparse
import math
import re
import sys
from collections import defaultdict

LINE = re.compile(r"RESULT((?:\s+[a-z_]+=\S+)+)")
FIELDS = ("image", "tracing", "abi", "work", "depth", "iterations", "run", "ns")
BITS = {
    "aarch64": 64, "arm64": 64, "arm64-v8a": 64, "x86_64": 64, "amd64": 64, "riscv64": 64,
    "armv7l": 32, "armv8l": 32, "arm": 32, "armeabi-v7a": 32, "i686": 32, "x86": 32,
}


class BenchError(Exception):
    pass


def read_runs(paths):
    runs = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                m = LINE.search(line)
                if not m:
                    continue
                kv = dict(p.split("=", 1) for p in m.group(1).split())
                missing = [k for k in FIELDS if k not in kv]
                if missing:
                    raise BenchError(f"{path}:{n}: RESULT line lacks {', '.join(missing)}")
                if kv["abi"] not in BITS:
                    raise BenchError(f"{path}:{n}: unknown abi {kv['abi']!r}")
                mode = "base" if kv["image"] == "base" else f"tracing {kv['tracing']}"
                if kv["image"] == "base" and kv["tracing"] != "off":
                    raise BenchError(f"{path}:{n}: a baseline image cannot trace")
                runs.append({
                    "mode": mode, "bits": BITS[kv["abi"]], "work": int(kv["work"]),
                    "depth": int(kv["depth"]), "iterations": int(kv["iterations"]),
                    "ns": int(kv["ns"]),
                })
    if not runs:
        raise BenchError("no RESULT lines in " + ", ".join(paths))
    return runs


def mean(xs):
    return sum(xs) / len(xs)


def sample_sd(xs):
    if len(xs) < 2:
        return float("nan")
    m = mean(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))


def compute(runs):
    """{(bits, work, mode): {cost, sd, overhead, n, calls}} for mode in tracing on/off."""
    groups = defaultdict(list)
    for r in runs:
        groups[(r["bits"], r["work"], r["mode"])].append(r)
    out = {}
    for (bits, work, mode), rs in sorted(groups.items()):
        if mode == "base":
            continue
        base = groups.get((bits, work, "base"))
        if not base:
            raise BenchError(f"{bits}-bit work={work}: {mode} runs but no baseline-image runs")
        shapes = {(r["depth"], r["iterations"]) for r in rs + base}
        if len(shapes) != 1:
            raise BenchError(f"{bits}-bit work={work}: runs differ in depth/iterations {sorted(shapes)}")
        depth, iterations = shapes.pop()
        calls = depth * iterations
        t_base = mean([r["ns"] for r in base])
        costs = [(r["ns"] - t_base) / (2 * calls) for r in rs]
        out[(bits, work, mode)] = {
            "cost": mean(costs),
            "sd": sample_sd(costs),
            "overhead": (mean([r["ns"] for r in rs]) - t_base) / t_base * 100.0,
            "n": len(rs),
            "n_base": len(base),
            "calls": calls,
        }
    return out


def render(results, fmt):
    lines = []
    table2 = [(k, v) for k, v in results.items() if k[1] == 0]
    order = {"tracing on": 0, "tracing off": 1}
    table2.sort(key=lambda kv: (order[kv[0][2]], kv[0][0]))
    works = sorted({k[1] for k in results})
    if fmt == "csv":
        lines.append("bits,work,mode,cost_ns,sd_ns,overhead_pct,runs,base_runs,calls_per_run")
        for (bits, work, mode), v in sorted(results.items()):
            lines.append(f"{bits},{work},{mode},{v['cost']:.4f},{v['sd']:.4f},"
                         f"{v['overhead']:.2f},{v['n']},{v['n_base']},{v['calls']}")
        return "\n".join(lines) + "\n"
    lines.append("Table 2: cost of a single trace point (work = 0)")
    lines.append("")
    lines.append("| mode | ISA | average cost (ns) | standard deviation (ns) | performance overhead (%) |")
    lines.append("|---|---|---:|---:|---:|")
    if not table2:
        lines.append("| (no work-0 runs) | | | | |")
    for (bits, _, mode), v in table2:
        lines.append(f"| Hubble {mode} | {bits}-bit | {v['cost']:.3f} | {v['sd']:.4f} | {v['overhead']:.0f}% |")
    lines.append("")
    lines.append("Figure 5: performance overhead (%) over work iterations")
    lines.append("")
    cols = sorted({(k[0], k[2]) for k in results}, key=lambda c: (order[c[1]], c[0]))
    lines.append("| work | " + " | ".join(f"{m}, {b}-bit" for b, m in cols) + " |")
    lines.append("|---:|" + "---:|" * len(cols))
    for w in works:
        cells = []
        for b, m in cols:
            v = results.get((b, w, m))
            cells.append(f"{v['overhead']:.2f}" if v else "—")
        lines.append(f"| {w} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--format", choices=("md", "csv"), default="md")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args(argv)
    try:
        sys.stdout.write(render(compute(read_runs(a.files)), a.format))
    except (BenchError, OSError) as e:
        print(f"bench_table: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
