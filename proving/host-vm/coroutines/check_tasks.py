#!/usr/bin/env python3
# Copyright (C) 2026 Hubble for AOSP. Licensed under the Apache License, Version 2.0.
"""Checks the coroutine task records of a Hubble trace against the program's own account.

    check_tasks.py HUBBLE TRACE STDOUT

STDOUT holds `queue HASH` (the dispatcher's identity hash code) and, in the order the dispatcher
was called, `task HASH SUBMITTER RUNNER` (the Runnable it was handed, the thread that handed it,
the thread that ran it). `hubble tasks --json TRACE` must hold exactly those tasks on that queue,
begun in that order (the loop runs them as they were queued) and ended on RUNNER, each submitted
by SUBMITTER, and in the order each SUBMITTER dispatched them (two threads dispatching at once are
queued in the order they take the dispatcher's lock, after their records); each submission site
must be the program's own code, not the coroutine machinery's, one site per submitting thread;
and `hubble tasks --each` must list each task identity with as many runs as the program
dispatched it (a coroutine's launch and yields are one identity).
Exits 1 naming the first difference.
"""
import json
import re
import subprocess
import sys

MACHINERY = ("kotlinx.coroutines.", "kotlin.coroutines.")


def fail(msg):
    print(f"check_tasks: {msg}", file=sys.stderr)
    sys.exit(1)


def method_of(signature):
    # "void CoroutinesKt.main(java.lang.String[])" -> "CoroutinesKt.main"
    name = signature.split("(", 1)[0]
    return name.rsplit(" ", 1)[-1]


def main():
    if len(sys.argv) != 4:
        fail("usage: check_tasks.py HUBBLE TRACE STDOUT")
    hubble, trace, out = sys.argv[1:]
    queue, want = None, []
    with open(out) as f:
        for line in f:
            w = line.split()
            if len(w) == 2 and w[0] == "queue":
                queue = int(w[1])
            elif len(w) == 4 and w[0] == "task":
                want.append((int(w[1]), w[2], w[3]))
    if queue is None or not want:
        fail(f"{out}: the program printed no 'queue' or no 'task' line")
    run = subprocess.run([hubble, "tasks", "--json", trace], capture_output=True, text=True)
    if run.returncode != 0:
        fail(f"hubble tasks {trace}: {run.stderr.strip()}")
    report = json.loads(run.stdout)
    names = {t["tid"]: t["thread"] for t in report["threads"]}
    got = sorted((t for t in report["queuing"]["tasks"] if t["queue"] == queue),
                 key=lambda t: t["begun"] if t["begun"] is not None else -1)
    if len(got) != len(want):
        fail(f"{len(got)} tasks on queue {queue:#x} in the trace, the program dispatched {len(want)}")
    sites = {}
    for i, (t, (task, submitter, runner)) in enumerate(zip(got, want)):
        where = f"dispatch {i + 1} of {len(want)} (task {task:#x})"
        if t["task"] != task:
            fail(f"{where}: the trace's task in that place is {t['task']:#x}")
        if names.get(t["submit_tid"]) != submitter:
            fail(f"{where}: submitted on {names.get(t['submit_tid'])}, not {submitter}")
        if t["begun"] is None or t["still_queued"]:
            fail(f"{where}: never begun in the trace")
        if names.get(t["run_tid"]) != runner:
            fail(f"{where}: run on {names.get(t['run_tid'])}, not {runner}")
        if t["ended"] is None or t["running"]:
            fail(f"{where}: still running at the flush")
        if t["begun"] < t["submitted"] or t["ended"] < t["begun"]:
            fail(f"{where}: submitted, begun and ended out of order")
        site = t["site"] or "(none)"
        if site.split(" ", 1)[-1].startswith(MACHINERY) or site.startswith("("):
            fail(f"{where}: its site is {site}, not the program's code")
        sites.setdefault(submitter, set()).add(method_of(site))
    for submitter in {w[1] for w in want}:
        mine = [t for t in got if names.get(t["submit_tid"]) == submitter]
        mine.sort(key=lambda t: t["submitted"])
        if [t["task"] for t in mine] != [w[0] for w in want if w[1] == submitter]:
            fail(f"the tasks {submitter} submitted are not in the order it dispatched them")
    for submitter, s in sites.items():
        if len(s) != 1:
            fail(f"tasks submitted on {submitter} from {len(s)} sites: {sorted(s)}")
    runs = {}
    for task, _, _ in want:
        runs[task] = runs.get(task, 0) + 1
    each = subprocess.run([hubble, "tasks", "--each", trace], capture_output=True, text=True)
    if each.returncode != 0:
        fail(f"hubble tasks --each {trace}: {each.stderr.strip()}")
    listed = {}
    for line in each.stdout.splitlines():
        m = re.match(r"^  task 0x([0-9a-f]+) \(pid \d+\): (\d+) runs?$", line)
        if m:
            listed[int(m.group(1), 16)] = int(m.group(2))
    for task, n in runs.items():
        if listed.get(task) != n:
            fail(f"hubble tasks --each lists task {task:#x} with {listed.get(task)} runs, "
                 f"the program dispatched it {n} times")
    print(f"{len(got)} dispatches paired with their runs in order ("
          + ", ".join(f"{n} from {next(iter(s))} on {w}" for w, s in sorted(sites.items())
                      for n in [sum(1 for x in want if x[1] == w)])
          + f"); {len(runs)} task identities, the most runs of one {max(runs.values())}")


if __name__ == "__main__":
    main()
