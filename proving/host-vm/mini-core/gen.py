#!/usr/bin/env python3
# Copyright (C) 2026 Hubble for AOSP
# Licensed under the Apache License, Version 2.0.
"""mini-core generator and checker: the boot class path ART 14 boots imageless.

Reads what ART itself names, in the pinned tree (android-14.0.0_r15):

  runtime/class_root.h                 class roots
  runtime/well_known_classes.{h,cc}    WellKnownClasses::Init/LateInit, the String.<init> ->
                                       StringFactory list
  runtime/runtime.cc                   RegisterRuntimeNativeMethods (which tables), by-name
                                       lookups (see EXTRA below)
  runtime/native/*.cc                  every gMethods[] table: natives, @FastNative/@CriticalNative,
                                       static or instance (from the C++ function's 2nd parameter)
  runtime/intrinsics_list.h            intrinsics and their invoke kinds
  runtime/class_linker.cc              InitWithoutImage/FinishInit: classes, Reference field order
  runtime/class_linker_test.cc         CheckOffsets: the mirror classes' Java fields
  runtime/mirror/*.h                   the C++ members behind them (types, order, offsets) and the
                                       pre-sized classes' ClassSize formulas
  debian/libart.mk                     -D flags that select between ClassSize variants
  runtime/**/*.cc                      exception classes ART throws by descriptor

`generate` merges those requirements with the hand-written sources in java/ (their bodies are ours;
a class body holding the marker `// @generated-members` receives whatever ART requires that the
hand-written code does not declare) and writes skeletons for the classes nobody hand-wrote.
`check` reads the compiled .class files and verifies every requirement, the mirror layouts (by
simulating ClassLinker::LinkFieldsHelper::LinkFields against the C++ member offsets) and the
vtable/static-field sizes of the classes ART allocates pre-sized.
`offsets` prints this model of the C++ mirror layouts, `offsets-cc` a C++ program that prints the
same from ART's headers, compiled (scripts/host-vm-build); tests/layout compares both with the
running VM. `generate --mutate` makes a deliberately wrong layout, for that test's must-fail.

Any table whose shape the parsers do not recognise makes the program exit non-zero, naming the
table and the entry.
"""

import argparse
import json
import os
import re
import struct
import sys

MARKER = "// @generated-members"


class ShapeError(Exception):
    """A table in the ART tree no longer has the shape this generator understands."""


def shape_fail(table, entry, why):
    raise ShapeError(f"{table}: {entry}: {why}")


class CheckError(Exception):
    pass


# ----------------------------------------------------------------------------------------------
# C/C++ text utilities
# ----------------------------------------------------------------------------------------------

def literal_end(text, i):
    """Index just past the string or char literal whose opening quote is text[i]."""
    j = i + 1
    while j < len(text) and text[j] != text[i]:
        j += 2 if text[j] == '\\' else 1
    return j + 1


def strip_c_comments(text, blank_literals=False):
    """Blank out // and /* */ comments (keeping offsets and newlines); with `blank_literals`, the
    insides of string and char literals too (their quotes kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"' or c == "'":
            j = literal_end(text, i)
            out.append(c + " " * (j - i - 2) + c if blank_literals else text[i:j])
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def match_paren(text, open_pos):
    """Index just past the bracket matching text[open_pos] ('(', '{' or '[')."""
    pairs = {"(": ")", "{": "}", "[": "]"}
    stack = [pairs[text[open_pos]]]
    i = open_pos + 1
    n = len(text)
    while i < n:
        c = text[i]
        if c == '"' or c == "'":
            i = literal_end(text, i)
            continue
        if c in pairs:
            stack.append(pairs[c])
        elif c in ")}]":
            if not stack or stack[-1] != c:
                raise ValueError(f"unbalanced {c!r} at {i}")
            stack.pop()
            if not stack:
                return i + 1
        i += 1
    raise ValueError("unterminated bracket")


def split_args(argtext):
    """Split a macro/function argument list at top-level commas."""
    args, depth, cur, i, n = [], 0, [], 0, len(argtext)
    while i < n:
        c = argtext[i]
        if c == '"' or c == "'":
            j = literal_end(argtext, i)
            cur.append(argtext[i:j])
            i = j
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        if c == "," and depth == 0:
            args.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
        i += 1
    last = "".join(cur).strip()
    if last or args:
        args.append(last)
    return args


def find_calls(text, name):
    """Yield (start, [args]) for each call `name(...)` in text (comments already stripped)."""
    for m in re.finditer(r"(?<![\w.>])" + re.escape(name) + r"\s*\(", text):
        open_pos = m.end() - 1
        close = match_paren(text, open_pos)
        yield m.start(), split_args(text[open_pos + 1:close - 1]), close


def c_string(arg):
    """The value of a (possibly concatenated) C string literal, or None."""
    parts = re.findall(r'"((?:[^"\\]|\\.)*)"', arg)
    rest = re.sub(r'"((?:[^"\\]|\\.)*)"', "", arg).strip()
    if not parts or rest:
        return None
    return "".join(parts).encode().decode("unicode_escape")


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def lineno(text, pos):
    return text.count("\n", 0, pos) + 1


# ----------------------------------------------------------------------------------------------
# Descriptors
# ----------------------------------------------------------------------------------------------

PRIMS = {"Z": "boolean", "B": "byte", "C": "char", "S": "short", "I": "int", "J": "long",
         "F": "float", "D": "double", "V": "void"}
PRIM_NAMES = {v: k for k, v in PRIMS.items()}


def parse_method_sig(sig):
    """'(I[Ljava/lang/String;)V' -> (['I', '[Ljava/lang/String;'], 'V')."""
    if not sig.startswith("("):
        raise ValueError(sig)
    i, params = 1, []
    while sig[i] != ")":
        j = i
        while sig[j] == "[":
            j += 1
        if sig[j] == "L":
            j = sig.index(";", j)
        elif sig[j] not in PRIMS:
            raise ValueError(sig)
        params.append(sig[i:j + 1])
        i = j + 1
    ret = sig[i + 1:]
    return params, ret


def desc_classes(desc):
    """Class descriptors named by a field or method descriptor."""
    return [m for m in re.findall(r"L[^;]+;", desc)]


def java_type(desc):
    """Java source type (fully qualified) for a field descriptor."""
    dims = 0
    while desc[dims] == "[":
        dims += 1
    base = desc[dims:]
    if base in PRIMS:
        t = PRIMS[base]
    else:
        t = base[1:-1].replace("/", ".").replace("$", ".")
    return t + "[]" * dims


def simple_name(desc):
    return desc[1:-1].rsplit("/", 1)[-1].rsplit("$", 1)[-1]


def package_of(desc):
    inner = desc[1:-1]
    return inner.rsplit("/", 1)[0] if "/" in inner else ""


def outer_of(desc):
    inner = desc[1:-1]
    base = inner.rsplit("/", 1)[-1]
    if "$" in base:
        return "L" + inner[:inner.rindex("$")] + ";"
    return None


def size_category(desc):
    """Bytes a field of this type takes in an ART object (references are 4)."""
    return {"Z": 1, "B": 1, "C": 2, "S": 2, "I": 4, "F": 4, "J": 8, "D": 8}.get(desc[0], 4)


# ----------------------------------------------------------------------------------------------
# Requirements model
# ----------------------------------------------------------------------------------------------

class Requirements:
    def __init__(self):
        self.classes = {}       # desc -> set(sources)
        self.methods = {}       # (desc, name, sig) -> dict
        self.fields = {}        # (desc, name) -> dict
        self.layouts = {}       # desc -> dict(fields=[(java_name, cpp_offset, cat, cpp_type)], sizeof)
        self.class_sizes = {}   # desc -> dict
        self.field_order = []   # (desc, index, name, type, source)
        self.flags = {}         # desc -> source (must be a plain class; ART sets special flags)
        self.wkc = {}           # WellKnownClasses member -> (desc, name, sig)
        # class_linker_test.cc's CheckOffsets structs, in its order: (struct, mirror class, desc,
        # text as written). Not in the JSON dump: offsets-cc compiles them, nothing else reads them.
        self.offset_structs = []

    def need_class(self, desc, source):
        if not (desc.startswith("L") and desc.endswith(";")):
            raise ValueError(f"not a class descriptor: {desc} ({source})")
        self.classes.setdefault(desc, set()).add(source)
        o = outer_of(desc)
        if o:
            self.need_class(o, f"outer class of {desc}")

    def need_type(self, desc, source):
        for c in desc_classes(desc):
            self.need_class(c, source)

    def need_method(self, desc, name, sig, source, static=None, native=False, fast=False,
                    critical=False, invoke=None):
        try:
            parse_method_sig(sig)
        except (ValueError, IndexError):
            raise ShapeError(f"{source}: {desc}.{name}: unparseable signature {sig!r}")
        self.need_class(desc, source)
        self.need_type(sig, f"signature of {desc}.{name}{sig}")
        key = (desc, name, sig)
        m = self.methods.setdefault(key, {"static": None, "native": False, "fast": False,
                                          "critical": False, "invoke": None, "final": None,
                                          "sources": []})
        for attr, val in (("static", static), ("invoke", invoke)):
            if val is not None:
                if m[attr] is not None and m[attr] != val:
                    raise ShapeError(f"{source}: {desc}.{name}{sig}: {attr}={val} conflicts with "
                                     f"{m[attr]} from {m['sources']}")
                m[attr] = val
        m["native"] |= native
        m["fast"] |= fast
        m["critical"] |= critical
        m["sources"].append(source)
        if m["invoke"] == "static" and m["static"] is False:
            raise ShapeError(f"{source}: {desc}.{name}{sig}: static intrinsic on instance method")
        if m["invoke"] in ("virtual", "direct", "polymorphic", "interface") and m["static"]:
            raise ShapeError(f"{source}: {desc}.{name}{sig}: instance intrinsic on static method")
        if m["invoke"] == "static":
            m["static"] = True
        elif m["invoke"] is not None:
            m["static"] = False

    def need_field(self, desc, name, ftype, static, source, exact_type=True):
        self.need_class(desc, source)
        self.need_type(ftype, f"type of {desc}.{name}")
        key = (desc, name)
        f = self.fields.get(key)
        if f is None:
            self.fields[key] = {"type": ftype, "static": static, "exact": exact_type,
                                "sources": [source]}
            return
        if f["static"] != static:
            raise ShapeError(f"{source}: {desc}.{name}: static={static} conflicts with {f['sources']}")
        if exact_type and f["exact"] and f["type"] != ftype:
            raise ShapeError(f"{source}: {desc}.{name}: type {ftype} conflicts with {f['type']} "
                             f"from {f['sources']}")
        if exact_type and not f["exact"]:
            if size_category(f["type"]) != size_category(ftype) or \
                    (f["type"][0] in "L[") != (ftype[0] in "L["):
                raise ShapeError(f"{source}: {desc}.{name}: type {ftype} conflicts with the mirror "
                                 f"layout's {f['type']}")
            f["type"], f["exact"] = ftype, True
        elif not exact_type and f["exact"]:
            if (f["type"][0] in "L[") != (ftype[0] in "L[") or \
                    size_category(f["type"]) != size_category(ftype):
                raise ShapeError(f"{source}: {desc}.{name}: mirror type {ftype} conflicts with "
                                 f"{f['type']} from {f['sources']}")
        f["sources"].append(source)

    def to_json(self):
        return {
            "classes": {k: sorted(v) for k, v in sorted(self.classes.items())},
            "methods": [dict(cls=k[0], name=k[1], sig=k[2], **v)
                        for k, v in sorted(self.methods.items())],
            "fields": [dict(cls=k[0], name=k[1], **v) for k, v in sorted(self.fields.items())],
            "layouts": self.layouts,
            "class_sizes": self.class_sizes,
            "field_order": self.field_order,
            "flags": self.flags,
        }

    @staticmethod
    def from_json(d):
        r = Requirements()
        r.classes = {k: set(v) for k, v in d["classes"].items()}
        for m in d["methods"]:
            m = dict(m)
            key = (m.pop("cls"), m.pop("name"), m.pop("sig"))
            r.methods[key] = m
        for f in d["fields"]:
            f = dict(f)
            key = (f.pop("cls"), f.pop("name"))
            r.fields[key] = f
        r.layouts = d["layouts"]
        r.class_sizes = d["class_sizes"]
        r.field_order = [tuple(x) for x in d["field_order"]]
        r.flags = d["flags"]
        return r


# ----------------------------------------------------------------------------------------------
# ART parsers
# ----------------------------------------------------------------------------------------------

class Art:
    def __init__(self, root):
        self.root = root
        if not os.path.isfile(self.p("runtime/class_root.h")):
            raise SystemExit(f"gen.py: {root} is not an ART source tree (no runtime/class_root.h)")

    def p(self, rel):
        return os.path.join(self.root, rel)

    def text(self, rel):
        return strip_c_comments(read(self.p(rel)))


def macro_list(table, text, name, param, entry_re, shape):
    """The entries of the X-macro list `#define NAME(PARAM) \\` ... in text (one a line, up to the
    first line that does not end in a backslash), each re.fullmatch'ed by entry_re."""
    m = re.search(r"#define\s+" + name + r"\(" + param + r"\)((?:[^\n]*\\\n)+[^\n]*\n)", text)
    if not m:
        shape_fail(table, name, "macro list not found")
    entries = []
    for line in m.group(1).split("\n"):
        line = line.rstrip("\\").strip()
        if not line:
            continue
        e = re.fullmatch(entry_re, line)
        if not e:
            shape_fail(table, line, f"entry is not {shape}")
        entries.append(e)
    return entries


