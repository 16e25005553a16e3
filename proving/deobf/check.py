#!/usr/bin/env python3
"""Helpers of proving/deobf/run.

  check.py lib8 CT_SYM OUT.jar
      Java 8's API as a library jar for ProGuard 6.2.2, which reads class files up to Java 13
      while the JDK's own are Java 17's: the signature files javac --release 8 compiles
      against (the JDK's lib/ct.sym), their class-file version set to 52 (Java 8).

  check.py names JAR
      Every method of every class in JAR (an obfuscated program), one line each, as ART's
      PrettyMethod prints it: `ret class.name(arg, arg)`. Read with the JDK's javap (-p -s):
      names from the declarations, types from the JVM descriptors.

  check.py decode NAMES EXPECTED DECODE
      Only the decode part of `compare` (a trace among several, each with its own mapping).

  check.py compare NAMES EXPECTED DECODE TOP_JSON CHROME_JSON FOLDED STDERR
      NAMES: the obfuscated names (the trace's methods, in order); EXPECTED: ReTraceOracle's
      line for each; the rest: what `hubble decode`, `top --json`, `export --format
      chrome-json`, `export --format folded` wrote with --mapping, and hubble top's stderr.
      Fails (exit 1) on any name that differs from ReTrace's, and unless the warning line
      counts exactly the names ReTrace kept obfuscated and the note counts the ambiguous ones.
"""
import json
import re
import subprocess
import sys
import zipfile

PRIMITIVE = {"Z": "boolean", "B": "byte", "C": "char", "S": "short", "I": "int",
             "J": "long", "F": "float", "D": "double", "V": "void"}


def java_type(desc, i):
    """The type at desc[i:] and the index after it."""
    dims = 0
    while desc[i] == "[":
        dims += 1
        i += 1
    if desc[i] == "L":
        end = desc.index(";", i)
        name, i = desc[i + 1:end].replace("/", "."), end + 1
    else:
        name, i = PRIMITIVE[desc[i]], i + 1
    return name + "[]" * dims, i


def method_types(desc):
    assert desc[0] == "(", desc
    i, params = 1, []
    while desc[i] != ")":
        t, i = java_type(desc, i)
        params.append(t)
    ret, i = java_type(desc, i + 1)
    assert i == len(desc), desc
    return ret, params


def names(jar):
    with zipfile.ZipFile(jar) as z:
        classes = sorted(n[:-6].replace("/", ".") for n in z.namelist() if n.endswith(".class"))
    out = subprocess.run(["javap", "-p", "-s", "-cp", jar, *classes],
                         check=True, capture_output=True, text=True).stdout
    current, decl, result, headers = None, None, [], 0
    for line in out.splitlines():
        if re.match(r"^\S.*\{$", line):
            # javap prints the classes in the order given, each under one header line.
            current, headers = classes[headers], headers + 1
            continue
        stripped = line.strip()
        if stripped.startswith("descriptor:"):
            desc = stripped.split(":", 1)[1].strip()
            if decl is not None and desc.startswith("("):
                if decl == "static {}":
                    name = "<clinit>"
                else:
                    name = decl[:decl.index("(")].split()[-1]
                    if name == current:
                        name = "<init>"
                ret, params = method_types(desc)
                result.append(f"{ret} {current}.{name}({', '.join(params)})")
            decl = None
        elif stripped.endswith(";") and current is not None:
            decl = stripped[:-1]
    if headers != len(classes):
        fail(f"javap printed {headers} classes of {len(classes)}")
    for name in result:
        print(name)


def lib8(ct_sym, out):
    seen = set()
    with zipfile.ZipFile(ct_sym) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as jar:
        for name in src.namelist():
            # Entries are <releases>/<module>/<path>.sig; <releases> lists the releases (as
            # digits and letters: 7, 8, 9, A = 10, ...) whose API the file is.
            parts = name.split("/", 2)
            if len(parts) < 3 or not name.endswith(".sig") or "8" not in parts[0]:
                continue
            path = parts[2]
            if path == "module-info.sig" or path in seen:
                continue
            seen.add(path)
            data = bytearray(src.read(name))
            data[6:8] = (52).to_bytes(2, "big")
            jar.writestr(path[:-4] + ".class", bytes(data))
    if len(seen) < 1000:
        fail(f"only {len(seen)} Java 8 classes in {ct_sym}")


