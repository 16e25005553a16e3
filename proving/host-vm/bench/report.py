#!/usr/bin/env python3
"""The bench's report: table.md and plot.svg from DIR/results.tsv (proving/host-vm/bench/run).

Per mode and workload: each configuration's median wall time over its runs, min-max, the ratio
to the pristine VM (a), and for the tracers the cost per call over (a) (two trace points for
Hubble, an entry and an exit event for ART's tracer). Exits 1, naming the rows, when a
checksum differs between runs of one (mode, workload) or a configuration has no run.
"""
import collections
import csv
import re
import statistics
import subprocess
import sys
from pathlib import Path

HUBBLE = Path(__file__).resolve().parents[3] / "rust/target/release/hubble"

NAMES = {
    "a": "pristine",
    "b": "off",
    "c": "stopped",
    "d": "ring",
    "e": "pool",
    "f": "ART trace",
    "s": "ART stream",
    "g": "ART sample",
}
MODES = ["int", "nterp", "jit"]


def load(path):
    rows = list(csv.DictReader(path.open(), delimiter="\t"))
    for r in rows:
        for k in ("rep", "ns", "calls", "rounds", "trace_bytes"):
            r[k] = int(r[k])
    return rows


def main(out):
    rows = load(out / "results.tsv")
    if not rows:
        print(f"{out}/results.tsv: no runs", file=sys.stderr)
        return 1
    errors = []
    runs = collections.defaultdict(list)
    sums = collections.defaultdict(set)
    for r in rows:
        runs[(r["mode"], r["workload"], r["config"])].append(r)
        sums[(r["mode"], r["workload"])].add(r["checksum"])
    for (mode, wl), s in sorted(sums.items()):
        if len(s) != 1:
            errors.append(f"{mode} {wl}: checksums differ between runs: {sorted(s)}")
    modes = [m for m in MODES if any(k[0] == m for k in runs)]
    workloads = list(dict.fromkeys(r["workload"] for r in rows))
    configs = [c for c in NAMES if any(k[2] == c for k in runs)]
    for m in modes:
        for w in workloads:
            for c in configs:
                if not runs.get((m, w, c)):
                    errors.append(f"{m} {w} {c}: no run")

    def per_round(x):
        return x["ns"] / x["rounds"]

    def med(m, w, c):
        """Median time of one round, ns."""
        v = runs.get((m, w, c))
        return statistics.median(per_round(x) for x in v) if v else None

    lines = []
    reps = max(r["rep"] for r in rows)
    lines.append(
        f"{len(rows)} runs: {reps} repetition(s) of every (mode, workload, configuration), "
        "interleaved; one process per run; the time of one round (timed rounds only, after a "
        "warm-up of at least 1 s), median (min-max) in ms, and × the pristine VM (a).\n"
    )
    for m in modes:
        lines.append(f"\n**--mode {m}**\n")
        lines.append("| workload | " + " | ".join(f"({c}) {NAMES[c]}" for c in configs) + " |")
        lines.append("|---|" + "---|" * len(configs))
        for w in workloads:
            base = med(m, w, "a")
            cells = []
            for c in configs:
                v = runs.get((m, w, c))
                if not v:
                    cells.append("—")
                    continue
                ns = [per_round(x) for x in v]
                cell = f"{statistics.median(ns) / 1e6:.3g} ({min(ns) / 1e6:.3g}–{max(ns) / 1e6:.3g})"
                if base and c != "a":
                    cell += f" ×{statistics.median(ns) / base:.2f}"
                cells.append(cell)
            lines.append(f"| {w} | " + " | ".join(cells) + " |")
    # Cost per call over the pristine VM, where the workload counts its calls.
    tracers = [c for c in ("b", "c", "d", "e", "f", "s", "g") if c in configs]
    if "a" in configs and tracers:
        lines.append("\n**ns per call over (a)** (the workload's own Java calls; mini-core's "
                     "library calls are extra, so this is an upper bound per trace point pair)\n")
        lines.append("| mode | workload | calls/round | " + " | ".join(f"({c})" for c in tracers) + " |")
        lines.append("|---|---|---|" + "---|" * len(tracers))
        for m in modes:
            for w in workloads:
                base = runs.get((m, w, "a"))
                # A workload whose own calls are few (strings: the library's are not counted)
                # gives no meaningful cost per call.
                if not base or base[0]["calls"] < 1000:
                    continue
                n = base[0]["calls"]
                cells = []
                for c in tracers:
                    v = med(m, w, c)
                    cells.append("—" if v is None else f"{(v - med(m, w, 'a')) / n:.1f}")
                lines.append(f"| {m} | {w} | {base[0]['calls']} | " + " | ".join(cells) + " |")
    # Trace written: the first repetition's files.
    sized = [r for r in rows if r["rep"] == 1 and r["trace_bytes"] > 0]
    if sized:
        lines.append("\n**Trace written** (first repetition, MiB: Hubble's flushed file, capped by "
                     "its 32 MiB ring or its pool, warm-up included; ART's trace of the timed "
                     "rounds, capped by its 8 MiB buffer when written at the stop)\n")
        shown = [c for c in "defsg" if c in configs]
        lines.append("| mode | workload | " + " | ".join(f"({c})" for c in shown) + " |")
        lines.append("|---|---|" + "---|" * len(shown))
        for m in modes:
            for w in workloads:
                cells = []
                for c in shown:
                    r = [x for x in sized if (x["mode"], x["workload"], x["config"]) == (m, w, c)]
                    cells.append("—" if not r else f"{r[0]['trace_bytes'] / 2**20:.1f}")
                lines.append(f"| {m} | {w} | " + " | ".join(cells) + " |")
    lines.extend(rates(out, modes, workloads))
    (out / "table.md").write_text("\n".join(lines) + "\n")
    plot(out / "plot.svg", modes, workloads, configs, med)
    print("\n".join(lines))
    for e in errors:
        print(f"{out}/results.tsv: {e}", file=sys.stderr)
    return 1 if errors else 0