def parse_class_roots(art, req):
    table = "runtime/class_root.h"
    text = art.text(table)
    roots = {}  # mirror type -> descriptor
    count = 0
    for listname in ("CLASS_MIRROR_ROOT_LIST", "CLASS_NO_MIRROR_ROOT_LIST"):
        for e in macro_list(table, text, listname, "M", r'M\((k\w+),\s*"([^"]+)",\s*(.+)\)',
                            'M(kName, "descriptor", type)'):
            name, desc, mtype = e.group(1), e.group(2), e.group(3).strip()
            count += 1
            roots[mtype.replace("mirror::", "")] = desc
            base = desc.lstrip("[")
            if base.startswith("L"):
                req.need_class(base, f"{table} {name}")
    if count < 40:
        shape_fail(table, "CLASS_ROOT_LIST", f"only {count} roots parsed")
    return roots


MIRROR_TYPE_RE = re.compile(r"mirror::(\w+)")


def parse_well_known(art, req, roots):
    table = "runtime/well_known_classes.cc"
    text = art.text(table)
    header = art.text("runtime/well_known_classes.h")
    declared = {}
    for kind, name in re.findall(r"static\s+(jclass|ArtMethod\*|ArtField\*)\s+(\w+)\s*;", header):
        declared[name] = kind
    if len(declared) < 80:
        shape_fail("runtime/well_known_classes.h", "WellKnownClasses", "members not found")
    resolved = set()

    # jclass members: CacheClass(env, "name")
    for pos, args, end in find_calls(text, "CacheClass"):
        if args[0] == "JNIEnv* env":
            continue  # the definition
        jni = c_string(args[1]) if len(args) == 2 else None
        if jni is None:
            shape_fail(table, f"line {lineno(text, pos)}", "CacheClass(env, \"name\") expected")
        lhs = re.search(r"(\w+)\s*=\s*$", text[:pos])
        if not lhs:
            shape_fail(table, f"line {lineno(text, pos)}", "CacheClass result not assigned")
        resolved.add(lhs.group(1))
        desc = jni if jni.startswith("[") else "L" + jni + ";"
        req.need_type(desc, f"{table} {lhs.group(1)}")

    # Handles: var = hs.NewHandle(FindSystemClass(class_linker, self, "L...;"))
    handles = {}
    for pos, args, end in find_calls(text, "FindSystemClass"):
        if len(args) != 3 or args[0].startswith("ClassLinker"):
            continue
        desc = c_string(args[2])
        if desc is None and re.fullmatch(r"\w+", args[2]):
            continue  # inside a helper's body (CachePrimitiveBoxingMethod)
        if desc is None:
            shape_fail(table, f"line {lineno(text, pos)}", "FindSystemClass with a non-literal")
        m = re.search(r"Handle<mirror::Class>\s+(\w+)\s*=\s*hs\.NewHandle\(\s*$", text[:pos])
        m2 = re.search(r"Handle<mirror::Class>\s+(\w+)\s*=\s*hs\.NewHandle\(\s*$", text[:pos])
        m3 = re.search(r"(\w+)\s*=\s*\n?\s*hs\.NewHandle\(\s*$", text[:pos])
        var = (m or m2 or m3)
        if var:
            handles[var.group(1)] = desc
        req.need_class(desc, table)
    # ObjPtr<mirror::Class> x = GetClassRoot<mirror::T>(class_linker);
    for var, mtype in re.findall(r"ObjPtr<mirror::Class>\s+(\w+)\s*=\s*GetClassRoot<mirror::(\w+)>",
                                 text):
        if mtype not in roots:
            shape_fail(table, var, f"GetClassRoot<mirror::{mtype}> is not a class root")
        handles[var] = roots[mtype]
    # Handle<mirror::Class> x = hs.NewHandle(FindSystemClass(class_linker, self, "..."))  (LateInit)
    # ObjPtr<mirror::Class> x = java_lang_Foo_bar->GetDeclaringClass();
    late_decl = {}
    for var, member in re.findall(
            r"ObjPtr<mirror::Class>\s+(\w+)\s*=\s*(\w+)->GetDeclaringClass\(\)", text):
        late_decl[var] = member

    method_owner = {}

    def cls_of(expr, where):
        expr = expr.strip()
        expr = re.sub(r"\.Get\(\)$", "", expr)
        if expr in handles:
            return handles[expr]
        if expr in late_decl:
            return method_owner[late_decl[expr]]
        shape_fail(table, where, f"cannot tell which class {expr!r} is")

    # Boxing methods.
    for pos, args, end in find_calls(text, "CachePrimitiveBoxingMethod"):
        if args[0].startswith("ClassLinker"):
            continue
        lhs = re.search(r"(\w+)\s*=\s*$", text[:pos])
        prim, boxed = args[2].strip("'"), c_string(args[3])
        if not lhs or prim not in PRIMS or boxed is None:
            shape_fail(table, f"line {lineno(text, pos)}", "CachePrimitiveBoxingMethod shape")
        req.need_method(boxed, "valueOf", f"({prim}){boxed}", f"{table} {lhs.group(1)}",
                        static=True)
        req.wkc[lhs.group(1)] = (boxed, "valueOf", f"({prim}){boxed}")
        method_owner[lhs.group(1)] = boxed
        resolved.add(lhs.group(1))

    for pos, args, end in find_calls(text, "CacheMethod"):
        if args[0].startswith("ObjPtr") or re.search(r"return\s*$", text[:pos]):
            continue  # the definition, or inside a helper's body
        lhs = re.search(r"(\w+)\s*=\s*$", text[:pos])
        where = f"line {lineno(text, pos)}"
        if not lhs or len(args) != 5:
            shape_fail(table, where, "CacheMethod(klass, is_static, name, sig, ptr) expected")
        is_static = {"true": True, "false": False}.get(re.sub(r"/\*.*?\*/", "", args[1]).strip())
        name, sig = c_string(args[2]), c_string(args[3])
        if is_static is None or name is None or sig is None:
            shape_fail(table, f"{lhs.group(1)} ({where})", "unparseable CacheMethod arguments")
        owner = cls_of(args[0], lhs.group(1))
        req.need_method(owner, name, sig, f"{table} {lhs.group(1)}", static=is_static)
        req.wkc[lhs.group(1)] = (owner, name, sig)
        method_owner[lhs.group(1)] = owner
        resolved.add(lhs.group(1))

    for pos, args, end in find_calls(text, "CacheField"):
        if args[0].startswith("ObjPtr"):
            continue
        lhs = re.search(r"(\w+)\s*=\s*$", text[:pos])
        where = f"line {lineno(text, pos)}"
        if not lhs or len(args) != 4:
            shape_fail(table, where, "CacheField(klass, is_static, name, type) expected")
        is_static = {"true": True, "false": False}.get(args[1].strip())
        name, ftype = c_string(args[2]), c_string(args[3])
        if is_static is None or name is None or ftype is None:
            shape_fail(table, f"{lhs.group(1)} ({where})", "unparseable CacheField arguments")
        owner = cls_of(args[0], lhs.group(1))
        req.need_field(owner, name, ftype, is_static, f"{table} {lhs.group(1)}")
        resolved.add(lhs.group(1))

    missing = sorted(n for n in declared if n not in resolved)
    if missing:
        shape_fail(table, ", ".join(missing), "declared in well_known_classes.h but the parser did "
                   "not find how it is initialised")

    # String.<init> -> StringFactory
    n = 0
    for e in macro_list(table, text, "STRING_INIT_LIST", "V",
                        r'V\((\w+),\s*"([^"]+)",\s*(\w+),\s*"(\w+)",\s*"([^"]+)",\s*(\w+)\)',
                        'V(init, "signature", new, "name", "signature", New)'):
        req.need_method("Ljava/lang/String;", "<init>", e.group(2), f"{table} {e.group(1)}",
                        static=False, invoke="direct")
        req.need_method("Ljava/lang/StringFactory;", e.group(4), e.group(5),
                        f"{table} {e.group(3)}", static=True)
        n += 1
    if n < 10:
        shape_fail(table, "STRING_INIT_LIST", f"only {n} entries")
    if "StringFactory" not in text or "FindSystemClass(self, \"Ljava/lang/StringFactory;\")" not in \
            art.text("runtime/class_linker.cc"):
        shape_fail("runtime/class_linker.cc", "CreateStringInitBindings",
                   "no longer binds String.<init> to Ljava/lang/StringFactory;")


NATIVE_MACROS = {
    "NATIVE_METHOD": (3, False, False),
    "FAST_NATIVE_METHOD": (3, True, False),
    "CRITICAL_NATIVE_METHOD": (3, False, True),
    "OVERLOADED_NATIVE_METHOD": (4, False, False),
    "OVERLOADED_FAST_NATIVE_METHOD": (4, True, False),
    "OVERLOADED_CRITICAL_NATIVE_METHOD": (4, False, True),
}


def parse_invokes(art, req):
    """WellKnownClasses::m->InvokeFinal needs a final method; InvokeVirtual a non-final one."""
    n = 0
    for dirpath, _, files in os.walk(art.p("runtime")):
        for fn in files:
            if not fn.endswith(".cc") or fn.endswith("_test.cc"):
                continue
            rel = os.path.relpath(os.path.join(dirpath, fn), art.root)
            text = art.text(rel)
            for name, kind in re.findall(r"WellKnownClasses::(\w+)->Invoke(Final|Virtual)<", text):
                if name not in req.wkc:
                    shape_fail(rel, name, "invoked but not a WellKnownClasses method the parser knows")
                m = req.methods[req.wkc[name]]
                want = kind == "Final"
                if m.get("final") is not None and m["final"] != want:
                    shape_fail(rel, name, "invoked both as final and as virtual")
                m["final"] = want
                m["sources"].append(f"{rel} Invoke{kind}")
                n += 1
    if n < 5:
        shape_fail("runtime/", "WellKnownClasses::*->Invoke*", f"only {n} calls found")


def parse_native_tables(art, req):
    rt = "runtime/runtime.cc"
    rtext = art.text(rt)
    m = re.search(r"void Runtime::RegisterRuntimeNativeMethods\(JNIEnv\* env\) \{(.*?)\n\}", rtext,
                  re.S)
    if not m:
        shape_fail(rt, "RegisterRuntimeNativeMethods", "function not found")
    calls = re.findall(r"(\w+)\(env\);", m.group(1))
    if len(calls) < 25 or any(not c.startswith("register_") for c in calls):
        shape_fail(rt, "RegisterRuntimeNativeMethods", f"unexpected body: {calls}")
    total = 0
    for call in calls:
        fname = f"runtime/native/{call[len('register_'):]}.cc"
        if not os.path.isfile(art.p(fname)):
            shape_fail(rt, call, f"{fname} does not exist")
        text = art.text(fname)
        fm = re.search(r"void " + call + r"\(JNIEnv\* env\) \{(.*?)\n\}", text, re.S)
        if not fm:
            shape_fail(fname, call, "registration function not found")
        reg = re.search(r'REGISTER_NATIVE_METHODS\("([\w/$]+)"\)', fm.group(1))
        if not reg:
            shape_fail(fname, call, "no REGISTER_NATIVE_METHODS(\"class\")")
        cls = "L" + reg.group(1) + ";"
        tm = re.search(r"static JNINativeMethod gMethods\[\] = \{", text)
        if not tm:
            shape_fail(fname, "gMethods", "table not found")
        body = text[tm.end() - 1:match_paren(text, tm.end() - 1)]
        body_inner = body[1:-1]
        if "#" in body_inner:
            shape_fail(fname, "gMethods", "preprocessor conditionals inside the table")
        entries = split_args(body_inner)
        for entry in entries:
            if not entry:
                continue
            em = re.fullmatch(r"(\w+)\((.*)\)", entry, re.S)
            if not em or em.group(1) not in NATIVE_MACROS:
                shape_fail(fname, entry[:80], "unknown native table entry macro")
            nargs, fast, critical = NATIVE_MACROS[em.group(1)]
            args = split_args(em.group(2))
            if len(args) != nargs:
                shape_fail(fname, entry[:80], f"{em.group(1)} takes {nargs} arguments")
            cname, jname, sig = args[0], args[1], c_string(args[2])
            ident = args[3] if nargs == 4 else args[1]
            if sig is None or sig.startswith("!"):
                shape_fail(fname, entry[:80], "signature is not a plain literal")
            func = f"{cname}_{ident}"
            fdef = re.search(r"\b" + re.escape(func) + r"\s*\(\s*JNIEnv\s*\*", text)
            if not fdef:
                shape_fail(fname, func, "C++ function definition not found")
            open_pos = text.index("(", fdef.start())
            params = split_args(text[open_pos + 1:match_paren(text, open_pos) - 1])
            if critical:
                static = True
            else:
                if len(params) < 2:
                    shape_fail(fname, func, "a JNI function needs (JNIEnv*, jclass|jobject, ...)")
                second = params[1].replace("ATTRIBUTE_UNUSED", "").split()[0]
                if second == "jclass":
                    static = True
                elif second in ("jobject", "jstring", "jthrowable", "jobjectArray"):
                    static = False
                else:
                    shape_fail(fname, func, f"second parameter {params[1]!r}: static or not?")
            # RegisterNatives matches name and signature only: static-ness is a hint for the
            # declarations gen.py writes (from the C++ function's second parameter), not a check.
            req.need_method(cls, jname, sig, f"{fname} gMethods", native=True, fast=fast,
                            critical=critical, static=True if critical else None)
            req.methods[(cls, jname, sig)]["static_hint"] = static
            total += 1
    if total < 300:
        shape_fail("runtime/native", "gMethods", f"only {total} natives parsed")
    return total


