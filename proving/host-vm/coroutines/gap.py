#!/usr/bin/env python3
# Copyright (C) 2026 Hubble for AOSP. Licensed under the Apache License, Version 2.0.
"""What a program's dex files need from the platform that mini-core lacks.

    gap.py --core CORE.dex --dex A.dex [--dex B.dex ...] [--loaded FILE] [--root METHOD]...

Reads `dexdump -d` of CORE.dex, mini-core as dx made it, for its classes, their superclass,
interfaces, methods and fields; and `dexdump -d` of every program dex for the references each
method's code makes (invoke-*, field access, new-instance, const-class, check-cast, instance-of,
new-array, filled-new-array, catch types) and the supertypes of its classes.

A reference to a platform class (java/, javax/, sun/, dalvik/, libcore/, android/, jdk/) that
CORE does not define is a missing class; a method or field reference is resolved as ART does
(the class, its superclasses, then its interfaces; program classes that extend platform classes
are walked into the platform) and is missing when that walk ends in platform classes without it.
A method CORE has only as a gen.py skeleton (its body throws UnsupportedOperationException
"mini-core: ... is not implemented") counts as missing too.

Sections printed:
  static    every missing class and member referenced anywhere in the dex files
  run path  (with --loaded) the missing ones reached from --root (default: main of the classes
            whose name ends in Kt and that have one) over the program methods of the loaded
            classes: FILE lists the program classes a run loaded, one dotted name a line (e.g.
            from `java -verbose:class`); a virtual or interface call reaches every loaded
            override of its target; a class reached (new-instance, static access, const-class)
            reaches its <clinit>; methods of loaded classes that override a platform method
            (run, toString, ...) are roots, as the platform may call them.
"""
import argparse
import collections
import re
import subprocess
import sys

PLATFORM = ("Ljava/", "Ljavax/", "Lsun/", "Ldalvik/", "Llibcore/", "Landroid/", "Ljdk/")
REF = re.compile(r"^[0-9a-f]+: [0-9a-f ]+\|[0-9a-f]+: ([a-z0-9/-]+) .*?, (L[^;]+;|\[+(?:L[^;]+;|[ZBCSIJFD]))(?:\.([^:]+):(\S+))? // (method|field|type)@")


def is_platform(desc):
    return desc.lstrip("[").startswith(PLATFORM)


def elem(desc):
    d = desc.lstrip("[")
    return d if d.startswith("L") else None


class Klass:
    def __init__(self, name):
        self.name = name
        self.super = None
        self.interfaces = []
        self.methods = {}  # name:sig -> access string
        self.fields = {}  # name -> type
        self.code = {}  # name:sig -> [(op, kind, cls, member, sig)]
        self.catches = collections.defaultdict(set)


def dexdump(path, code):
    args = ["dexdump", "-d", path] if code else ["dexdump", path]
    out = subprocess.run(args, check=True, capture_output=True, text=True, errors="replace").stdout
    classes = {}
    cur = None
    section = None
    member_name = None
    method_key = None
    for line in out.splitlines():
        m = re.match(r"  Class descriptor  : '(.*)'", line)
        if m:
            cur = classes.setdefault(m.group(1), Klass(m.group(1)))
            section = None
            continue
        if cur is None:
            continue
        m = re.match(r"  Superclass        : '(.*)'", line)
        if m:
            cur.super = m.group(1)
            continue
        s = line.strip()
        if line.startswith("  ") and not line.startswith("    ") and s.endswith("-"):
            section = s.rstrip(" -")
            continue
        if section == "Interfaces":
            m = re.match(r"    #\d+\s+: '(.*)'", line)
            if m:
                cur.interfaces.append(m.group(1))
            continue
        m = re.match(r"      name          : '(.*)'", line)
        if m:
            member_name = m.group(1)
            continue
        m = re.match(r"      type          : '(.*)'", line)
        if m and member_name is not None:
            if section in ("Static fields", "Instance fields"):
                cur.fields[member_name] = m.group(1)
            elif section in ("Direct methods", "Virtual methods"):
                method_key = member_name + ":" + m.group(1)
                cur.methods[method_key] = section
                cur.code[method_key] = []
            member_name = None
            continue
        if code and method_key:
            if "is not implemented" in line and "const-string" in line and '"mini-core: ' in line:
                cur.code[method_key].append(("skeleton", "skeleton", None, None, None))
                continue
            m = REF.match(line)
            if m:
                op, cls, mem, sig, kind = m.groups()
                cur.code[method_key].append((op, kind, cls, mem, sig))
                continue
            m = re.match(r"\s+(L[^;]+;) -> 0x", line)
            if m:
                cur.code[method_key].append(("catch", "type", m.group(1), None, None))
    return classes