def rates(out, modes, workloads):
    """Trace bytes per second of workload in ring mode (d): the flushed window's bytes over the
    time its events span (`hubble info`), first repetition; the ring holds the last of the timed
    rounds, so this is the rate while the workload runs."""
    if not HUBBLE.exists():
        return [f"\n(no {HUBBLE}: trace rates not computed)"]
    lines = ["\n**Trace rate in ring mode (d)** (MB/s of trace while the workload runs: the flushed "
             "window's bytes over the span of its events, first repetition)\n",
             "| mode | " + " | ".join(workloads) + " |",
             "|---|" + "---|" * len(workloads)]
    for m in modes:
        cells = []
        for w in workloads:
            files = sorted((out / "runs" / f"{m}-{w}-d-1.data").glob("**/*.hubble"))
            if len(files) != 1:
                cells.append("—")
                continue
            info = subprocess.run([str(HUBBLE), "info", str(files[0])], capture_output=True,
                                  text=True).stdout
            size = re.search(r"^window:\s+\d+ slots \((\d+) bytes\)", info, re.M)
            span = re.search(r"^events:.* over ([\d.]+) ms", info, re.M)
            if not size or not span or float(span.group(1)) == 0:
                cells.append("—")
                continue
            rate = int(size.group(1)) / (float(span.group(1)) / 1e3) / 1e6
            cells.append(f"{rate:.0f}" if rate >= 10 else f"{rate:.2f}")
        lines.append(f"| {m} | " + " | ".join(cells) + " |")
    return lines


def plot(path, modes, workloads, configs, med):
    """Grouped bars of × (a), log scale, one panel per mode (plain SVG, no plotting library)."""
    import math

    colors = ["#888", "#4a4", "#7c7", "#26c", "#59e", "#c33", "#e77", "#d90"]
    shown = [c for c in configs if c != "a"]
    bw, gap, top, panel_h, left = 7, 14, 30, 200, 50
    group_w = bw * len(shown) + gap
    width = left + group_w * len(workloads) + 160
    height = top + (panel_h + 50) * len(modes)
    lo, hi = 0.5, 10000.0  # ART's method tracing reaches thousands

    def y(v, base_y):
        v = min(max(v, lo), hi)
        return base_y + panel_h - (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo)) * panel_h

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           'font-family="sans-serif" font-size="10">',
           f'<text x="{left}" y="15" font-size="12">Wall time × the pristine ART 14 (a), log scale; '
           'host VM, one process per run, median</text>']
    for i, m in enumerate(modes):
        by = top + i * (panel_h + 50)
        out.append(f'<text x="5" y="{by + 10}" font-weight="bold">{m}</text>')
        for t in (0.5, 1, 2, 5, 10, 100, 1000, 10000):
            yy = y(t, by)
            out.append(f'<line x1="{left}" x2="{width - 160}" y1="{yy:.1f}" y2="{yy:.1f}" '
                       f'stroke="{"#000" if t == 1 else "#ddd"}"/>')
            out.append(f'<text x="{left - 5}" y="{yy + 3:.1f}" text-anchor="end">{t}×</text>')
        for j, w in enumerate(workloads):
            gx = left + j * group_w
            base = med(m, w, "a")
            for k, c in enumerate(shown):
                v = med(m, w, c)
                if not base or v is None:
                    continue
                r = v / base
                y1, y0 = y(max(r, 1), by), y(min(r, 1), by)
                out.append(f'<rect x="{gx + k * bw}" y="{y1:.1f}" width="{bw - 1}" '
                           f'height="{max(y0 - y1, 0.5):.1f}" fill="{colors[k % len(colors)]}">'
                           f'<title>{m} {w} ({c}) {NAMES[c]}: ×{r:.2f}</title></rect>')
            out.append(f'<text x="{gx + group_w / 2 - gap / 2}" y="{by + panel_h + 12}" '
                       f'text-anchor="middle">{w}</text>')
    for k, c in enumerate(shown):
        out.append(f'<rect x="{width - 150}" y="{top + k * 14}" width="10" height="10" '
                   f'fill="{colors[k % len(colors)]}"/>')
        out.append(f'<text x="{width - 135}" y="{top + k * 14 + 9}">({c}) {NAMES[c]}</text>')
    out.append("</svg>")
    path.write_text("\n".join(out) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: report.py DIR (holding results.tsv)")
    sys.exit(main(Path(sys.argv[1])))