INVOKE_KINDS = {"kStatic": "static", "kVirtual": "virtual", "kDirect": "direct",
                "kInterface": "interface", "kPolymorphic": "polymorphic", "kSuper": "super"}


def parse_intrinsics(art, req):
    table = "runtime/intrinsics_list.h"
    text = art.text(table)
    n = 0
    for m in re.finditer(r"^\s*V\(([^\n]*)\)\s*\\?$", text, re.M):
        args = split_args(m.group(1))
        if len(args) != 8:
            shape_fail(table, m.group(1)[:60], "intrinsic entries have 8 fields")
        name, kind = args[0], args[1]
        cls, mname, sig = c_string(args[5]), c_string(args[6]), c_string(args[7])
        if kind not in INVOKE_KINDS or kind == "kSuper" or None in (cls, mname, sig):
            shape_fail(table, name, "unrecognised invoke kind or non-literal class/name/signature")
        invoke = INVOKE_KINDS[kind]
        req.need_method(cls, mname, sig, f"{table} {name}", invoke=invoke,
                        native=(invoke == "polymorphic"))
        n += 1
    if n < 200:
        shape_fail(table, "INTRINSICS_LIST", f"only {n} intrinsics parsed")
    if "InitializeIntrinsics();" not in art.text("runtime/runtime.cc"):
        shape_fail("runtime/runtime.cc", "Start", "no longer calls InitializeIntrinsics()")
    return n


def parse_class_linker(art, req):
    table = "runtime/class_linker.cc"
    text = art.text(table)
    m = re.search(r"bool ClassLinker::InitWithoutImage\((.*?)\nvoid ClassLinker::FinishInit", text,
                  re.S)
    fm = re.search(r"void ClassLinker::FinishInit\(Thread\* self\) \{(.*?)\n\}", text, re.S)
    if not m or not fm:
        shape_fail(table, "InitWithoutImage/FinishInit", "not found")
    body = m.group(1) + fm.group(1)
    for desc in re.findall(r'(?:FindSystemClass|CheckSystemClass)\(self,\s*(?:\w+,\s*)?"([^"]+)"\)',
                           body):
        req.need_type(desc, f"{table} InitWithoutImage")
    # Classes ART flags as special references: must be plain (kClassFlagNormal) classes.
    for desc in re.findall(r'class_root = FindSystemClass\(self, "([^"]+)"\);\s*'
                           r'CHECK_EQ\(class_root->GetClassFlags\(\), mirror::kClassFlagNormal\)',
                           body):
        req.flags[desc] = f"{table} InitWithoutImage"
    if len(req.flags) != 4:
        shape_fail(table, "InitWithoutImage", f"expected 4 special reference classes, found "
                   f"{sorted(req.flags)}")
    # FinishInit's hard-coded field indexes.
    hmap = {}
    for var, mtype in re.findall(r"Handle<mirror::Class>\s+(\w+)\s*=\s*\n?\s*hs\.NewHandle\("
                                 r"GetClassRoot<mirror::(\w+)>", fm.group(1)):
        hmap[var] = {"Reference": "Ljava/lang/ref/Reference;"}.get(mtype)
    for var, desc in re.findall(r"Handle<mirror::Class>\s+(\w+)\s*=\s*\n?\s*hs\.NewHandle\("
                                r"FindSystemClass\(self, \"([^\"]+)\"\)\)", fm.group(1)):
        hmap[var] = desc
    checks = re.findall(r"ArtField\* (\w+) = (\w+)->GetInstanceField\((\d+)\);\s*"
                        r"CHECK_STREQ\(\1->GetName\(\), \"(\w+)\"\);\s*"
                        r"CHECK_STREQ\(\1->GetTypeDescriptor\(\), \"([^\"]+)\"\);", fm.group(1))
    if len(checks) != fm.group(1).count("GetInstanceField(") or len(checks) < 4:
        shape_fail(table, "FinishInit", "GetInstanceField/CHECK_STREQ checks changed shape")
    for var, handle, idx, name, ftype in checks:
        desc = hmap.get(handle)
        if not desc:
            shape_fail(table, f"FinishInit {var}", f"unknown class handle {handle}")
        req.field_order.append((desc, int(idx), name, ftype, f"{table} FinishInit {var}"))
        req.need_field(desc, name, ftype, False, f"{table} FinishInit {var}")


# mirror C++ type -> Java descriptor, for the layout fields no other table types more exactly.
MIRROR_REF_TYPES = {
    "Class": "Ljava/lang/Class;", "String": "Ljava/lang/String;", "Object": "Ljava/lang/Object;",
    "ClassLoader": "Ljava/lang/ClassLoader;", "DexCache": "Ljava/lang/DexCache;",
    "ClassExt": "Ldalvik/system/ClassExt;", "IfTable": "[Ljava/lang/Object;",
    "PointerArray": "Ljava/lang/Object;", "Throwable": "Ljava/lang/Throwable;",
    "ObjectArray<DexCache>": "[Ljava/lang/DexCache;", "ObjectArray<Class>": "[Ljava/lang/Class;",
    "ObjectArray<Object>": "[Ljava/lang/Object;", "ByteArray": "[B", "Array": "[Ljava/lang/Object;",
    "MethodType": "Ljava/lang/invoke/MethodType;", "MethodHandle": "Ljava/lang/invoke/MethodHandle;",
    "Reference": "Ljava/lang/ref/Reference;",
    "FinalizerReference": "Ljava/lang/ref/FinalizerReference;",
    "StackTraceElement": "Ljava/lang/StackTraceElement;",
}
CPP_PRIMS = {"uint8_t": ("Z", 1), "bool": ("Z", 1), "int8_t": ("B", 1), "uint16_t": ("S", 2),
             "int16_t": ("S", 2), "uint32_t": ("I", 4), "int32_t": ("I", 4), "uint64_t": ("J", 8),
             "int64_t": ("J", 8), "float": ("F", 4), "double": ("D", 8),
             "pid_t": ("I", 4)}


def parse_mirror_classes(art):
    """C++ mirror classes: name -> dict(desc, base, members=[(cpp_name, type, size, align, count)])."""
    classes = {}
    mdir = art.p("runtime/mirror")
    for fn in sorted(os.listdir(mdir)):
        if not fn.endswith(".h"):
            continue
        text = strip_c_comments(read(os.path.join(mdir, fn)))
        for cm in re.finditer(r"class MANAGED(?: LOCKABLE)? (\w+)(?: final)?(?: : public (\w+))?\s*\{",
                              text):
            name, base = cm.group(1), cm.group(2)
            open_pos = cm.end() - 1
            body = text[open_pos + 1:match_paren(text, open_pos) - 1]
            # Depth-1 statements only.
            flat, depth = [], 0
            for c in body:
                if c == "{":
                    depth += 1
                    flat.append("{" if depth == 1 else "")
                    continue
                if c == "}":
                    depth -= 1
                    flat.append("};" if depth == 0 else "")
                    continue
                if depth == 0:
                    flat.append(c)
            flat = "".join(flat)
            # Anonymous unions at depth 1 (String::value_) are variable-length data: size 0.
            members, unparsed = [], []
            desc_m = re.search(r'MIRROR_CLASS\("([^"]+)"\)', body)
            for stmt in flat.split(";"):
                s = " ".join(stmt.split())
                s = re.sub(r"^(public|private|protected):\s*", "", s)
                mm = re.fullmatch(r"(?:mutable )?(HeapReference<.+>|[\w:]+) (\w+_)(\[(\d+)\])?"
                                  r"(?: ATTRIBUTE_UNUSED)?", s)
                if not mm:
                    # Anything else that still looks like a data member would shift the offsets
                    # gen.py computes: refuse to guess.
                    if re.fullmatch(r"(?!static |using |friend |typedef |template|enum |class |"
                                    r"struct |return )[\w:<>,* ]+ \w+_(\[\w*\])?"
                                    r"( \w+(\(.*\))?)*", s):
                        unparsed.append(s)
                    continue
                ctype, cname, arr = mm.group(1), mm.group(2), mm.group(4)
                if ctype.startswith("HeapReference<"):
                    size = align = 4
                    inner = ctype[len("HeapReference<"):-1].replace("mirror::", "").strip()
                    jt = MIRROR_REF_TYPES.get(inner)
                    if jt is None:
                        shape_fail(f"runtime/mirror/{fn}", f"{name}::{cname}",
                                   f"no Java type for HeapReference<{inner}>")
                elif ctype in CPP_PRIMS:
                    jt, size = CPP_PRIMS[ctype]
                    align = size
                else:
                    shape_fail(f"runtime/mirror/{fn}", f"{name}::{cname}",
                               f"member of C++ type {ctype} has no Java counterpart in gen.py")
                count = int(arr) if arr is not None else 1
                members.append((cname, jt, size, align, count))
            classes[name] = {"desc": desc_m.group(1) if desc_m else None, "base": base,
                             "members": members, "unparsed": unparsed,
                             "file": f"runtime/mirror/{fn}"}
    return classes


def cpp_layout(mirror, name):
    """(offsets{cpp_name: offset}, dsize, sizeof, align) of a mirror class. Mirror classes are
    MANAGED = PACKED(4) (runtime/mirror/object_reference.h): members follow each other with no
    padding (the headers spell out the padding they need), a derived class's members start at the
    end of its base's data, and the whole class is 4-byte aligned."""
    c = mirror[name]
    if c["unparsed"]:
        # Anything else that still looks like a data member would shift the offsets computed
        # here: refuse to guess.
        shape_fail(c["file"], f"{name}: {c['unparsed'][0]}", "a data member gen.py cannot parse")
    if c["base"]:
        offs, dsize, _, _ = cpp_layout(mirror, c["base"])
        offs = dict(offs)
    else:
        offs, dsize = {}, 0
    for cname, jt, size, al, count in c["members"]:
        offs[cname] = dsize
        dsize += size * count
    sizeof = (dsize + 3) // 4 * 4
    return offs, dsize, sizeof, 4


def parse_check_offsets(art, req):
    table = "runtime/class_linker_test.cc"
    text = art.text(table)
    if "#define MANAGED PACKED(4)" not in art.text("runtime/mirror/object_reference.h") or \
            "#define PACKED(x) __attribute__ ((__aligned__(x), __packed__))" not in \
            art.text("libartbase/base/macros.h"):
        shape_fail("runtime/mirror/object_reference.h", "MANAGED",
                   "mirror classes are no longer PACKED(4): gen.py's C++ layout model is stale")
    mirror = parse_mirror_classes(art)
    structs = list(re.finditer(
        r"struct (\w+) : public CheckOffsets<mirror::(\w+)> \{\s*\w+\(\) : CheckOffsets<mirror::\w+>"
        r"\(\s*(false|true),\s*\"([^\"]+)\"\) \{(.*?)\n  \}\n\};", text, re.S))
    used = re.findall(r"EXPECT_TRUE\((\w+)\(\)\.Check\(\)\);", text)
    if len(structs) < 20 or not set(used) <= set(s.group(1) for s in structs):
        shape_fail(table, "CheckOffsets", f"structs {[s.group(1) for s in structs]} vs checks {used}")
    # SIZE_UNCHECKED mirrors this condition of CheckOffsets::Check; offsets-cc and the layout test
    # print a size for every other class.
    if SIZE_RULE not in text:
        shape_fail(table, "CheckOffsets::Check",
                   f"no longer sizes every class but by '{SIZE_RULE}'")
    for s in structs:
        sname, mname, is_static, desc, body = s.groups()
        if is_static != "false":
            shape_fail(table, sname, "static CheckOffsets are not modelled")
        if mname not in mirror:
            shape_fail(table, sname, f"mirror::{mname} not found in runtime/mirror/*.h")
        offs, dsize, sizeof, _ = cpp_layout(mirror, mname)
        allm = {}
        k = mname
        while k:
            for mem in mirror[k]["members"]:
                allm[mem[0]] = mem
            k = mirror[k]["base"]
        entries = []
        for e in re.finditer(r"addOffset\((.*?)\);", body, re.S):
            args = split_args(e.group(1))
            jname = c_string(args[1]) if len(args) == 2 else None
            om = re.fullmatch(r"OFFSETOF_MEMBER\(mirror::(\w+),\s*(\w+)\)", args[0].strip()) \
                if len(args) == 2 else None
            fm = re.fullmatch(r"mirror::(\w+)::FlagOffset\(\)\.Uint32Value\(\)", args[0].strip()) \
                if len(args) == 2 else None
            if jname is None or not (om or fm):
                shape_fail(table, f"{sname} {e.group(1)[:60]}", "addOffset shape")
            cname = om.group(2) if om else "flag_"
            if cname not in allm or cname not in offs:
                shape_fail(table, f"{sname} {jname}", f"C++ member {cname} not parsed from the header")
            _, jt, size, _, _ = allm[cname]
            entries.append((jname, offs[cname], jt, cname))
            req.need_field(desc, jname, jt, False, f"{table} {sname}", exact_type=False)
        if sorted(x[0] for x in entries) != [x[0] for x in entries]:
            shape_fail(table, sname, "entries are no longer in Java (alphabetical) field order")
        req.need_class(desc, f"{table} {sname}")
        req.layouts[desc] = {"fields": entries, "sizeof": sizeof, "cpp": mname,
                             "source": f"{table} {sname}"}
        req.offset_structs.append((sname, mname, desc, s.group(0)))
    # The StackFrameInfo root is for the class linker test only; it stays checked when present.
    return mirror


