#!/usr/bin/env python3
"""Host tests of the Listing-1 benchmark pieces that can run without a device.

* bench_table.py on fixtures/bench-runs.txt, against values worked out by hand below;
* bench_table.py's refusals (no baseline, mismatched shapes, malformed lines);
* HubbleBench (compiled by tests/stages/50-aosp-scripts.sh into $HUBBLE_BENCH_CLASSES) under the
  host JVM: its output format, and that Listing1.Test computes what Listing 1 says (a Python
  reference with Java's long arithmetic).
"""
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_table  # noqa: E402

FIXTURE = os.path.join(HERE, "fixtures", "bench-runs.txt")


def java_long(x):
    x &= (1 << 64) - 1
    return x - (1 << 64) if x >= 1 << 63 else x


def java_div(a, b):
    q = abs(a) // abs(b)
    return java_long(q if (a >= 0) == (b > 0) else -q)


def listing1(depth, work, s):
    while True:
        for i in range(work):
            s = java_long(s * (i - 1))
            s = java_div(s, i + 2)
        if depth > 1:
            depth -= 1
            continue
        return s


class TableArithmetic(unittest.TestCase):
    """Fixture: calls per run = 10 * 1,000,000 = 1e7, so cost = delta_ns / 2e7."""

    @classmethod
    def setUpClass(cls):
        cls.r = bench_table.compute(bench_table.read_runs([FIXTURE]))

    def test_64bit_on(self):
        v = self.r[(64, 0, "tracing on")]
        # base mean 9.0e6; on runs 21.9e6, 22.1e6 -> costs 0.645, 0.655.
        self.assertAlmostEqual(v["cost"], 0.650, places=9)
        self.assertAlmostEqual(v["sd"], 0.005 * 2 ** 0.5, places=9)
        self.assertAlmostEqual(v["overhead"], 13.0 / 9.0 * 100, places=9)
        self.assertEqual(v["calls"], 10_000_000)

    def test_64bit_off(self):
        v = self.r[(64, 0, "tracing off")]
        # off runs 9.15e6, 9.17e6 -> costs 0.0075, 0.0085.
        self.assertAlmostEqual(v["cost"], 0.008, places=9)
        self.assertAlmostEqual(v["overhead"], 0.16 / 9.0 * 100, places=9)

    def test_32bit(self):
        on, off = self.r[(32, 0, "tracing on")], self.r[(32, 0, "tracing off")]
        self.assertAlmostEqual(on["cost"], 0.725, places=9)
        self.assertAlmostEqual(on["overhead"], 145.0, places=9)
        self.assertAlmostEqual(off["cost"], 0.001, places=9)
        self.assertAlmostEqual(off["sd"], 0.002 / 2 ** 0.5, places=9)

    def test_work_10_uses_its_own_calls(self):
        v = self.r[(64, 10, "tracing on")]
        self.assertEqual(v["calls"], 1_000_000)
        self.assertAlmostEqual(v["cost"], 1.3e6 / 2e6, places=9)
        self.assertAlmostEqual(v["overhead"], 2.6, places=9)
        self.assertEqual(v["sd"], 0.0)

    def test_rendered_table(self):
        md = bench_table.render(self.r, "md")
        self.assertIn("| Hubble tracing on | 64-bit | 0.650 | 0.0071 | 144% |", md)
        self.assertIn("| Hubble tracing off | 32-bit | 0.001 | 0.0014 | 0% |", md)
        self.assertIn("| 10 | — | 2.60 | — | 0.03 |", md)


class TableRefusals(unittest.TestCase):
    def run_on(self, text):
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            f.write(text)
        try:
            return bench_table.main([f.name])
        finally:
            os.unlink(f.name)

    def line(self, image="hubble", tracing="on", abi="aarch64", work=0, it=10, ns=100):
        return (f"RESULT image={image} tracing={tracing} abi={abi} work={work} depth=10 "
                f"iterations={it} run=0 ns={ns} sum=0\n")

    def test_no_baseline(self):
        self.assertEqual(self.run_on(self.line()), 1)

    def test_mismatched_iterations(self):
        self.assertEqual(self.run_on(self.line() + self.line(image="base", tracing="off", it=20)), 1)

    def test_missing_field(self):
        self.assertEqual(self.run_on("RESULT image=base tracing=off work=0\n"), 1)

    def test_baseline_cannot_trace(self):
        self.assertEqual(self.run_on(self.line(image="base", tracing="on")), 1)

    def test_no_results(self):
        self.assertEqual(self.run_on("INSTRUMENTATION_CODE: -1\n"), 1)

    def test_good(self):
        self.assertEqual(self.run_on(self.line() + self.line(image="base", tracing="off")), 0)


class Listing1Reference(unittest.TestCase):
    def test_reference_by_hand(self):
        # work 1: each level does s = (s * -1) / 2 (Java truncates toward zero).
        self.assertEqual(listing1(1, 1, 7), -3)
        self.assertEqual(listing1(2, 1, 7), 1)
        self.assertEqual(listing1(10, 0, 7), 7)
        self.assertEqual(listing1(10, 5, 123456789), 0)  # i = 1 multiplies by zero


@unittest.skipUnless(os.environ.get("HUBBLE_BENCH_CLASSES"), "HUBBLE_BENCH_CLASSES not set")
class JavaBench(unittest.TestCase):
    def java(self, *args):
        return subprocess.run(
            ["java", "-cp", os.environ["HUBBLE_BENCH_CLASSES"], "dev.hubble.bench.HubbleBench",
             *args], capture_output=True, text=True, timeout=120)

    def test_sums_match_listing1(self):
        p = self.java("--image", "base", "--work", "0,1,2", "--iterations", "50", "--runs", "2",
                      "--warmup-max", "3", "--seed", "-40")
        self.assertEqual(p.returncode, 0, p.stderr)
        results = [l for l in p.stdout.splitlines() if l.startswith("RESULT ")]
        self.assertEqual(len(results), 6)
        for line in results:
            kv = dict(x.split("=", 1) for x in line.split()[1:])
            work = int(kv["work"])
            want = sum(listing1(10, work, -40 + k) for k in range(50))
            self.assertEqual(int(kv["sum"]), want, line)
            self.assertEqual(kv["iterations"], "50")
        # The table script accepts what the bench prints.
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            f.write(p.stdout)
            f.write(p.stdout.replace("image=base", "image=hubble"))
        try:
            runs = bench_table.read_runs([f.name])
            self.assertEqual(len(runs), 12)
            self.assertEqual(len(bench_table.compute(runs)), 3)
        finally:
            os.unlink(f.name)

    def test_refuses_tracing_on_baseline(self):
        p = self.java("--image", "base", "--tracing", "on")
        self.assertEqual(p.returncode, 2)
        self.assertIn("baseline image has no tracing", p.stderr)

    def test_rejects_bad_work_list(self):
        p = self.java("--image", "base", "--work", "abc")
        self.assertEqual(p.returncode, 2)


if __name__ == "__main__":
    unittest.main()