class World:
    def __init__(self, core, program):
        self.core = core
        self.program = program

    def get(self, name):
        return self.program.get(name) or self.core.get(name)

    def resolve(self, cls, key, field):
        """(owner found, or None; the first platform class on the way, for the report)."""
        seen = set()
        first_platform = cls if is_platform(cls) else None
        # superclass chain first, then interfaces (breadth-first), as ART's FindMethod does
        chain = []
        c = cls
        while c and c not in seen:
            seen.add(c)
            chain.append(c)
            k = self.get(c)
            if k is None:
                break
            c = k.super
        for c in chain:
            k = self.get(c)
            if first_platform is None and is_platform(c):
                first_platform = c
            if k is None:
                return None, first_platform or c
            if (key in k.fields) if field else (key in k.methods):
                return c, first_platform
        todo = [i for c in chain if self.get(c) for i in self.get(c).interfaces]
        while todo:
            c = todo.pop(0)
            if c in seen:
                continue
            seen.add(c)
            k = self.get(c)
            if k is None:
                continue
            if (key in k.fields) if field else (key in k.methods):
                return c, first_platform
            todo.extend(k.interfaces)
        return None, first_platform

    def supertypes(self, name):
        out, todo = [], [name]
        while todo:
            c = todo.pop()
            if c in out or c is None:
                continue
            out.append(c)
            k = self.get(c)
            if k:
                todo.append(k.super)
                todo.extend(k.interfaces)
        return out


def missing_of(world, refs, why=None):
    """refs: iterable of (kind, cls, member, sig[, from]). Returns {platform class: set(what)};
    with why (a dict), why[(class, what)] collects the program methods that make the reference."""
    miss = collections.defaultdict(set)
    for ref in refs:
        kind, cls, mem, sig = ref[:4]
        src = ref[4] if len(ref) > 4 else None
        before = {c: set(v) for c, v in miss.items()}
        e = elem(cls)
        if e and is_platform(e) and e not in world.core:
            miss[e].add("(class)")
        if kind == "type" or mem is None or cls.startswith("["):
            continue
        if not cls.startswith("L"):
            continue
        key = mem if kind == "field" else mem + ":" + sig
        owner, plat = world.resolve(cls, mem if kind == "field" else key, kind == "field")
        if owner is None and plat is not None:
            if plat not in world.core:
                miss[plat].add("(class)")
            miss[plat].add(("field " if kind == "field" else "") + key)
        elif owner is not None and kind == "method" and owner in world.core and \
                any(r[0] == "skeleton" for r in world.core[owner].code.get(key, [])):
            miss[owner].add(key + "  [skeleton: throws UnsupportedOperationException]")
        for t in re.findall(r"L[^;]+;", sig or ""):
            if is_platform(t) and t not in world.core:
                miss[t].add("(class)")
        if why is not None and src:
            for c, v in miss.items():
                for w in v - before.get(c, set()):
                    why[(c, w)].add(src)
    return miss


def supertype_refs(world):
    for k in world.program.values():
        for s in [k.super] + k.interfaces:
            if s:
                yield ("type", s, None, None)


def all_refs(world):
    for k in world.program.values():
        for refs in k.code.values():
            for op, kind, cls, mem, sig in refs:
                yield (kind, cls, mem, sig)
    yield from supertype_refs(world)