# CheckOffsets::Check compares sizeof(T) with the Java object size (rounded up to 4) for every
# class but these two: Class has its embedded vtable and static fields after the members, a
# String its characters.
SIZE_RULE = "if (!klass->IsClassClass() && !klass->IsStringClass() && !is_static) {"
SIZE_UNCHECKED = ("Ljava/lang/Class;", "Ljava/lang/String;")


def binary_name(desc):
    """Ljava/lang/invoke/MethodHandles$Lookup; -> java.lang.invoke.MethodHandles$Lookup, the name
    Class.forName takes (and the layout test prints)."""
    return desc[1:-1].replace("/", ".")


def model_offsets(req):
    """gen.py's model of the C++ layout (cpp_layout), one line per CheckOffsets entry and one per
    checked size, in the format of the compiled dumper (offsets_cc) and of tests/layout."""
    lines = []
    for _, _, desc, _ in req.offset_structs:
        lay = req.layouts[desc]
        for jname, off, _, _ in lay["fields"]:
            lines.append(f"{binary_name(desc)} {jname} {off}")
        if desc not in SIZE_UNCHECKED:
            lines.append(f"{binary_name(desc)} (size) {lay['sizeof']}")
    return lines


def offsets_cc(art, req, mirror):
    """C++ source that prints what ART's C++ says the mirror layouts are: class_linker_test.cc's
    CheckOffsets structs, copied as written (their names are the ones the mirror classes befriend,
    `friend struct art::ClassOffsets;`, so they may name private members), over a CheckOffsets
    that prints each addOffset instead of comparing it with a running class linker, then the
    size where CheckOffsets::Check compares it. Compiled with libart's own flags against the tree
    (scripts/host-vm-build), so every offset is the compiler's, not gen.py's model."""
    headers = sorted({mirror[m]["file"][len("runtime/"):] for _, m, _, _ in req.offset_structs})
    out = [
        "// Generated by proving/host-vm/mini-core/gen.py offsets-cc from the ART tree's",
        "// runtime/class_linker_test.cc: do not edit. Prints `<class> <field> <offset>` for every",
        "// CheckOffsets entry and `<class> (size) <sizeof>` where CheckOffsets::Check compares",
        "// sizes.",
        "#include <cstddef>",
        "#include <cstdio>",
        "#include <cstdlib>",
        "#include <string>",
        "",
        '#include "base/macros.h"',
    ] + [f'#include "{h}"' for h in headers] + [
        "",
        "namespace art {",
        "",
        "template <typename T>",
        "struct CheckOffsets {",
        "  CheckOffsets(bool is_static, const char* descriptor) : name_(descriptor) {",
        "    // gen.py refuses static CheckOffsets; a descriptor is L<binary name with />;",
        "    if (is_static || name_.size() < 3) abort();",
        "    name_ = name_.substr(1, name_.size() - 2);",
        "    for (char& c : name_) c = c == '/' ? '.' : c;",
        "  }",
        "  void addOffset(size_t offset, const char* java_name) {",
        '    printf("%s %s %zu\\n", name_.c_str(), java_name, offset);',
        "  }",
        "  void PrintSize(bool checked) {",
        '    if (checked) printf("%s (size) %zu\\n", name_.c_str(), sizeof(T));',
        "  }",
        "  std::string name_;",
        "};",
        "",
    ]
    for sname, _, _, text in req.offset_structs:
        out += [text, ""]
    out += ["}  // namespace art", "", "int main() {"]
    for sname, _, desc, _ in req.offset_structs:
        out.append(f"  art::{sname}().PrintSize({'false' if desc in SIZE_UNCHECKED else 'true'});")
    out += ["  return fflush(stdout) == 0 ? 0 : 1;", "}", ""]
    return "\n".join(out)


def libart_defines(art):
    mk = art.p("debian/libart.mk")
    if not os.path.isfile(mk):
        shape_fail("debian/libart.mk", "CPPFLAGS", "missing: cannot tell which -D flags ART uses")
    return set(re.findall(r"-D(\w+)(?:=\S*)?", read(mk)))


def eval_ifdefs(text, defines):
    """Keep the lines an #ifdef/#ifndef/#else/#endif nest selects (no #if expressions)."""
    out, stack = [], []
    for line in text.split("\n"):
        s = line.strip()
        m = re.match(r"#\s*(ifdef|ifndef)\s+(\w+)", s)
        if m:
            on = (m.group(2) in defines) == (m.group(1) == "ifdef")
            stack.append([on, True])
            continue
        if re.match(r"#\s*else\b", s) and stack:
            stack[-1][0] = not stack[-1][0]
            continue
        if re.match(r"#\s*endif\b", s) and stack:
            stack.pop()
            continue
        if all(x[0] for x in stack):
            out.append(line)
    return "\n".join(out)


CLASS_SIZE_SOURCES = {
    "Ljava/lang/Object;": ("runtime/mirror/object-inl.h", "Object"),
    "Ljava/lang/Class;": ("runtime/mirror/class.h", "ClassClassSize"),
    "Ljava/lang/String;": ("runtime/mirror/string-inl.h", "String"),
    "Ljava/lang/DexCache;": ("runtime/mirror/dex_cache-inl.h", "DexCache"),
    "Ldalvik/system/ClassExt;": ("runtime/mirror/class_ext.cc", "ClassExt"),
    "Ljava/lang/ref/Reference;": ("runtime/mirror/reference-inl.h", "Reference"),
}


def parse_class_sizes(art, req):
    defines = libart_defines(art)
    otext = art.text("runtime/mirror/object.h")
    km = re.search(r"static constexpr size_t kVTableLength = (\d+);", otext)
    if not km:
        shape_fail("runtime/mirror/object.h", "kVTableLength", "not found")
    kvt = int(km.group(1))
    for desc, (fn, fname) in CLASS_SIZE_SOURCES.items():
        text = eval_ifdefs(art.text(fn), defines)
        if fname == "ClassClassSize":
            fm = re.search(r"static uint32_t ClassClassSize\(PointerSize pointer_size\) \{(.*?)\n  \}",
                           text, re.S)
        else:
            fm = re.search(r"uint32_t " + fname + r"::ClassSize\(PointerSize pointer_size\) \{(.*?)\n\}",
                           text, re.S)
        if not fm:
            shape_fail(fn, f"{fname}::ClassSize", "function not found")
        body = fm.group(1)
        vm = re.search(r"vtable_entries = (?:Object::)?kVTableLength(?: \+ (\d+))?;", body)
        cm = re.search(r"ComputeClassSize\((true|false), vtable_entries, (\d+), (\d+), (\d+), (\d+), "
                       r"(\d+), pointer_size\)", body)
        if not vm or not cm or body.count("vtable_entries =") != 1:
            shape_fail(fn, f"{fname}::ClassSize", "body changed shape")
        req.class_sizes[desc] = {
            "embedded_vtable": cm.group(1) == "true",
            "vtable": kvt + int(vm.group(1) or 0),
            "s8": int(cm.group(2)), "s16": int(cm.group(3)), "s32": int(cm.group(4)),
            "s64": int(cm.group(5)), "sref": int(cm.group(6)),
            "source": f"{fn} {fname}::ClassSize" + (" (USE_D8_DESUGAR)" if "USE_D8_DESUGAR" in
                                                     defines and fname == "String" else ""),
        }
        req.need_class(desc, fn)
    return kvt


def parse_thrown_exceptions(art, req):
    """Exception classes runtime/ names by descriptor (ThrowNewException & co)."""
    found = set()
    for dirpath, _, files in os.walk(art.p("runtime")):
        for fn in files:
            if not fn.endswith((".cc", ".h")) or fn.endswith("_test.cc") or "test" in dirpath:
                continue
            text = read(os.path.join(dirpath, fn))
            for d in re.findall(r'"(L[\w/$]+(?:Exception|Error);)"', text):
                found.add(d)
            for d in re.findall(r'"((?:java|dalvik|libcore)/[\w/$]+(?:Exception|Error))"', text):
                found.add("L" + d + ";")
    for d in sorted(found):
        req.need_class(d, "runtime/ (exception named by descriptor)")
    return found


# By-name lookups outside the tables above. Each entry carries the ART text that makes it a
# requirement: if that text changes, the entry is stale and generation fails.
EXTRA = [
    ("runtime/runtime.cc", r'FindClassMethod\(\s*"getSystemClassLoader", "\(\)Ljava/lang/ClassLoader;"',
     ("method", "Ljava/lang/ClassLoader;", "getSystemClassLoader", "()Ljava/lang/ClassLoader;",
      True)),
    ("runtime/runtime.cc",
     r'FindDeclaredInstanceField\("contextClassLoader", "Ljava/lang/ClassLoader;"\)',
     ("field", "Ljava/lang/Thread;", "contextClassLoader", "Ljava/lang/ClassLoader;", False)),
    ("runtime/runtime.cc", r'FindDeclaredInstanceField\("detailMessage", "Ljava/lang/String;"\)',
     ("field", "Ljava/lang/Throwable;", "detailMessage", "Ljava/lang/String;", False)),
    ("runtime/class_linker.cc", r'FindSystemClass\(self, "Ljava/lang/Cloneable;"\)',
     ("interface", "Ljava/lang/Cloneable;")),
    ("runtime/class_linker.cc", r'FindSystemClass\(self, "Ljava/io/Serializable;"\)',
     ("interface", "Ljava/io/Serializable;")),
    ("runtime/jni/jni_internal.cc",
     r'GetMethodID\(exception_class\.get\(\), "printStackTrace", "\(\)V"\)',
     ("method", "Ljava/lang/Throwable;", "printStackTrace", "()V", False)),
    ("dalvikvm/dalvikvm.cc", r'GetMethodID\(method_class, "getModifiers", "\(\)I"\)',
     ("method", "Ljava/lang/reflect/Method;", "getModifiers", "()I", False)),
    ("runtime/native/java_lang_reflect_Constructor.cc",
     r'GetMethodID\(ctorClass, "<init>", "\(\)V"\)', ("class", "Ljava/lang/InstantiationException;")),
]


def parse_extra(art, req):
    interfaces = set()
    for fn, pattern, what in EXTRA:
        if not re.search(pattern, art.text(fn)):
            shape_fail(fn, pattern, "EXTRA entry in gen.py no longer matches the ART source")
        src = f"{fn} (gen.py EXTRA)"
        if what[0] == "method":
            req.need_method(what[1], what[2], what[3], src, static=what[4])
        elif what[0] == "field":
            req.need_field(what[1], what[2], what[3], what[4], src)
        else:
            req.need_class(what[1], src)
            if what[0] == "interface":
                interfaces.add(what[1])
    return interfaces


def collect(art_root):
    art = Art(art_root)
    req = Requirements()
    roots = parse_class_roots(art, req)
    parse_well_known(art, req, roots)
    parse_invokes(art, req)
    natives = parse_native_tables(art, req)
    intrinsics = parse_intrinsics(art, req)
    parse_class_linker(art, req)
    parse_check_offsets(art, req)
    parse_class_sizes(art, req)
    parse_thrown_exceptions(art, req)
    interfaces = parse_extra(art, req)
    stats = {"natives": natives, "intrinsics": intrinsics, "classes": len(req.classes),
             "methods": len(req.methods), "fields": len(req.fields)}
    return req, stats, interfaces


# ----------------------------------------------------------------------------------------------
# A light parser for the hand-written Java sources: their types and member declarations, enough
# to know which required members they already declare.
# ----------------------------------------------------------------------------------------------

def java_blank(text):
    """Blank comments and the insides of string/char literals, keeping offsets."""
    return strip_c_comments(text, blank_literals=True)


TOKEN_RE = re.compile(r"[A-Za-z_$][\w$]*|\d[\w.]*|\.\.\.|[^\s]")
MODIFIERS = {"public", "private", "protected", "static", "final", "abstract", "native",
             "synchronized", "transient", "volatile", "strictfp", "default"}


class JMember:
    def __init__(self, kind, name, mods, rtype, params, varargs, pos):
        self.kind, self.name, self.mods, self.rtype = kind, name, mods, rtype
        self.params, self.varargs, self.pos = params, varargs, pos


class JClass:
    def __init__(self, name, kind, mods, outer, path):
        self.name, self.kind, self.mods, self.outer, self.path = name, kind, mods, outer, path
        self.extends, self.implements, self.type_params = None, [], {}
        self.members, self.nested = [], []
        self.marker = None          # offset in the file where generated members go
        self.body_start = None      # offset of the opening brace
        self.body_end = None        # offset of the closing brace
        self.desc = None


class JFile:
    def __init__(self, path, text):
        self.path, self.text = path, text
        self.package, self.imports, self.star_imports, self.classes = "", {}, [], []


def tokenize(blank):
    return [(m.group(0), m.start()) for m in TOKEN_RE.finditer(blank)]


def skip_balanced(toks, i, open_t, close_t):
    depth = 0
    while i < len(toks):
        t = toks[i][0]
        if t == open_t:
            depth += 1
        elif t == close_t:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise ValueError("unbalanced " + open_t)


