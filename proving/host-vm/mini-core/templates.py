#!/usr/bin/env python3
# Copyright (C) 2026 Hubble for AOSP
# Licensed under the Apache License, Version 2.0.
"""mini-core's per-type templates: the JDK's per-primitive families, each written once.

java/ holds a few NAME.java.template files besides the hand-written NAME.java ones: a class
family the JDK repeats per primitive type (Byte/Short/Integer/Long/Float/Double,
AtomicBoolean/AtomicInteger/AtomicLong, the int and long field updaters) or a class with
per-type overloads (Arrays, Math, PrintStream, reflect.Array, reflect.Field), each written once,
as OpenJDK writes its X-Buffer classes once (X-Buffer.java.template, expanded by its build's
Spp). This copies java/ to the tree gen.py generate reads (mini-core/build: build/java), each
template replaced by what it expands to, and each expanded file headed by a comment naming its
template. It is not part of gen.py: scripts/host-vm-build hashes gen.py (its layout dumper), so
a change there makes both host VMs anew, while a template is mini-core's alone.

Directives are lines whose first non-blank characters are `//#`; they are not copied:

  //#types T...   the whole file, once per type T, into the file its name gives with the
                  placeholders filled in (Atomic$Fulltype$.java.template with `int long`:
                  AtomicInteger.java, AtomicLong.java); it comes before any other directive, and
                  only such a template has placeholders in its name
  //#for T...     the lines up to the matching //#end, once per type T (not inside another
                  //#for or a //#types template)
  //#if T...      the lines up to the next //#elif, //#else or //#end when the current type
  //#elif T...    is one of T (each T one of the types of the enclosing //#types or //#for),
  //#else         else those of the first //#elif that holds, else those after //#else
  //#end

The types are the eight primitive types and Object (TYPES below); the placeholders (inside
//#types or //#for) are, for int: $type$ int, $Type$ Int, $Fulltype$ Integer. Anything else (an
unknown directive, type or placeholder, a placeholder outside a type, an unbalanced block, two
sources of one class) stops the expansion with exit status 2, naming the file and the line.
"""

import argparse
import os
import re
import shutil
import sys

SUFFIX = ".template"

# type: ($Type$, $Fulltype$); Object for the Object[] overloads that share the primitives' code.
TYPES = {
    "boolean": ("Boolean", "Boolean"),
    "byte": ("Byte", "Byte"),
    "char": ("Char", "Character"),
    "short": ("Short", "Short"),
    "int": ("Int", "Integer"),
    "long": ("Long", "Long"),
    "float": ("Float", "Float"),
    "double": ("Double", "Double"),
    "Object": ("Object", "Object"),
}

DIRECTIVE_RE = re.compile(r"\s*//#(\w*)(.*)$")
PLACEHOLDER_RE = re.compile(r"\$(\w+)\$")


class TemplateError(Exception):
    """A template this expander does not understand: (path, line, why)."""


def placeholders(t):
    return {"type": t, "Type": TYPES[t][0], "Fulltype": TYPES[t][1]}


def fill(text, t, where):
    """text with its placeholders for type t (None: outside any type, where none may stand)."""
    def one(m):
        if t is None:
            raise TemplateError(*where, f"placeholder {m.group(0)} outside //#types and //#for")
        values = placeholders(t)
        if m.group(1) not in values:
            raise TemplateError(*where, f"unknown placeholder {m.group(0)} (known: "
                                f"{', '.join('$' + k + '$' for k in values)})")
        return values[m.group(1)]
    return PLACEHOLDER_RE.sub(one, text)


def type_list(args, where, allowed=None):
    names = args.split()
    if not names:
        raise TemplateError(*where, "names no type")
    for n in names:
        if n not in TYPES:
            raise TemplateError(*where, f"unknown type {n!r} (known: {' '.join(TYPES)})")
        if allowed is not None and n not in allowed:
            raise TemplateError(*where, f"{n} is not among the types here ({' '.join(allowed)})")
    return names