def run_path(world, loaded, roots):
    loaded = set(loaded)
    reached, work, used = set(), [], []
    by_name = collections.defaultdict(list)  # name:sig -> loaded program classes declaring it
    for c in loaded:
        k = world.program.get(c)
        if k:
            for key in k.methods:
                by_name[key].append(c)

    def reach(cls, key):
        if (cls, key) in reached or cls not in loaded:
            return
        k = world.program.get(cls)
        if k is None or key not in k.methods:
            return
        reached.add((cls, key))
        work.append((cls, key))

    def reach_class(cls):
        for s in world.supertypes(cls):
            reach(s, "<clinit>:()V")

    for r in roots:
        cls, key = r.split(".", 1)
        reach(cls, key)
    # platform callbacks: overrides of platform virtual methods in loaded classes
    for c in loaded:
        k = world.program.get(c)
        if not k:
            continue
        plat = [s for s in world.supertypes(c) if is_platform(s)]
        for key, section in k.methods.items():
            if section != "Virtual methods":
                continue
            for p in plat:
                pk = world.core.get(p)
                if pk is None or key in pk.methods:
                    reach(c, key)
                    break
        if c in loaded:
            reach(c, "<clinit>:()V")
    while work:
        cls, key = work.pop()
        for op, kind, rc, mem, sig in world.program[cls].code.get(key, []):
            used.append((kind, rc, mem, sig, cls + "." + key))
            e = elem(rc)
            if e and not is_platform(e):
                reach_class(e) if op in ("new-instance", "const-class") else None
            if kind == "field":
                if op.startswith("s"):
                    reach_class(rc)
                continue
            if kind != "method" or mem is None:
                continue
            mkey = mem + ":" + sig
            owner, _ = world.resolve(rc, mkey, False)
            if op.startswith("invoke-static"):
                reach_class(rc)
            if owner and not is_platform(owner):
                reach(owner, mkey)
            if op.startswith(("invoke-virtual", "invoke-interface", "invoke-super")):
                for c in by_name.get(mkey, []):
                    if rc in world.supertypes(c):
                        reach(c, mkey)
    return used, reached


def show(title, miss, why=None):
    print(f"== {title}: {len(miss)} platform classes with something missing")
    for cls in sorted(miss):
        what = sorted(miss[cls])
        whole = "(class)" in what
        members = [w for w in what if w != "(class)"]
        print(f"  {cls}{'  [class missing]' if whole else ''}")
        if why and whole:
            print(f"          <- {', '.join(sorted(why[(cls, '(class)')])[:3])}")
        for w in members:
            print(f"      {w}")
            if why:
                print(f"          <- {', '.join(sorted(why[(cls, w)])[:3])}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--core", required=True)
    ap.add_argument("--dex", action="append", required=True)
    ap.add_argument("--loaded")
    ap.add_argument("--root", action="append", default=[])
    a = ap.parse_args()
    core = dexdump(a.core, True)
    program = {}
    for d in a.dex:
        program.update(dexdump(d, True))
    world = World(core, program)
    show("static (every reference in the dex files)", missing_of(world, all_refs(world)))
    if a.loaded:
        loaded = ["L" + l.strip().replace(".", "/") + ";" for l in open(a.loaded) if l.strip()]
        roots = a.root or [c + ".main:([Ljava/lang/String;)V" for c in loaded
                           if c.endswith("Kt;") and "main:([Ljava/lang/String;)V" in program.get(c, Klass(c)).methods]
        used, reached = run_path(world, loaded, roots)
        supers = [("type", s, None, None) for c in loaded if c in program
                  for s in [program[c].super] + program[c].interfaces if s]
        print(f"\n({len(reached)} program methods reached from {', '.join(roots)} over {len(loaded)} loaded classes)")
        why = collections.defaultdict(set)
        show("run path", missing_of(world, used + supers, why), why)


if __name__ == "__main__":
    sys.exit(main())