def skip_annotation(toks, i):
    # toks[i] == '@'
    i += 1
    while i + 1 < len(toks) and toks[i + 1][0] == ".":
        i += 2
    i += 1
    if i < len(toks) and toks[i][0] == "(":
        i = skip_balanced(toks, i, "(", ")")
    return i


def split_commas(toks):
    """The token texts of toks, split at the commas outside <...>: [[text, ...], ...]."""
    parts, depth, cur = [], 0, []
    for t, _ in toks:
        if t == "<":
            depth += 1
        elif t == ">":
            depth -= 1
        if t == "," and depth == 0:
            parts.append(cur)
            cur = []
        else:
            cur.append(t)
    parts.append(cur)
    return parts


def parse_type_params(toks, i):
    """toks[i] == '<': returns (index after '>', {name: bound_tokens})."""
    end = skip_balanced(toks, i, "<", ">")
    params = {}
    for part in split_commas(toks[i + 1:end - 1]):
        if not part:
            continue
        bound = None
        if "extends" in part:
            k = part.index("extends")
            bound = part[k + 1:]
            if "&" in bound:
                bound = bound[:bound.index("&")]
        params[part[0]] = bound
    return end, params


def type_text(tokens):
    return "".join(tokens)


def parse_java_file(path):
    text = read(path)
    blank = java_blank(text)
    toks = tokenize(blank)
    jf = JFile(path, text)
    i = 0
    while i < len(toks):
        t = toks[i][0]
        if t == "package":
            j = i + 1
            while toks[j][0] != ";":
                j += 1
            jf.package = "".join(x[0] for x in toks[i + 1:j])
            i = j + 1
        elif t == "import":
            j = i + 1
            static = toks[j][0] == "static"
            if static:
                j += 1
            k = j
            while toks[k][0] != ";":
                k += 1
            name = "".join(x[0] for x in toks[j:k])
            if not static:
                if name.endswith(".*"):
                    jf.star_imports.append(name[:-2])
                else:
                    jf.imports[name.rsplit(".", 1)[-1]] = name
            i = k + 1
        else:
            c, i = parse_type_decl(toks, i, jf, None, blank)
            if c is None:
                i += 1
            else:
                jf.classes.append(c)
    return jf


def skip_modifiers(toks, i):
    """Past the modifiers and annotations (not an `@interface`) at toks[i]: (index, {modifier})."""
    mods = set()
    while i < len(toks):
        t = toks[i][0]
        if t == "@" and toks[i + 1][0] != "interface":
            i = skip_annotation(toks, i)
        elif t in MODIFIERS:
            mods.add(t)
            i += 1
        else:
            break
    return i, mods


def parse_type_decl(toks, i, jf, outer, blank):
    """At a type declaration (after optional modifiers/annotations). Returns (JClass, next)."""
    j, mods = skip_modifiers(toks, i)
    if j >= len(toks):
        return None, j
    t = toks[j][0]
    kind = None
    if t == "@" and toks[j + 1][0] == "interface":
        kind, j = "annotation", j + 2
    elif t in ("class", "interface", "enum"):
        kind, j = t, j + 1
    if kind is None:
        return None, i
    c = JClass(toks[j][0], kind, mods, outer, jf.path)
    j += 1
    if toks[j][0] == "<":
        j, c.type_params = parse_type_params(toks, j)
    while toks[j][0] != "{":
        t = toks[j][0]
        if t == "extends":
            j += 1
            start = j
            j = skip_type(toks, j)
            names = [type_text(x[0] for x in toks[start:j])]
            if kind == "interface":
                while toks[j][0] == ",":
                    s2 = j + 1
                    j = skip_type(toks, s2)
                    names.append(type_text(x[0] for x in toks[s2:j]))
                c.implements += names
            else:
                c.extends = names[0]
        elif t == "implements":
            j += 1
            while True:
                s2 = j
                j = skip_type(toks, s2)
                c.implements.append(type_text(x[0] for x in toks[s2:j]))
                if toks[j][0] != ",":
                    break
                j += 1
        else:
            raise SystemExit(f"{jf.path}:{lineno(jf.text, toks[j][1])}: cannot parse type header "
                             f"near {t!r}")
    body_open = j
    body_close = skip_balanced(toks, body_open, "{", "}") - 1
    c.body_start = toks[body_open][1]
    c.body_end = toks[body_close][1]
    if kind == "enum":
        return c, body_close + 1
    parse_class_body(toks, body_open + 1, body_close, c, jf, blank)
    # A marker belongs to the innermost class whose body holds it.
    for mm in re.finditer(re.escape(MARKER), jf.text[c.body_start:c.body_end]):
        pos = c.body_start + mm.start()
        if not any(n.body_start <= pos <= n.body_end for n in c.nested):
            c.marker = pos
    return c, body_close + 1


def skip_type(toks, j):
    """Skip a (possibly qualified, generic, array) type starting at j."""
    j += 1
    while j < len(toks):
        t = toks[j][0]
        if t == ".":
            j += 2
        elif t == "<":
            j = skip_balanced(toks, j, "<", ">")
        elif t == "[" and toks[j + 1][0] == "]":
            j += 2
        else:
            break
    return j


def parse_class_body(toks, i, end, c, jf, blank):
    while i < end:
        t = toks[i][0]
        if t == ";":
            i += 1
            continue
        if t == "{":                       # instance initializer
            i = skip_balanced(toks, i, "{", "}")
            continue
        if t == "static" and toks[i + 1][0] == "{":
            i = skip_balanced(toks, i + 1, "{", "}")
            continue
        # nested type?
        nested, j = parse_type_decl(toks, i, jf, c, blank)
        if nested is not None:
            c.nested.append(nested)
            i = j
            continue
        start = i
        i, mods = skip_modifiers(toks, i)
        tparams = {}
        if toks[i][0] == "<":
            i, tparams = parse_type_params(toks, i)
        # constructor?
        if toks[i][0] == c.name and toks[i + 1][0] == "(":
            name, rtype, j = "<init>", "void", i + 1
        else:
            ts = i
            j = skip_type(toks, i)
            rtype = type_text(x[0] for x in toks[ts:j])
            name = toks[j][0]
            j += 1
        if toks[j][0] == "(":
            close = skip_balanced(toks, j, "(", ")")
            params, varargs = split_params(toks[j + 1:close - 1])
            k = close
            while toks[k][0] not in ("{", ";"):
                if toks[k][0] == "default":   # annotation element default
                    pass
                k += 1
            if toks[k][0] == "{":
                k = skip_balanced(toks, k, "{", "}")
            else:
                k += 1
            c.members.append(JMember("method", name, mods, rtype, params, varargs, toks[start][1]))
            c.members[-1].tparams = tparams
            i = k
        else:
            # field(s): name [= init] (, name [= init])* ;
            names = [name]
            k = j
            depth = 0
            while True:
                t = toks[k][0]
                if t in "({[":
                    depth += 1
                elif t in ")}]":
                    depth -= 1
                elif t == "," and depth == 0:
                    names.append(toks[k + 1][0])
                elif t == ";" and depth == 0:
                    break
                k += 1
            for n in names:
                c.members.append(JMember("field", n, mods, rtype, [], False, toks[start][1]))
            i = k + 1


def split_params(ptoks):
    params, varargs = [], False
    for g in split_commas(ptoks):
        if not g:   # no parameters
            continue
        g = [x for x in g if x != "final"]
        while g and g[0] == "@":
            g = g[2:]
        name = g[-1]
        ty = g[:-1]
        if "..." in ty:
            ty = [x for x in ty if x != "..."] + ["[", "]"]
            varargs = True
        params.append("".join(ty))
    return params, varargs


class Resolver:
    """Resolve Java source type names to descriptors, for one class in one file."""

    def __init__(self, known, jf, chain):
        self.known, self.jf, self.chain = known, jf, chain   # chain: [outermost .. innermost]

    def erase_params(self, tparams):
        return tparams

    def resolve(self, tname, tparams=None):
        dims = 0
        while tname.endswith("[]"):
            dims += 1
            tname = tname[:-2]
        tname = re.sub(r"<.*>", "", tname)
        if tname in PRIM_NAMES:
            return "[" * dims + PRIM_NAMES[tname]
        scopes = [tparams or {}] + [c.type_params for c in reversed(self.chain)]
        for sc in scopes:
            if tname in sc:
                bound = sc[tname]
                base = self.resolve(type_text(bound)) if bound else "Ljava/lang/Object;"
                return "[" * dims + base
        d = self.resolve_class(tname)
        if d is None:
            raise SystemExit(f"{self.jf.path}: cannot resolve type {tname!r}")
        return "[" * dims + d

    def resolve_class(self, tname):
        parts = tname.split(".")
        first = parts[0]
        base = None
        # nested classes of the enclosing classes
        for c in reversed(self.chain):
            cand = c.desc[:-1] + "$" + first + ";"
            if cand in self.known:
                base = cand
                break
            if c.name == first:
                base = c.desc
                break
        if base is None and first in self.jf.imports:
            base = "L" + self.jf.imports[first].replace(".", "/") + ";"
            base = self.fix_nested(base)
        if base is None:
            pkg = self.jf.package.replace(".", "/")
            cand = f"L{pkg + '/' if pkg else ''}{first};"
            if cand in self.known:
                base = cand
        if base is None:
            for sp in self.jf.star_imports:
                cand = "L" + sp.replace(".", "/") + "/" + first + ";"
                if cand in self.known:
                    base = cand
                    break
        if base is None:
            cand = f"Ljava/lang/{first};"
            if cand in self.known:
                base = cand
        if base is None and len(parts) > 1:
            # fully qualified
            for k in range(len(parts), 0, -1):
                cand = "L" + "/".join(parts[:k]) + ";"
                if cand in self.known:
                    base = cand
                    parts = [parts[k - 1]] + parts[k:]
                    break
        if base is None:
            return None
        for p in parts[1:]:
            base = base[:-1] + "$" + p + ";"
        return base

    def fix_nested(self, desc):
        if desc in self.known:
            return desc
        inner = desc[1:-1].split("/")
        for k in range(len(inner) - 1, 0, -1):
            cand = "L" + "/".join(inner[:k]) + "$" + "$".join(inner[k:]) + ";"
            if cand in self.known:
                return cand
        return desc


def walk_classes(classes, outer_desc=None, pkg=""):
    for c in classes:
        if outer_desc:
            c.desc = outer_desc[:-1] + "$" + c.name + ";"
        else:
            c.desc = f"L{pkg.replace('.', '/') + '/' if pkg else ''}{c.name};"
        yield c
        yield from walk_classes(c.nested, c.desc, pkg)


def parse_hand_written(java_dir):
    files, classes = [], {}
    for dirpath, _, fns in os.walk(java_dir):
        for fn in sorted(fns):
            if fn.endswith(".java"):
                jf = parse_java_file(os.path.join(dirpath, fn))
                files.append(jf)
                for c in walk_classes(jf.classes, None, jf.package):
                    if c.desc in classes:
                        raise SystemExit(f"{jf.path}: {c.desc} is also in {classes[c.desc][1].path}")
                    classes[c.desc] = (c, jf)
    return files, classes


def chain_of(c):
    ch = []
    while c is not None:
        ch.append(c)
        c = c.outer
    return list(reversed(ch))


def member_keys(c, jf, known):
    """{(name, sig) for methods} and {name: desc for fields} declared in c."""
    res = Resolver(known, jf, chain_of(c))
    methods, fields = {}, {}
    for m in c.members:
        if m.kind == "method":
            ps = "".join(res.resolve(p, m.tparams) for p in m.params)
            if m.name == "<init>":
                if c.kind == "enum":
                    continue
                if c.outer is not None and "static" not in c.mods and c.kind == "class":
                    ps = c.outer.desc + ps   # inner class: javac adds the outer instance
                sig = f"({ps})V"
            else:
                sig = f"({ps}){res.resolve(m.rtype, m.tparams)}"
            methods[(m.name, sig)] = m
        else:
            fields[m.name] = (res.resolve(m.rtype), m)
    return methods, fields


# ----------------------------------------------------------------------------------------------
# Skeletons: the shape (kind, superclass, interfaces) of the classes nobody hand-wrote. ART's
# tables name members, not hierarchies; these are the Java platform's own, written down here.
# ----------------------------------------------------------------------------------------------

