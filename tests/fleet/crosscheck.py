#!/usr/bin/env python3
"""The fleet queries, unchanged, on DuckDB's and Spark's own engines, against `hubble fleet`.

    crosscheck.py --root DIR --hubble BIN [--engines duckdb,spark] [--base V --head V]

For each standard query (rust/fleet/sql/*.sql, the text `hubble fleet` embeds), this runs the
same SQL text with the same parameter substitution on DuckDB (its Python package) and on Apache
Spark (PySpark, local mode), reading the same Parquet files, and requires the rows to equal what
`hubble fleet QUERY --json` printed: integers and strings exactly, floating-point values to a
relative 1e-12 (engines may sum in another order). Exits 1 with the first difference.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SQL_DIR = os.path.join(HERE, "..", "..", "rust", "fleet", "sql")
TABLES = ["traces", "calls", "summaries", "summary_top", "summary_signatures"]


def render(sql, params):
    """The Rust side's substitution: `{name}` → a SQL string literal, quotes doubled."""
    for name, value in params.items():
        sql = sql.replace("{%s}" % name, "'" + value.replace("'", "''") + "'")
    return sql


def normalize(rows):
    out = []
    for row in rows:
        out.append([None if v is None else (float(v) if isinstance(v, float) else
                                              int(v) if isinstance(v, int) else str(v))
                    for v in row])
    return out


def same(a, b):
    if isinstance(a, float) or isinstance(b, float):
        if a is None or b is None:
            return a is b
        return math.isclose(float(a), float(b), rel_tol=1e-12, abs_tol=1e-15)
    return a == b


def compare(engine, query, want, got):
    if len(want) != len(got):
        return "%s %s: %d rows, hubble fleet has %d" % (engine, query, len(got), len(want))
    for i, (w, g) in enumerate(zip(want, got)):
        if len(w) != len(g) or not all(same(x, y) for x, y in zip(w, g)):
            return "%s %s: row %d is %r, hubble fleet has %r" % (engine, query, i, g, w)
    return None


def present_tables(root):
    return [t for t in TABLES
            if os.path.isdir(os.path.join(root, t))
            and any(f.endswith(".parquet") for f in os.listdir(os.path.join(root, t)))]


def duckdb_runner(root):
    import duckdb
    con = duckdb.connect()
    for t in present_tables(root):
        con.execute("CREATE VIEW %s AS SELECT * FROM read_parquet('%s')"
                    % (t, os.path.join(root, t, "*.parquet")))
    return lambda sql: [list(r) for r in con.execute(sql).fetchall()]


def spark_runner(root):
    from pyspark.sql import SparkSession
    spark = (SparkSession.builder.master("local[2]").appName("hubble-crosscheck")
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "4")
             .config("spark.sql.session.timeZone", "UTC")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    for t in present_tables(root):
        spark.read.parquet(os.path.join(root, t)).createOrReplaceTempView(t)
    return lambda sql: [list(r) for r in spark.sql(sql).collect()]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--hubble", required=True)
    ap.add_argument("--engines", default="duckdb,spark")
    ap.add_argument("--base", default="5.1.0")
    ap.add_argument("--head", default="5.2.0")
    ap.add_argument("--queries", default="")
    ap.add_argument("--timings", action="store_true",
                    help="print a markdown table of the median times (scripts/fleet-bench)")
    ap.add_argument("--runs", type=int, default=1, help="runs per query and engine")
    args = ap.parse_args()
    runs = max(1, args.runs)
    params = {"base": args.base, "head": args.head}
    queries = sorted(f[:-4] for f in os.listdir(SQL_DIR) if f.endswith(".sql"))
    if args.queries:
        queries = [q for q in queries if q in args.queries.split(",")]
    expected = {}
    times = {}
    for q in queries:
        sql = open(os.path.join(SQL_DIR, q + ".sql")).read()
        cmd = [args.hubble, "fleet", q, args.root, "--json"]
        if "{base}" in sql:
            cmd += ["--base", args.base, "--head", args.head]
        samples = []
        for _ in range(runs):
            t0 = time.monotonic()
            out = subprocess.run(cmd, capture_output=True, text=True)
            samples.append(time.monotonic() - t0)
            if out.returncode != 0:
                print("hubble fleet %s failed: %s" % (q, out.stderr.strip()), file=sys.stderr)
                return 1
        times[(q, "hubble")] = sorted(samples)[len(samples) // 2]
        expected[q] = (normalize(json.loads(out.stdout)["rows"]), render(sql, params),
                       times[(q, "hubble")])
    failed = False
    for engine in args.engines.split(","):
        t0 = time.monotonic()
        run = {"duckdb": duckdb_runner, "spark": spark_runner}[engine](args.root)
        for q in queries:
            want, sql, hubble_s = expected[q]
            samples = []
            for _ in range(runs):
                t1 = time.monotonic()
                got = normalize(run(sql))
                samples.append(time.monotonic() - t1)
            elapsed = sorted(samples)[len(samples) // 2]
            times[(q, engine)] = elapsed
            problem = compare(engine, q, want, got)
            if problem:
                print("MISMATCH " + problem, file=sys.stderr)
                failed = True
            else:
                print("%-7s %-11s %5d rows equal  (%s %.3f s, hubble fleet %.3f s)"
                      % (engine, q, len(got), engine, elapsed, hubble_s))
        print("%-7s started and ran all in %.1f s" % (engine, time.monotonic() - t0))
    if args.timings:
        engines = args.engines.split(",")
        for q in queries:
            print("| %s | %s |" % (q, " | ".join(
                "%.3f s" % times[(q, e)] for e in ["hubble"] + engines)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
