#!/usr/bin/env python3
# Copyright (C) 2026 Hubble for AOSP
# Licensed under the Apache License, Version 2.0.
"""templates.py's expansion and its refusals, each run through its command line as build runs
it: `python3 -m unittest proving/host-vm/mini-core/test_templates.py` (stage 36)."""

import os
import subprocess
import sys
import tempfile
import unittest

TEMPLATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates.py")


def run(files):
    """templates.py over a java/ tree holding `files` ({relative path: text}): (exit status,
    stderr, {output path: text} or None when it wrote nothing)."""
    with tempfile.TemporaryDirectory() as d:
        java, out = os.path.join(d, "java"), os.path.join(d, "out")
        for rel, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(java, rel)), exist_ok=True)
            with open(os.path.join(java, rel), "w") as f:
                f.write(text)
        p = subprocess.run([sys.executable, TEMPLATES, "--java", java, "--out", out],
                           capture_output=True, text=True)
        written = None
        if os.path.exists(out):
            written = {}
            for dirpath, _, fns in os.walk(out):
                for fn in fns:
                    path = os.path.join(dirpath, fn)
                    with open(path) as f:
                        written[os.path.relpath(path, out)] = f.read()
        return p.returncode, p.stderr, written


class Expansion(unittest.TestCase):
    def test_a_types_template_makes_one_class_per_type(self):
        status, err, out = run({
            "p/Box$Fulltype$.java.template": "//#types int long\n"
                                             "class Box$Fulltype$ { $type$ v; $Type$Op op; }\n",
            "p/Plain.java": "class Plain {}\n",
        })
        self.assertEqual(status, 0, err)
        self.assertEqual(sorted(out), ["p/BoxInteger.java", "p/BoxLong.java", "p/Plain.java"])
        self.assertIn("class BoxInteger { int v; IntOp op; }", out["p/BoxInteger.java"])
        self.assertIn("class BoxLong { long v; LongOp op; }", out["p/BoxLong.java"])
        self.assertEqual(out["p/Plain.java"], "class Plain {}\n")

    def test_for_and_if_pick_each_type_s_lines(self):
        status, err, out = run({
            "A.java.template": "class A {\n"
                               "//#for int double Object\n"
                               "  static $type$ id($type$ x) {\n"
                               "//#if int\n"
                               "    return x + 0;\n"
                               "//#elif double\n"
                               "    return x * 1.0;\n"
                               "//#else\n"
                               "    return x;\n"
                               "//#end\n"
                               "  }\n"
                               "//#end\n"
                               "}\n",
        })
        self.assertEqual(status, 0, err)
        body = out["A.java"]
        self.assertNotIn("//#", body)
        self.assertEqual(body.count("static "), 3)
        for line in ["static int id(int x) {\n    return x + 0;",
                     "static double id(double x) {\n    return x * 1.0;",
                     "static Object id(Object x) {\n    return x;"]:
            self.assertIn(line, body)


class Refusals(unittest.TestCase):
    def refused(self, files, where, why):
        status, err, out = run(files)
        self.assertEqual(status, 2, err)
        self.assertIn(where, err)
        self.assertIn(why, err)
        self.assertIsNone(out, "nothing is written when a template is refused")

    def test_unknown_placeholder(self):
        self.refused({"B$Fulltype$.java.template": "//#types int\nclass B { $Kind$ x; }\n"},
                     "B$Fulltype$.java.template:2:", "unknown placeholder $Kind$")

    def test_placeholder_outside_a_type(self):
        self.refused({"C.java.template": "class C { $type$ x; }\n"},
                     "C.java.template:1:", "outside //#types and //#for")

    def test_unknown_directive(self):
        self.refused({"D.java.template": "class D {\n//#loop int\n}\n"},
                     "D.java.template:2:", "unknown directive //#loop")

    def test_unknown_type(self):
        self.refused({"E.java.template": "//#for int quad\n//#end\n"},
                     "E.java.template:1:", "unknown type 'quad'")

    def test_unbalanced_block(self):
        self.refused({"F.java.template": "class F {\n//#for int\n}\n"},
                     "F.java.template:2:", "//#for has no //#end")

    def test_end_without_a_block(self):
        self.refused({"G.java.template": "//#end\n"},
                     "G.java.template:1:", "//#end without an open")

    def test_types_after_another_directive(self):
        self.refused({"H$Fulltype$.java.template": "//#for int\n//#end\n//#types int\n"},
                     "H$Fulltype$.java.template:3:", "//#types comes once")

    def test_two_sources_for_one_class(self):
        self.refused({"I$Fulltype$.java.template": "//#types int\nclass I$Fulltype$ {}\n",
                      "IInteger.java": "class IInteger {}\n"},
                     "also comes from", "IInteger.java")


if __name__ == "__main__":
    unittest.main()