def parse(path, lines):
    """The template as a tree: ("text", where, line) | ("for", where, types, body) |
    ("if", where, [(types, or None after #else, body), ...]); and the //#types list (or None)."""
    root, file_types = [], None
    stack = []   # open blocks: [directive, its node, the types in force, the body being filled]
    for n, line in enumerate(lines, 1):
        where = (path, n)
        m = DIRECTIVE_RE.match(line)
        body = stack[-1][3] if stack else root
        if not m:
            body.append(("text", where, line))
            continue
        word, args = m.group(1), m.group(2).strip()
        types = stack[-1][2] if stack else file_types
        if word == "types":
            if file_types is not None or stack or any(x[0] != "text" for x in root):
                raise TemplateError(*where, "//#types comes once, before any other directive")
            file_types = type_list(args, where)
        elif word == "for":
            if types is not None:
                raise TemplateError(*where, "//#for inside another type (//#types or //#for)")
            node = ("for", where, type_list(args, where), [])
            body.append(node)
            stack.append(["for", node, node[2], node[3]])
        elif word == "if":
            if types is None:
                raise TemplateError(*where, "//#if outside //#types and //#for")
            node = ("if", where, [(type_list(args, where, types), [])])
            body.append(node)
            stack.append(["if", node, types, node[2][0][1]])
        elif word in ("elif", "else"):
            if not stack or stack[-1][0] != "if":
                raise TemplateError(*where, f"//#{word} without an open //#if")
            branches = stack[-1][1][2]
            if branches[-1][0] is None:
                raise TemplateError(*where, f"//#{word} after //#else")
            if word == "else" and args:
                raise TemplateError(*where, "//#else takes no types")
            branches.append((type_list(args, where, types) if word == "elif" else None, []))
            stack[-1][3] = branches[-1][1]
        elif word == "end":
            if not stack:
                raise TemplateError(*where, "//#end without an open //#for or //#if")
            if args:
                raise TemplateError(*where, "//#end takes no arguments")
            stack.pop()
        else:
            raise TemplateError(*where, f"unknown directive //#{word} "
                                "(types, for, if, elif, else, end)")
    if stack:
        raise TemplateError(*stack[-1][1][1], f"//#{stack[-1][0]} has no //#end")
    return root, file_types


def render(nodes, t, out):
    for node in nodes:
        if node[0] == "text":
            out.append(fill(node[2], t, node[1]))
        elif node[0] == "for":
            for each in node[2]:
                render(node[3], each, out)
        else:
            for types, body in node[2]:
                if types is None or t in types:
                    render(body, t, out)
                    break


def expand(path, rel):
    """[(output path relative to java/, text)] of one template (rel: its path in java/)."""
    with open(path) as f:
        lines = f.read().split("\n")
    tree, file_types = parse(rel, lines)
    name = rel[:-len(SUFFIX)]
    if not name.endswith(".java"):
        raise TemplateError(rel, 1, f"a template is NAME.java{SUFFIX}")
    if file_types is None and PLACEHOLDER_RE.search(name):
        raise TemplateError(rel, 1, "a name with placeholders needs a //#types line")
    if file_types is not None and not PLACEHOLDER_RE.search(os.path.basename(name)):
        raise TemplateError(rel, 1, "//#types needs placeholders in the file's name")
    outputs = []
    for t in file_types or [None]:
        out = [f"// Expanded from proving/host-vm/mini-core/java/{rel}"
               + (f" ({t})" if t else "") + " by templates.py: do not edit."]
        render(tree, t, out)
        outputs.append((fill(name, t, (rel, 1)), "\n".join(out)))
    return outputs


def expand_tree(java_dir, out_dir):
    """Copy java_dir to out_dir, templates expanded; returns {template: [outputs]}."""
    sources, expansions = {}, {}
    for dirpath, dirs, fns in os.walk(java_dir):
        dirs.sort()
        for fn in sorted(fns):
            rel = os.path.relpath(os.path.join(dirpath, fn), java_dir)
            if fn.endswith(SUFFIX):
                outs = expand(os.path.join(dirpath, fn), rel)
                expansions[rel] = [o for o, _ in outs]
            else:
                outs = [(rel, None)]
            for o, text in outs:
                if o in sources:
                    raise TemplateError(rel, 1, f"{o} also comes from {sources[o][0]}")
                sources[o] = (rel, text)
    for o, (rel, text) in sorted(sources.items()):
        dst = os.path.join(out_dir, o)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if text is None:
            shutil.copyfile(os.path.join(java_dir, rel), dst)
        else:
            with open(dst, "w") as f:
                f.write(text)
    return expansions


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--java", required=True, help="hand-written sources and templates")
    ap.add_argument("--out", required=True, help="the same tree, templates expanded (new)")
    args = ap.parse_args()
    if os.path.exists(args.out):
        print(f"templates.py: {args.out} exists", file=sys.stderr)
        return 2
    try:
        expansions = expand_tree(args.java, args.out)
    except TemplateError as e:
        path, line, why = e.args
        print(f"templates.py: {os.path.join(args.java, path)}:{line}: {why}", file=sys.stderr)
        return 2
    print(f"templates.py: {len(expansions)} templates expanded into "
          f"{sum(len(v) for v in expansions.values())} classes", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