EXCEPTION_SUPERS = {
    "Ljava/lang/Exception;": "Ljava/lang/Throwable;",
    "Ljava/lang/Error;": "Ljava/lang/Throwable;",
    "Ljava/lang/RuntimeException;": "Ljava/lang/Exception;",
    "Ljava/lang/ReflectiveOperationException;": "Ljava/lang/Exception;",
    "Ljava/lang/LinkageError;": "Ljava/lang/Error;",
    "Ljava/lang/VirtualMachineError;": "Ljava/lang/Error;",
    "Ljava/lang/IncompatibleClassChangeError;": "Ljava/lang/LinkageError;",
    "Ljava/lang/AbstractMethodError;": "Ljava/lang/IncompatibleClassChangeError;",
    "Ljava/lang/IllegalAccessError;": "Ljava/lang/IncompatibleClassChangeError;",
    "Ljava/lang/InstantiationError;": "Ljava/lang/IncompatibleClassChangeError;",
    "Ljava/lang/NoSuchFieldError;": "Ljava/lang/IncompatibleClassChangeError;",
    "Ljava/lang/NoSuchMethodError;": "Ljava/lang/IncompatibleClassChangeError;",
    "Ljava/lang/BootstrapMethodError;": "Ljava/lang/LinkageError;",
    "Ljava/lang/ClassCircularityError;": "Ljava/lang/LinkageError;",
    "Ljava/lang/ClassFormatError;": "Ljava/lang/LinkageError;",
    "Ljava/lang/ExceptionInInitializerError;": "Ljava/lang/LinkageError;",
    "Ljava/lang/NoClassDefFoundError;": "Ljava/lang/LinkageError;",
    "Ljava/lang/UnsatisfiedLinkError;": "Ljava/lang/LinkageError;",
    "Ljava/lang/VerifyError;": "Ljava/lang/LinkageError;",
    "Ljava/lang/OutOfMemoryError;": "Ljava/lang/VirtualMachineError;",
    "Ljava/lang/StackOverflowError;": "Ljava/lang/VirtualMachineError;",
    "Ljava/lang/InternalError;": "Ljava/lang/VirtualMachineError;",
    "Ljava/lang/AssertionError;": "Ljava/lang/Error;",
    "Ldalvik/system/TransactionAbortError;": "Ljava/lang/InternalError;",
    "Ljava/lang/ArithmeticException;": "Ljava/lang/RuntimeException;",
    "Ljava/lang/ArrayStoreException;": "Ljava/lang/RuntimeException;",
    "Ljava/lang/ClassCastException;": "Ljava/lang/RuntimeException;",
    "Ljava/lang/IllegalArgumentException;": "Ljava/lang/RuntimeException;",
    "Ljava/lang/IllegalMonitorStateException;": "Ljava/lang/RuntimeException;",
    "Ljava/lang/IllegalStateException;": "Ljava/lang/RuntimeException;",
    "Ljava/lang/IndexOutOfBoundsException;": "Ljava/lang/RuntimeException;",
    "Ljava/lang/ArrayIndexOutOfBoundsException;": "Ljava/lang/IndexOutOfBoundsException;",
    "Ljava/lang/StringIndexOutOfBoundsException;": "Ljava/lang/IndexOutOfBoundsException;",
    "Ljava/lang/NegativeArraySizeException;": "Ljava/lang/RuntimeException;",
    "Ljava/lang/NullPointerException;": "Ljava/lang/RuntimeException;",
    "Ljava/lang/SecurityException;": "Ljava/lang/RuntimeException;",
    "Ljava/lang/UnsupportedOperationException;": "Ljava/lang/RuntimeException;",
    "Ljava/lang/TypeNotPresentException;": "Ljava/lang/RuntimeException;",
    "Ljava/lang/NumberFormatException;": "Ljava/lang/IllegalArgumentException;",
    "Ljava/lang/invoke/WrongMethodTypeException;": "Ljava/lang/RuntimeException;",
    "Ljava/lang/reflect/UndeclaredThrowableException;": "Ljava/lang/RuntimeException;",
    "Ljava/nio/ReadOnlyBufferException;": "Ljava/lang/UnsupportedOperationException;",
    "Ljava/lang/ClassNotFoundException;": "Ljava/lang/ReflectiveOperationException;",
    "Ljava/lang/IllegalAccessException;": "Ljava/lang/ReflectiveOperationException;",
    "Ljava/lang/InstantiationException;": "Ljava/lang/ReflectiveOperationException;",
    "Ljava/lang/NoSuchFieldException;": "Ljava/lang/ReflectiveOperationException;",
    "Ljava/lang/NoSuchMethodException;": "Ljava/lang/ReflectiveOperationException;",
    "Ljava/lang/reflect/InvocationTargetException;": "Ljava/lang/ReflectiveOperationException;",
    "Ljava/lang/InterruptedException;": "Ljava/lang/Exception;",
    "Ljava/lang/CloneNotSupportedException;": "Ljava/lang/Exception;",
    "Ljava/io/IOException;": "Ljava/lang/Exception;",
    "Ljava/io/FileNotFoundException;": "Ljava/io/IOException;",
}

# "kind [extends X] [implements Y, Z]" for the other skeletons; absent = "class".
SHAPES = {
    "Ljava/lang/reflect/AccessibleObject;": "class",
    "Ljava/lang/reflect/Executable;": "abstract class extends Ljava/lang/reflect/AccessibleObject; "
                                      "implements Ljava/lang/reflect/Member;",
    "Ljava/lang/reflect/Method;": "final class extends Ljava/lang/reflect/Executable;",
    "Ljava/lang/reflect/Constructor;": "final class extends Ljava/lang/reflect/Executable;",
    "Ljava/lang/reflect/Field;": "final class extends Ljava/lang/reflect/AccessibleObject; "
                                 "implements Ljava/lang/reflect/Member;",
    "Ljava/lang/reflect/Member;": "interface",
    "Ljava/lang/reflect/InvocationHandler;": "interface",
    "Ljava/lang/reflect/Proxy;": "class",
    "Ljava/lang/reflect/Array;": "final class",
    "Ljava/lang/invoke/MethodHandle;": "abstract class",
    "Ljava/lang/invoke/MethodHandleImpl;": "class extends Ljava/lang/invoke/MethodHandle;",
    "Ljava/lang/invoke/CallSite;": "abstract class",
    "Ljava/lang/invoke/VarHandle;": "abstract class",
    "Ljava/lang/invoke/FieldVarHandle;": "class extends Ljava/lang/invoke/VarHandle;",
    "Ljava/lang/invoke/StaticFieldVarHandle;": "final class extends Ljava/lang/invoke/FieldVarHandle;",
    "Ljava/lang/invoke/ArrayElementVarHandle;": "final class extends Ljava/lang/invoke/VarHandle;",
    "Ljava/lang/invoke/ByteArrayViewVarHandle;": "final class extends Ljava/lang/invoke/VarHandle;",
    "Ljava/lang/invoke/ByteBufferViewVarHandle;": "final class extends Ljava/lang/invoke/VarHandle;",
    "Ljava/lang/invoke/MethodHandles$Lookup;": "final class",
    "Ljava/lang/annotation/Annotation;": "interface",
    "Ljava/lang/Record;": "abstract class",
    "Ljava/lang/Void;": "final class",
    "Ljava/nio/Buffer;": "abstract class",
    "Ljava/nio/ByteBuffer;": "abstract class extends Ljava/nio/Buffer;",
    "Ljava/nio/DirectByteBuffer;": "class extends Ljava/nio/ByteBuffer;",
    "Ljava/nio/charset/Charset;": "abstract class",
    "Ljava/util/function/Consumer;": "interface",
    "Ljdk/internal/math/FloatingDecimal$BinaryToASCIIConverter;": "interface",
    "Ljdk/internal/math/FloatingDecimal$BinaryToASCIIBuffer;":
        "class implements Ljdk/internal/math/FloatingDecimal$BinaryToASCIIConverter;",
    "Ljdk/internal/math/FloatingDecimal$ExceptionalBinaryToASCIIBuffer;":
        "class implements Ljdk/internal/math/FloatingDecimal$BinaryToASCIIConverter;",
    "Ljava/lang/StackFrameInfo;": "final class",
    "Ljava/lang/DexCache;": "final class",
    "Ldalvik/system/ClassExt;": "final class",
}
INTERFACES = {"Ljava/lang/Cloneable;", "Ljava/io/Serializable;"}


def shape_of(desc):
    if desc in EXCEPTION_SUPERS:
        return "class", EXCEPTION_SUPERS[desc], []
    spec = SHAPES.get(desc, "interface" if desc in INTERFACES else "class")
    m = re.fullmatch(r"((?:abstract |final )?(?:class|interface))(?: extends (\S+))?"
                     r"(?: implements (.+))?", spec)
    if not m:
        raise SystemExit(f"gen.py SHAPES[{desc}]: bad shape {spec!r}")
    return m.group(1), m.group(2), (m.group(3) or "").replace(",", " ").split()


THROW_CTORS = ["()V", "(Ljava/lang/String;)V", "(Ljava/lang/String;Ljava/lang/Throwable;)V",
               "(Ljava/lang/Throwable;)V"]


def add_exception_requirements(req, thrown):
    """ART's Thread::ThrowNewWrappedException picks one of four constructors by what it passes."""
    for d in sorted(thrown):
        if d not in EXCEPTION_SUPERS:
            raise SystemExit(f"gen.py EXCEPTION_SUPERS: ART throws {d}; add its superclass")
        for sig in THROW_CTORS:
            req.need_method(d, "<init>", sig, "runtime/thread.cc ThrowNewWrappedException",
                            static=False, invoke="direct")
        s = EXCEPTION_SUPERS[d]
        while s in EXCEPTION_SUPERS:
            req.need_class(s, f"superclass of {d}")
            s = EXCEPTION_SUPERS[s]


def jparams(sig):
    params, ret = parse_method_sig(sig)
    return [java_type(p) for p in params], java_type(ret)


def unsupported(desc, name, sig):
    return (f'throw new java.lang.UnsupportedOperationException("mini-core: '
            f'{java_type(desc)}.{name}{sig} is not implemented");')


def gen_method(desc, name, sig, m, cls_kind, simple, super_has_noarg=True):
    params, ret = jparams(sig)
    plist = ", ".join(f"{t} a{i}" for i, t in enumerate(params))
    src = "; ".join(sorted(set(m["sources"])))[:300]
    lines = [f"    // ART: {src}"]
    ann = ""
    if m["fast"]:
        ann = "@dalvik.annotation.optimization.FastNative "
    if m["critical"]:
        ann = "@dalvik.annotation.optimization.CriticalNative "
    if name == "<init>":
        lines.append(f"    {ann}public {simple}({plist}) {{ {unsupported(desc, name, sig)} }}")
        return "\n".join(lines)
    static = m["static"]
    if static is None:
        static = bool(m.get("static_hint"))
    invoke = m["invoke"]
    if m["native"]:
        if invoke == "polymorphic":
            mods = "public final native"
            plist = "java.lang.Object... args"
        elif static:
            mods = "public static native"
        elif invoke in ("virtual", "interface"):
            mods = "public native"
        else:
            mods = "private native"
        lines.append(f"    {ann}{mods} {ret} {name}({plist});")
        return "\n".join(lines)
    if cls_kind.endswith("interface"):
        if static:
            lines.append(f"    static {ret} {name}({plist}) {{ {unsupported(desc, name, sig)} }}")
        else:
            lines.append(f"    {ret} {name}({plist});")
        return "\n".join(lines)
    if static:
        mods = "public static"
    elif invoke == "direct":
        mods = "private"
    else:
        mods = "public final" if m.get("final") else "public"
    lines.append(f"    {ann}{mods} {ret} {name}({plist}) {{ {unsupported(desc, name, sig)} }}")
    return "\n".join(lines)


def gen_field(desc, name, f, cls_kind):
    src = "; ".join(sorted(set(f["sources"])))[:300]
    t = java_type(f["type"])
    if cls_kind.endswith("interface"):
        return f"    // ART: {src}\n    {t} {name} = null;"
    mods = "public static" if f["static"] else ("public" if any(
        "well_known" in s or "EXTRA" in s or "FinishInit" in s for s in f["sources"]) else "private")
    return f"    // ART: {src}\n    {mods} {t} {name};"


def missing_members(req, desc, methods, fields):
    """Required members of desc that (methods, fields) of the hand-written class do not declare."""
    out_m, out_f = [], []
    for (d, name, sig), m in sorted(req.methods.items()):
        if d == desc and (name, sig) not in methods:
            out_m.append((name, sig, m))
    for (d, name), f in sorted(req.fields.items()):
        if d == desc and name not in fields:
            out_f.append((name, f))
    return out_m, out_f


def render_members(req, desc, kind, simple, out_m, out_f):
    parts = []
    for name, f in out_f:
        parts.append(gen_field(desc, name, f, kind))
    for name, sig, m in out_m:
        parts.append(gen_method(desc, name, sig, m, kind, simple))
    return "\n".join(parts)


def render_skeleton(req, desc, hand_nested, indent=""):
    """Source text of a generated class (and its generated nested classes)."""
    kind, sup, ifaces = shape_of(desc)
    simple = simple_name(desc)
    nested_level = outer_of(desc) is not None
    head = "public "
    if nested_level:
        head += "static "
    head += kind + " " + simple
    if sup:
        head += " extends " + java_type(sup)
    if ifaces:
        head += (" extends " if kind.endswith("interface") else " implements ") + \
            ", ".join(java_type(i) for i in ifaces)
    body = []
    if desc in EXCEPTION_SUPERS:
        body.append("    private static final long serialVersionUID = 1L;")
        for sig in THROW_CTORS:
            params, _ = jparams(sig)
            plist = ", ".join(f"{t} a{i}" for i, t in enumerate(params))
            args = ", ".join(f"a{i}" for i in range(len(params)))
            body.append(f"    public {simple}({plist}) {{ super({args}); }}")
        out_m, out_f = missing_members(req, desc, {("<init>", s): 1 for s in THROW_CTORS}, {})
    else:
        out_m, out_f = missing_members(req, desc, {}, {})
        if not kind.endswith("interface") and not any(n == "<init>" and s == "()V"
                                                      for n, s, _ in out_m):
            body.append(f"    {'private' if kind.startswith('final') else 'protected'} "
                        f"{simple}() {{}}")
    body.append(render_members(req, desc, kind, simple, out_m, out_f))
    for n in sorted(d for d in req.classes if outer_of(d) == desc and d not in hand_nested):
        body.append(render_skeleton(req, n, hand_nested))
    text = f"{head} {{\n" + "\n".join(b for b in body if b) + "\n}\n"
    if nested_level:
        text = "\n".join("    " + l if l else l for l in text.split("\n"))
    return text