def check_decode(obfuscated, expected, decode_path):
    entries = [line.split(":", 1)[1] for line in open(decode_path).read().splitlines()
               if not line.endswith(":POP")]
    if len(entries) != len(expected):
        fail(f"hubble decode printed {len(entries)} entries, the trace has {len(expected)}")
    wrong = [(o, e, g) for o, e, g in zip(obfuscated, expected, entries) if e != g]
    for o, e, g in wrong[:10]:
        print(f"  {o}\n    ReTrace: {e}\n    hubble:  {g}")
    if wrong:
        fail(f"{len(wrong)} of {len(expected)} names differ from ReTrace's")


def read_expected(names_path, expected_path):
    """The obfuscated names, and ReTrace's name and status for each."""
    obfuscated = [line for line in open(names_path).read().splitlines() if line.strip()]
    expected, status = [], []
    for line in open(expected_path).read().splitlines():
        name, st = line.rsplit("\t", 1)
        expected.append(name)
        status.append(st)
    if len(expected) != len(obfuscated):
        fail(f"{len(obfuscated)} names but {len(expected)} ReTrace results")
    return obfuscated, expected, status


def decode(names_path, expected_path, decode_path):
    obfuscated, expected, _ = read_expected(names_path, expected_path)
    check_decode(obfuscated, expected, decode_path)
    print(f"OK: {len(expected)} methods as ReTrace gives them (decode)")


def compare(names_path, expected_path, decode_path, top_path, chrome_path, folded_path,
            stderr_path):
    obfuscated, expected, status = read_expected(names_path, expected_path)
    # decode: `<ns>:<name>` per entry, `<ns>:POP` per exit, in the trace's (the names') order.
    check_decode(obfuscated, expected, decode_path)
    want = set(expected)
    top = {m["method"] for m in json.load(open(top_path))}
    if top != want:
        fail(f"hubble top: names differ from ReTrace's: {sorted(top ^ want)[:5]}")
    chrome = {e["name"] for e in json.load(open(chrome_path))["traceEvents"] if e.get("ph") == "B"}
    if chrome != want:
        fail(f"chrome-json export: names differ from ReTrace's: {sorted(chrome ^ want)[:5]}")
    folded = {line.rsplit(" ", 1)[0].split(";")[-1]
              for line in open(folded_path).read().splitlines()}
    if folded != want:
        fail(f"folded export: names differ from ReTrace's: {sorted(folded ^ want)[:5]}")
    stderr = open(stderr_path).read()
    kept, ambiguous = status.count("kept"), status.count("ambiguous")
    m = re.search(r"warning: .*: (\d+) of (\d+) method names kept", stderr)
    if (int(m.group(1)) if m else 0) != kept:
        fail(f"ReTrace kept {kept} name(s) obfuscated, hubble's warning says: {stderr!r}")
    m = re.search(r"note: .*: (\d+) method name\(s\) fit several", stderr)
    if (int(m.group(1)) if m else 0) != ambiguous:
        fail(f"ReTrace found {ambiguous} ambiguous name(s), hubble's note says: {stderr!r}")
    changed = sum(o != e for o, e in zip(obfuscated, expected))
    print(f"OK: {len(expected)} methods, {changed} changed, {ambiguous} ambiguous, "
          f"{kept} kept obfuscated (warned): every name as ReTrace gives it "
          f"(decode, top, chrome-json, folded)")


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "names":
        names(sys.argv[2])
    elif len(sys.argv) == 4 and sys.argv[1] == "lib8":
        lib8(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 5 and sys.argv[1] == "decode":
        decode(*sys.argv[2:])
    elif len(sys.argv) == 9 and sys.argv[1] == "compare":
        compare(*sys.argv[2:])
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