def generated_is_virtual(name, m, cls_kind):
    """Whether gen_method's declaration of a required method takes a vtable slot."""
    if name == "<init>" or cls_kind.endswith("interface"):
        return False
    static = m["static"] if m["static"] is not None else bool(m.get("static_hint"))
    if static:
        return False
    if m["native"]:
        return m["invoke"] in ("virtual", "interface", "polymorphic")
    return m["invoke"] != "direct"


def source_vtable(desc, hand, known, req, cache):
    """ART's vtable for a hand-written class, estimated from the sources (javac bridges are the
    erased interface methods; `check` verifies the compiled result exactly)."""
    if desc in cache:
        return cache[desc]
    if desc not in hand:
        raise SystemExit(f"gen.py: vtable of {desc} needs its superclass/interfaces hand-written")
    c, jf = hand[desc]
    res = Resolver(known, jf, chain_of(c))
    methods, _ = member_keys(c, jf, known)
    if c.kind == "interface":
        vt = [k for k, m in methods.items() if "static" not in m.mods]
        for i in c.implements:
            vt += [k for k in source_vtable(res.resolve(i), hand, known, req, cache) if k not in vt]
        cache[desc] = vt
        return vt
    sup = res.resolve(c.extends) if c.extends else (None if desc == "Ljava/lang/Object;"
                                                    else "Ljava/lang/Object;")
    vt = list(source_vtable(sup, hand, known, req, cache)) if sup else []
    kind = "class"
    for k, m in methods.items():
        if k[0] == "<init>" or "static" in m.mods or "private" in m.mods:
            continue
        if k not in vt:
            vt.append(k)
    out_m, _ = missing_members(req, desc, methods, {})
    for name, sig, m in out_m:
        if generated_is_virtual(name, m, kind) and (name, sig) not in vt:
            vt.append((name, sig))
    ifaces = [res.resolve(i) for i in c.implements]
    for i in ifaces:
        for k in source_vtable(i, hand, known, req, cache):
            if k not in vt:
                vt.append(k)
    cache[desc] = vt
    return vt


def vtable_padding(req, hand, known):
    """{desc: n} padding methods the pre-sized hand-written classes need."""
    pads, cache = {}, {}
    for desc, cs in sorted(req.class_sizes.items()):
        if not cs["embedded_vtable"] or desc not in hand:
            continue
        n = cs["vtable"] - len(source_vtable(desc, hand, known, req, cache))
        if n < 0:
            raise SystemExit(f"gen.py: {desc} declares {-n} virtual method(s) more than "
                             f"{cs['source']} allows ({cs['vtable']} vtable entries): make some "
                             f"private, static or final-and-private")
        pads[desc] = n
    return pads


# LinkFields' order of field kinds (java_layout): references, then J D I F C S Z B.
LINK_ORDER = {"L": 0, "[": 0, "J": 1, "D": 2, "I": 3, "F": 4, "C": 5, "S": 6, "Z": 7, "B": 8}


def mutate(req, spec, hand):
    """For the layout self-check's must-fail (tests/layout): swap the Java types of two
    instance fields of the same size of one mirror class, CLASS:A,B. The C++ layout has them the
    other way round then, and ART lays them out elsewhere: LinkFields orders fields by kind, then
    name, so swapping declarations or two fields of one kind would change nothing. Only generated
    fields: a hand-written class's own code uses its fields with their types."""
    m = re.fullmatch(r"([\w.$]+):(\w+),(\w+)", spec)
    if not m:
        raise SystemExit(f"gen.py: --mutate {spec!r}: want CLASS:FIELD_A,FIELD_B")
    desc = "L" + m.group(1).replace(".", "/") + ";"
    a, b = m.group(2), m.group(3)
    if desc not in req.layouts:
        raise SystemExit(f"gen.py: --mutate: {m.group(1)} is not a mirror class (CheckOffsets)")
    if desc in hand:
        raise SystemExit(f"gen.py: --mutate: {m.group(1)} is hand-written; "
                         f"mutate a generated class")
    fa, fb = req.fields.get((desc, a)), req.fields.get((desc, b))
    if not fa or not fb or fa["static"] or fb["static"]:
        raise SystemExit(f"gen.py: --mutate: {m.group(1)} has no instance fields {a} and {b}")
    ta, tb = fa["type"], fb["type"]
    if size_category(ta) != size_category(tb):
        raise SystemExit(f"gen.py: --mutate: {a} ({ta}) and {b} ({tb}) differ in size")
    if LINK_ORDER[ta[0]] == LINK_ORDER[tb[0]]:
        raise SystemExit(f"gen.py: --mutate: {a} and {b} are of one kind ({ta}, {tb}): LinkFields "
                         f"orders them by name, so the swap would change no offset")
    fa["type"], fb["type"] = tb, ta
    return f"{m.group(1)}.{a} is now {java_type(tb)}, .{b} {java_type(ta)}"


def generate(art_root, java_dir, out_dir, mutation=None):
    req, stats, interfaces = collect(art_root)
    INTERFACES.update(interfaces)
    thrown = parse_thrown_exceptions(Art(art_root), Requirements())
    add_exception_requirements(req, thrown | {d for d in req.classes if d in EXCEPTION_SUPERS})
    for d in EXCEPTION_SUPERS:   # the platform's usual exceptions, for our own code and tests
        req.need_class(d, "gen.py EXCEPTION_SUPERS")
    files, hand = parse_hand_written(java_dir)
    mutated = mutate(req, mutation, hand) if mutation else None
    known = set(hand) | set(req.classes)
    pads = vtable_padding(req, hand, known)
    # Classes the hand-written code extends/implements that nobody declared are errors javac names.
    os.makedirs(out_dir, exist_ok=True)
    written = []
    report = {"generated": [], "filled": {}, "hand_written": sorted(hand)}
    if mutated:
        report["mutation"] = mutated
    # Hand-written files, with their markers filled.
    for jf in files:
        inserts = []
        for c in walk_classes(jf.classes, None, jf.package):
            methods, fields = member_keys(c, jf, known)
            out_m, out_f = missing_members(req, c.desc, methods, fields)
            # Required nested classes nobody wrote go into the outer class's marker too.
            nested_missing = sorted(d for d in req.classes if outer_of(d) == c.desc and d not in hand)
            pad = pads.get(c.desc, 0)
            if not (out_m or out_f or nested_missing or pad):
                continue
            if c.marker is None:
                what = [f"{n}{s}" for n, s, _ in out_m] + [n for n, _ in out_f] + nested_missing
                raise SystemExit(f"{jf.path}: {c.desc} lacks members ART requires and has no "
                                 f"'{MARKER}' marker to receive them: {', '.join(what)}")
            text = render_members(req, c.desc, c.kind if c.kind != "class" else
                                  ("abstract class" if "abstract" in c.mods else "class"),
                                  c.name, out_m, out_f)
            for n in nested_missing:
                text += "\n" + render_skeleton(req, n, set(hand))
            if pad:
                src_ = req.class_sizes[c.desc]["source"]
                text += (f"\n    // vtable padding: {src_} sizes this class for "
                         f"{req.class_sizes[c.desc]['vtable']} vtable entries.\n")
                text += "\n".join(f"    public final void mini$vtablePad{k}() {{}}"
                                   for k in range(pad))
                report.setdefault("padding", {})[c.desc] = pad
            inserts.append((c.marker, text))
            report["filled"][c.desc] = [f"{n}{s}" for n, s, _ in out_m] + \
                [n for n, _ in out_f] + nested_missing
        src = jf.text
        for pos, text in sorted(inserts, reverse=True):
            eol = src.index("\n", pos)
            src = src[:eol + 1] + text + "\n" + src[eol + 1:]
        rel = os.path.relpath(jf.path, java_dir)
        dst = os.path.join(out_dir, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        with open(dst, "w") as f:
            f.write(src)
        written.append(rel)
    # Skeletons for the top-level classes nobody hand-wrote.
    for desc in sorted(req.classes):
        if desc in hand or outer_of(desc) is not None:
            continue
        pkg = package_of(desc)
        text = (f"// Generated by proving/host-vm/mini-core/gen.py from the ART tree: do not edit.\n"
                f"package {pkg.replace('/', '.')};\n\n" + render_skeleton(req, desc, set(hand)))
        rel = desc[1:-1] + ".java"
        dst = os.path.join(out_dir, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        with open(dst, "w") as f:
            f.write(text)
        written.append(rel)
        report["generated"].append(desc)
    with open(os.path.join(out_dir, "requirements.json"), "w") as f:
        json.dump(req.to_json(), f, indent=1, sort_keys=True)
    with open(os.path.join(out_dir, "generation-report.json"), "w") as f:
        json.dump(report, f, indent=1, sort_keys=True)
    return stats, report, written


# ----------------------------------------------------------------------------------------------
# Checker: the compiled classes against the requirements.
# ----------------------------------------------------------------------------------------------

ACC_PUBLIC, ACC_PRIVATE, ACC_PROTECTED, ACC_STATIC, ACC_FINAL = 0x1, 0x2, 0x4, 0x8, 0x10
ACC_VARARGS, ACC_NATIVE, ACC_INTERFACE, ACC_ABSTRACT, ACC_BRIDGE = 0x80, 0x100, 0x200, 0x400, 0x40


class ClassFile:
    def __init__(self, path):
        data = open(path, "rb").read()
        if data[:4] != b"\xca\xfe\xba\xbe":
            raise CheckError(f"{path}: not a class file")
        pos = 8
        count = struct.unpack_from(">H", data, pos)[0]
        pos += 2
        cp = [None] * count
        i = 1
        while i < count:
            tag = data[pos]
            pos += 1
            if tag == 1:
                n = struct.unpack_from(">H", data, pos)[0]
                cp[i] = data[pos + 2:pos + 2 + n].decode("utf-8", "replace")
                pos += 2 + n
            elif tag in (3, 4):
                pos += 4
            elif tag in (5, 6):
                pos += 8
                i += 1
            elif tag in (7, 8, 16, 19, 20):
                cp[i] = ("ref", struct.unpack_from(">H", data, pos)[0])
                pos += 2
            elif tag in (9, 10, 11, 12, 17, 18):
                pos += 4
            elif tag == 15:
                pos += 3
            else:
                raise CheckError(f"{path}: constant pool tag {tag}")
            i += 1

        def utf(idx):
            return cp[idx]

        def cls(idx):
            return cp[cp[idx][1]] if idx else None

        self.access, this, sup = struct.unpack_from(">HHH", data, pos)
        pos += 6
        self.name = cls(this)
        self.super = cls(sup)
        n = struct.unpack_from(">H", data, pos)[0]
        pos += 2
        self.interfaces = [cls(struct.unpack_from(">H", data, pos + 2 * k)[0]) for k in range(n)]
        pos += 2 * n

        def members():
            nonlocal pos
            out = []
            n = struct.unpack_from(">H", data, pos)[0]
            pos += 2
            for _ in range(n):
                acc, ni, di, na = struct.unpack_from(">HHHH", data, pos)
                pos += 8
                anns = set()
                for _ in range(na):
                    an, alen = struct.unpack_from(">HI", data, pos)
                    aname = utf(an)
                    if aname in ("RuntimeInvisibleAnnotations", "RuntimeVisibleAnnotations"):
                        k = struct.unpack_from(">H", data, pos + 6)[0]
                        q = pos + 8
                        for _ in range(k):
                            ti = struct.unpack_from(">H", data, q)[0]
                            anns.add((utf(ti), aname == "RuntimeVisibleAnnotations"))
                            q = skip_annotation_value_pairs(data, q + 2)
                    pos += 6 + alen
                out.append({"access": acc, "name": utf(ni), "desc": utf(di), "annotations": anns})
            return out

        self.fields = members()
        self.methods = members()
        self.desc = "L" + self.name + ";"


def skip_element_value(data, q):
    tag = chr(data[q])
    q += 1
    if tag in "BCDFIJSZsc":
        return q + 2
    if tag == "e":
        return q + 4
    if tag == "@":
        return skip_annotation_value_pairs(data, q + 2)
    if tag == "[":
        n = struct.unpack_from(">H", data, q)[0]
        q += 2
        for _ in range(n):
            q = skip_element_value(data, q)
        return q
    raise CheckError(f"annotation element tag {tag}")


def skip_annotation_value_pairs(data, q):
    n = struct.unpack_from(">H", data, q)[0]
    q += 2
    for _ in range(n):
        q = skip_element_value(data, q + 2)
    return q


def load_classes(classes_dir):
    out = {}
    for dirpath, _, fns in os.walk(classes_dir):
        for fn in fns:
            if fn.endswith(".class"):
                cf = ClassFile(os.path.join(dirpath, fn))
                out[cf.desc] = cf
    return out


def invoke_kind(cf, m, classes):
    """ArtMethod::GetInvokeType for a method of class file cf."""
    if m["access"] & ACC_STATIC:
        return "static"
    if cf.access & ACC_INTERFACE:
        return "interface"
    if m["access"] & ACC_PRIVATE or m["name"] == "<init>":
        return "direct"
    if (m["access"] & (ACC_NATIVE | ACC_VARARGS)) == (ACC_NATIVE | ACC_VARARGS) and cf.desc in (
            "Ljava/lang/invoke/MethodHandle;", "Ljava/lang/invoke/VarHandle;"):
        return "polymorphic"
    return "virtual"


def java_layout(classes, desc):
    """Simulate ClassLinker::LinkFieldsHelper::LinkFields for desc: ({name: offset}, size)."""
    cf = classes[desc]
    if cf.super is None:
        base, offsets = 0, {}
    else:
        offsets, base = java_layout(classes, "L" + cf.super + ";")
        offsets = dict(offsets)
    fields = sorted((f for f in cf.fields if not f["access"] & ACC_STATIC),
                    key=lambda f: (f["name"], f["desc"]))
    refs = [f for f in fields if f["desc"][0] in "L["]
    prims = sorted((f for f in fields if f["desc"][0] not in "L["),
                   key=lambda f: (LINK_ORDER[f["desc"][0]], f["name"], f["desc"]))
    off = base
    gaps = []   # (offset, size)

    def align(off, size):
        if off % size:
            start, off2 = off, (off + size - 1) // size * size
            # Record gaps as ART's FieldGaps does: 1-, 2- and 4-byte pieces, naturally aligned.
            p = start
            while p < off2:
                for sz in (4, 2, 1):
                    if p % sz == 0 and p + sz <= off2:
                        gaps.append((p, sz))
                        p += sz
                        break
            return off2
        return off

    def take_gap(size):
        best = None
        for g in sorted(gaps):
            if g[1] >= size:
                best = g
                break
        if best is None:
            return None
        gaps.remove(best)
        p, sz = best
        if sz > size:
            rest = p + size
            while rest < p + sz:
                for s2 in (2, 1):
                    if rest % s2 == 0 and rest + s2 <= p + sz:
                        gaps.append((rest, s2))
                        rest += s2
                        break
        return p

    if refs:
        off = align(off, 4)
        for f in refs:
            offsets[f["name"]] = off
            off += 4
    idx = 0
    p64 = [f for f in prims if f["desc"][0] in "JD"]
    p32 = [f for f in prims if f["desc"][0] in "IF"]
    p16 = [f for f in prims if f["desc"][0] in "CS"]
    p8 = [f for f in prims if f["desc"][0] in "ZB"]
    if p64:
        off = align(off, 8)
        for f in p64:
            offsets[f["name"]] = off
            off += 8
    if p32:
        off = align(off, 4)
        first = True
        for f in p32:
            g = take_gap(4) if first and any(s == 4 for _, s in gaps) else None
            first = False
            if g is not None:
                offsets[f["name"]] = g
            else:
                offsets[f["name"]] = off
                off += 4
    if p16:
        off = align(off, 2)
        for f in p16:
            g = take_gap(2) if any(s >= 2 for _, s in gaps) else None
            if g is not None:
                offsets[f["name"]] = g
            else:
                offsets[f["name"]] = off
                off += 2
    for f in p8:
        g = take_gap(1) if gaps else None
        if g is not None:
            offsets[f["name"]] = g
        else:
            offsets[f["name"]] = off
            off += 1
    return offsets, off


def vtable(classes, desc, cache=None):
    """[(name, sig)] of ART's vtable for desc (LinkVirtualMethods + miranda/default methods)."""
    cache = {} if cache is None else cache
    if desc in cache:
        return cache[desc]
    cf = classes[desc]
    vt = list(vtable(classes, "L" + cf.super + ";", cache)) if cf.super else []
    for m in cf.methods:
        if m["access"] & (ACC_STATIC | ACC_PRIVATE) or m["name"] in ("<init>", "<clinit>"):
            continue
        key = (m["name"], m["desc"])
        if key not in vt:
            vt.append(key)
    # interface methods not implemented by any vtable entry
    for iface in all_interfaces(classes, desc):
        for m in classes[iface].methods:
            if m["access"] & ACC_STATIC or m["name"] == "<clinit>":
                continue
            key = (m["name"], m["desc"])
            if key not in vt:
                vt.append(key)
    cache[desc] = vt
    return vt


def all_interfaces(classes, desc):
    out, seen = [], set()

    def visit(d):
        cf = classes.get(d)
        if cf is None:
            return
        for i in cf.interfaces:
            idesc = "L" + i + ";"
            if idesc not in seen:
                seen.add(idesc)
                out.append(idesc)
                visit(idesc)
        if cf.super:
            visit("L" + cf.super + ";")
    visit(desc)
    return out


def check(req, classes):
    errors = []

    def err(msg):
        errors.append(msg)

    for desc, sources in sorted(req.classes.items()):
        if desc not in classes:
            err(f"missing class {desc} (needed by {sorted(sources)[0]})")
    for (desc, name, sig), m in sorted(req.methods.items()):
        cf = classes.get(desc)
        if cf is None:
            continue
        found = [x for x in cf.methods if x["name"] == name and x["desc"] == sig]
        where = f"{desc}.{name}{sig} (needed by {m['sources'][0]})"
        if not found:
            err(f"missing method {where}")
            continue
        x = found[0]
        if m["static"] is not None and bool(x["access"] & ACC_STATIC) != m["static"]:
            err(f"{where}: must be {'static' if m['static'] else 'an instance method'}")
        if m["native"] and not x["access"] & ACC_NATIVE:
            err(f"{where}: must be native")
        anns = {a for a, _ in x["annotations"]}
        fast = "Ldalvik/annotation/optimization/FastNative;" in anns
        critical = "Ldalvik/annotation/optimization/CriticalNative;" in anns
        if m["native"] and m["sources"] and any("gMethods" in s for s in m["sources"]):
            if fast != m["fast"]:
                err(f"{where}: ART registers it as {'@FastNative' if m['fast'] else 'a normal native'}"
                    f"; the declaration {'has' if fast else 'lacks'} @FastNative")
            if critical != m["critical"]:
                err(f"{where}: @CriticalNative mismatch")
        for a, visible in x["annotations"]:
            if a.startswith("Ldalvik/annotation/optimization/") and visible:
                err(f"{where}: {a} must have CLASS retention (dex visibility 'build')")
        if m.get("final") is not None:
            is_final = bool(x["access"] & ACC_FINAL or cf.access & ACC_FINAL)
            if is_final != m["final"]:
                err(f"{where}: ART calls it with Invoke{'Final' if m['final'] else 'Virtual'}: "
                    f"must {'' if m['final'] else 'not '}be final")
        if m["invoke"] is not None:
            k = invoke_kind(cf, x, classes)
            if k != m["invoke"]:
                err(f"{where}: intrinsic invoke kind must be {m['invoke']}, is {k}")
    for (desc, name), f in sorted(req.fields.items()):
        cf = classes.get(desc)
        if cf is None:
            continue
        found = [x for x in cf.fields if x["name"] == name]
        where = f"{desc}.{name} (needed by {f['sources'][0]})"
        if not found:
            err(f"missing field {where}: {'static ' if f['static'] else ''}{f['type']}")
            continue
        x = found[0]
        if bool(x["access"] & ACC_STATIC) != f["static"]:
            err(f"{where}: must be {'static' if f['static'] else 'an instance field'}")
        if f["exact"] and x["desc"] != f["type"]:
            err(f"{where}: type must be {f['type']}, is {x['desc']}")
        if not f["exact"] and (size_category(x["desc"]) != size_category(f["type"]) or
                               (x["desc"][0] in "L[") != (f["type"][0] in "L[")):
            err(f"{where}: type {x['desc']} does not fit the C++ member ({f['type']})")
    # Mirror layouts.
    for desc, lay in sorted(req.layouts.items()):
        cf = classes.get(desc)
        if cf is None:
            continue
        declared = sorted(f["name"] for f in cf.fields if not f["access"] & ACC_STATIC)
        expected = [e[0] for e in lay["fields"]]
        if declared != expected:
            err(f"{desc}: instance fields {declared} != {expected} ({lay['source']})")
            continue
        try:
            offs, size = java_layout(classes, desc)
        except KeyError as e:
            err(f"{desc}: layout needs missing class {e}")
            continue
        for jname, cpp_off, jt, cname in lay["fields"]:
            if offs[jname] != cpp_off:
                err(f"{desc}.{jname}: ART would place it at {offs[jname]}, mirror::{lay['cpp']}::"
                    f"{cname} is at {cpp_off}")
        if desc not in SIZE_UNCHECKED:
            if (size + 3) // 4 * 4 != lay["sizeof"]:
                err(f"{desc}: instance size {size} (rounded {(size + 3) // 4 * 4}) != "
                    f"sizeof(mirror::{lay['cpp']}) {lay['sizeof']}")
    # Reference field order (FinishInit).
    for desc, idx, name, ftype, src in req.field_order:
        cf = classes.get(desc)
        if cf is None:
            continue
        inst = sorted(((f["name"], f["desc"]) for f in cf.fields if not f["access"] & ACC_STATIC))
        if idx >= len(inst) or inst[idx] != (name, ftype):
            err(f"{desc}: instance field #{idx} must be {name} {ftype} ({src}), fields are {inst}")
    # Pre-sized classes.
    for desc, cs in sorted(req.class_sizes.items()):
        cf = classes.get(desc)
        if cf is None:
            continue
        instantiable = not cf.access & (ACC_INTERFACE | ACC_ABSTRACT)
        if instantiable != cs["embedded_vtable"]:
            err(f"{desc}: must {'' if cs['embedded_vtable'] else 'not '}be instantiable "
                f"(embedded vtable) per {cs['source']}")
        if cs["embedded_vtable"]:
            vt = vtable(classes, desc)
            if len(vt) != cs["vtable"]:
                extra = ""
                if desc != "Ljava/lang/Object;":
                    own = [k for k in vt if k not in vtable(classes, "L" + cf.super + ";")]
                    extra = f"; its own: {len(own)}"
                err(f"{desc}: vtable has {len(vt)} entries, {cs['source']} needs {cs['vtable']}"
                    f" (declare {cs['vtable'] - len(vt):+d} virtual methods){extra}")
        counts = {"s8": 0, "s16": 0, "s32": 0, "s64": 0, "sref": 0}
        for f in cf.fields:
            if f["access"] & ACC_STATIC:
                k = {1: "s8", 2: "s16", 4: "s32", 8: "s64"}[size_category(f["desc"])] \
                    if f["desc"][0] not in "L[" else "sref"
                counts[k] += 1
        for k, v in counts.items():
            if v != cs[k]:
                err(f"{desc}: {v} static fields of kind {k}, {cs['source']} needs {cs[k]}")
    # Special reference classes must extend Reference (ART sets their class flags).
    for desc, src in sorted(req.flags.items()):
        cf = classes.get(desc)
        if cf and cf.super != "java/lang/ref/Reference" and \
                "L" + cf.super + ";" not in req.flags:
            err(f"{desc}: must extend java.lang.ref.Reference ({src})")
    return errors


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--art", required=True, help="the pinned ART source tree")
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("generate", help="write the merged Java sources")
    g.add_argument("--java", required=True, help="hand-written sources")
    g.add_argument("--out", required=True, help="output source tree")
    g.add_argument("--mutate", metavar="CLASS:A,B",
                   help="swap the types of two same-size instance fields of a generated mirror "
                        "class (a wrong layout, for the layout self-check's must-fail)")
    c = sub.add_parser("check", help="verify compiled classes against ART's requirements")
    c.add_argument("--classes", required=True)
    sub.add_parser("dump", help="print the requirements as JSON")
    sub.add_parser("offsets", help="gen.py's model of the mirror layouts (CheckOffsets entries "
                                   "and sizes), one '<class> <field> <offset>' a line")
    sub.add_parser("offsets-cc", help="C++ source printing the same from ART's own headers "
                                      "(class_linker_test.cc's CheckOffsets)")
    args = ap.parse_args()
    try:
        if args.cmd == "dump":
            req, stats, _ = collect(args.art)
            json.dump(req.to_json(), sys.stdout, indent=1, sort_keys=True)
            print()
        elif args.cmd in ("offsets", "offsets-cc"):
            req = Requirements()
            mirror = parse_check_offsets(Art(args.art), req)
            if args.cmd == "offsets":
                print("\n".join(model_offsets(req)))
            else:
                sys.stdout.write(offsets_cc(Art(args.art), req, mirror))
        elif args.cmd == "generate":
            stats, report, written = generate(args.art, args.java, args.out, args.mutate)
            if report.get("mutation"):
                print(f"gen.py: MUTANT: {report['mutation']}", file=sys.stderr)
            print(f"gen.py: {stats['natives']} natives, {stats['intrinsics']} intrinsics, "
                  f"{stats['classes']} classes, {stats['methods']} methods, {stats['fields']} fields "
                  f"required; {len(report['hand_written'])} classes hand-written "
                  f"({len(report['filled'])} filled in), {len(report['generated'])} generated",
                  file=sys.stderr)
        elif args.cmd == "check":
            req, stats, interfaces = collect(args.art)
            INTERFACES.update(interfaces)
            thrown = parse_thrown_exceptions(Art(args.art), Requirements())
            add_exception_requirements(req, thrown | {d for d in req.classes
                                                      if d in EXCEPTION_SUPERS})
            classes = load_classes(args.classes)
            errors = check(req, classes)
            if errors:
                for e in errors:
                    print(f"gen.py check: {e}", file=sys.stderr)
                print(f"gen.py check: {len(errors)} problem(s)", file=sys.stderr)
                return 1
            print(f"gen.py check: {len(classes)} classes satisfy {len(req.classes)} required "
                  f"classes, {len(req.methods)} methods, {len(req.fields)} fields, "
                  f"{len(req.layouts)} mirror layouts, {len(req.class_sizes)} class sizes",
                  file=sys.stderr)
    except ShapeError as e:
        print(f"gen.py: ART table changed shape: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
