#!/usr/bin/env python3
"""Checks the top-level Android.bp against the repository, without Soong.

bpfmt (Debian's blueprint-tools) checks the syntax and formatting; this script parses the file
with its own Blueprint parser and checks what bpfmt cannot:

  * module names are unique; every `defaults` and `:module` reference made inside the file
    resolves; every dependency on a module defined elsewhere in AOSP is listed in
    tests/aosp/aosp-modules.txt (the record of names this file assumes, with where they live);
  * every source path and glob names files that exist in the repository;
  * each Rust module's crate_name matches its Cargo crate, every (non-optional) Cargo
    dependency of that crate appears in the module's rustlibs under its AOSP name, and the
    crate's default Cargo features are listed in `features` (Soong enables none by itself)
    unless its Cargo.toml leaves them off on purpose ([package.metadata.aosp] omit-features);
  * each rust_bindgen module runs bindgen as its Cargo crate's build.rs does: the crate is the
    one its wrapper_src lives in, build.rs names the wrapper and writes <source_stem>.rs, its
    bindgen flags (build.rs's `const ...FLAGS: &[&str]`) are bindgen_flags exactly, and it is
    used as that crate (rustlibs, crate_name the Cargo crate's, whose src/lib.rs includes the
    output) or as a source of that crate's module (srcs ":name", included from OUT_DIR);
  * the cxx bridge genrules read the file that holds the runtime crate's #[cxx::bridge], and
    an ART file that includes a generated *.rs.h header uses the path the genrule writes;
  * names the ART patches add to art/runtime/Android.bp that look like ours are defined here.

Usage: bp_check.py [--root DIR] [--bp FILE] [--self-test]
Exits 1 with one line per problem.
"""
import argparse
import glob
import os
import re
import sys
import tomllib


# ------------------------------------------------------------------------------ parser
class ParseError(Exception):
    pass


class Ref:
    """A variable reference, resolved after parsing."""

    def __init__(self, name, line):
        self.name, self.line = name, line


_TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<lcomment>//[^\n]*)
  | (?P<bcomment>/\*.*?\*/)
  | (?P<string>"(?:[^"\\\n]|\\.)*")
  | (?P<rawstring>`[^`]*`)
  | (?P<int>-?\d+)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>\+=|[{}\[\]:,=+()])
  """,
    re.VERBOSE | re.DOTALL,
)


def tokenize(text):
    pos, line, out = 0, 1, []
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise ParseError(f"line {line}: unexpected character {text[pos]!r}")
        kind, val = m.lastgroup, m.group()
        if kind not in ("ws", "lcomment", "bcomment"):
            out.append((kind, val, line))
        line += val.count("\n")
        pos = m.end()
    out.append(("eof", "", line))
    return out


def _unquote(tok):
    kind, val, line = tok
    if kind == "rawstring":
        return val[1:-1]
    body = val[1:-1]
    return re.sub(
        r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), body
    )


class Parser:
    def __init__(self, text):
        self.toks = tokenize(text)
        self.i = 0
        self.variables = {}
        self.modules = []  # (type, props dict, line)

    def peek(self, k=0):
        return self.toks[self.i + k]

    def take(self, value=None, kind=None):
        tok = self.toks[self.i]
        if (value is not None and tok[1] != value) or (kind is not None and tok[0] != kind):
            want = value if value is not None else kind
            raise ParseError(f"line {tok[2]}: expected {want!r}, found {tok[1]!r}")
        self.i += 1
        return tok

    def parse(self):
        while self.peek()[0] != "eof":
            name_tok = self.take(kind="ident")
            nxt = self.peek()[1]
            if nxt in ("=", "+="):
                self.take()
                value = self.resolve(self.expr())
                if nxt == "+=":
                    if name_tok[1] not in self.variables:
                        raise ParseError(f"line {name_tok[2]}: += to undefined {name_tok[1]}")
                    value = self.add(self.variables[name_tok[1]], value, name_tok[2])
                elif name_tok[1] in self.variables:
                    raise ParseError(f"line {name_tok[2]}: variable {name_tok[1]} reassigned")
                self.variables[name_tok[1]] = value
            elif nxt == "{":
                props = self.resolve(self.map_value())
                self.modules.append((name_tok[1], props, name_tok[2]))
            else:
                raise ParseError(f"line {name_tok[2]}: expected '=' or '{{' after {name_tok[1]}")
        return self

    def expr(self):
        value = self.operand()
        while self.peek()[1] == "+":
            line = self.take("+")[2]
            value = ("+", value, self.operand(), line)
        return value

    def operand(self):
        kind, val, line = self.peek()
        if kind in ("string", "rawstring"):
            self.i += 1
            return _unquote((kind, val, line))
        if kind == "int":
            self.i += 1
            return int(val)
        if kind == "ident":
            self.i += 1
            if val == "true":
                return True
            if val == "false":
                return False
            return Ref(val, line)
        if val == "[":
            self.take("[")
            items = []
            while self.peek()[1] != "]":
                items.append(self.expr())
                if self.peek()[1] == ",":
                    self.take(",")
                elif self.peek()[1] != "]":
                    raise ParseError(f"line {self.peek()[2]}: expected ',' or ']' in list")
            self.take("]")
            return items
        if val == "{":
            return self.map_value()
        raise ParseError(f"line {line}: unexpected {val!r}")

    def map_value(self):
        self.take("{")
        props = {}
        while self.peek()[1] != "}":
            key_tok = self.take(kind="ident")
            if key_tok[1] in props:
                raise ParseError(f"line {key_tok[2]}: property {key_tok[1]} set twice")
            self.take(":")
            props[key_tok[1]] = self.expr()
            if self.peek()[1] == ",":
                self.take(",")
            elif self.peek()[1] != "}":
                raise ParseError(f"line {self.peek()[2]}: expected ',' or '}}' after {key_tok[1]}")
        self.take("}")
        return props

    def resolve(self, v):
        if isinstance(v, Ref):
            if v.name not in self.variables:
                raise ParseError(f"line {v.line}: undefined variable {v.name}")
            return self.variables[v.name]
        if isinstance(v, tuple) and v and v[0] == "+":
            return self.add(self.resolve(v[1]), self.resolve(v[2]), v[3])
        if isinstance(v, list):
            return [self.resolve(x) for x in v]
        if isinstance(v, dict):
            return {k: self.resolve(x) for k, x in v.items()}
        return v

    @staticmethod
    def add(a, b, line):
        if type(a) is not type(b) or not isinstance(a, (str, list, int, dict)):
            raise ParseError(f"line {line}: cannot add {type(a).__name__} and {type(b).__name__}")
        if isinstance(a, dict):
            out = dict(a)
            out.update(b)
            return out
        return a + b


def parse(text):
    return Parser(text).parse()


# ------------------------------------------------------------------------------ checks
DEP_PROPS = (
    "rustlibs", "rlibs", "dylibs", "proc_macros", "static_libs", "whole_static_libs",
    "shared_libs", "header_libs", "generated_headers", "generated_sources", "tools",
    "defaults", "libs", "static_libs", "required",
)
PATH_PROPS = ("srcs", "manifest", "exclude_srcs", "license_text", "crate_root", "wrapper_src",
              "local_include_dirs")
# Module types that exist only to describe the package; they have no sources.
NO_SOURCE_TYPES = ("license", "package")
# Cargo package names whose AOSP module is not lib<name with '-' as '_'>.
CARGO_TO_AOSP = {"log": "liblog_rust"}


# Words allowed in a [target.'cfg(...)'] key for Soong to build that table (predicates and the
# values they take on Android and Linux hosts).
PLATFORM_CFG = {
    "all", "any", "not", "target_os", "target_family", "target_arch", "target_env",
    "target_pointer_width", "unix", "linux", "android", "aarch64", "arm", "x86", "x86_64",
    "riscv64", "gnu", "musl", "bionic",
}


def aosp_name(cargo_dep):
    return CARGO_TO_AOSP.get(cargo_dep, "lib" + cargo_dep.replace("-", "_"))


def walk_props(props, key):
    """Values of `key` in props and in every nested target/arch/etc. map."""
    out = []
    for k, v in props.items():
        if k == key:
            out.append(v)
        elif isinstance(v, dict):
            out.extend(walk_props(v, key))
    return out


def flat_strings(values):
    out = []
    for v in values:
        if isinstance(v, list):
            out.extend(x for x in v if isinstance(x, str))
        elif isinstance(v, str):
            out.append(v)
    return out


def load_known_external(path):
    known = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split()
            if len(parts) != 3 or parts[2] not in ("yes", "check", "import"):
                raise SystemExit(f"{path}:{n}: want '<module> <project in AOSP> yes|check|import'")
            known[parts[0]] = parts[1]
    return known


def cargo_deps(cargo_toml):
    with open(cargo_toml, "rb") as f:
        data = tomllib.load(f)
    deps = []
    tables = [data.get("dependencies", {})]
    # [target.'cfg(...)'.dependencies]: Soong builds them too (under target: { android: ... }).
    # Custom cfgs (cfg(loom), cfg(fuzzing)) are never set by Soong: those tables are skipped.
    for key, t in data.get("target", {}).items():
        preds = re.findall(r"[a-z_]+", key[4:-1]) if key.startswith("cfg(") else ["target_arch"]
        if all(p in PLATFORM_CFG for p in preds):
            tables.append(t.get("dependencies", {}))
    for table in tables:
        for name, spec in table.items():
            if isinstance(spec, dict) and spec.get("optional"):
                continue
            if isinstance(spec, dict) and "package" in spec:
                name = spec["package"]
            if name not in deps:
                deps.append(name)
    build_script = bool(data.get("build-dependencies")) or data.get("package", {}).get("build") \
        or os.path.exists(os.path.join(os.path.dirname(cargo_toml), "build.rs"))
    pkg = data.get("package", {}).get("name", "")
    lib_name = data.get("lib", {}).get("name", pkg.replace("-", "_"))
    bins = [b.get("name") for b in data.get("bin", [])]
    omitted = data.get("package", {}).get("metadata", {}).get("aosp", {}).get("omit-features", [])
    defaults = [f for f in data.get("features", {}).get("default", []) if f not in omitted]
    return deps, lib_name, bins, build_script, defaults, omitted


# Soong's module types that run bindgen on a wrapper header (a crate of their own, or a source).
BINDGEN_TYPES = ("rust_bindgen", "rust_bindgen_host")


def bindgen_crate_dir(root, wrapper):
    """The Cargo crate (directory relative to root) that holds `wrapper`, or None."""
    d = os.path.dirname(wrapper)
    while d and d != os.path.dirname(d):
        if os.path.exists(os.path.join(root, d, "Cargo.toml")):
            return d
        d = os.path.dirname(d)
    return None


def check_bindgen(root, name, props, where, defined, merged):
    """A rust_bindgen module against the Cargo crate whose build.rs runs the same bindgen."""
    problems = []
    wrapper, stem = props.get("wrapper_src"), props.get("source_stem")
    if not isinstance(wrapper, str) or not isinstance(stem, str):
        return [f"{where}: needs wrapper_src and source_stem (the output's name)"]
    if not props.get("crate_name"):
        problems.append(f"{where}: no crate_name")
    crate_dir = bindgen_crate_dir(root, wrapper)
    if crate_dir is None:
        return problems + [f"{where}: wrapper_src '{wrapper}' is in no Cargo crate"]
    build_rs = os.path.join(root, crate_dir, "build.rs")
    if not os.path.exists(build_rs):
        return problems + [f"{where}: {crate_dir} has no build.rs to run bindgen in a cargo build"]
    with open(build_rs, encoding="utf-8") as f:
        build = f.read()
    if f'"{os.path.basename(wrapper)}"' not in build:
        problems.append(f"{where}: {crate_dir}/build.rs does not read {os.path.basename(wrapper)}")
    if f'"{stem}.rs"' not in build:
        problems.append(f"{where}: {crate_dir}/build.rs does not write {stem}.rs (source_stem)")
    lists = re.findall(r"const\s+[A-Z_]*FLAGS\s*:\s*&\[&str\]\s*=\s*&\[(.*?)\];", build, re.S)
    if not lists:
        problems.append(f"{where}: {crate_dir}/build.rs has no `const ...FLAGS: &[&str]` (the "
                        f"bindgen flags a cargo build passes, which bindgen_flags must equal)")
    cargo_flags = [f for body in lists for f in re.findall(r'"([^"]*)"', body)]
    bp_flags = flat_strings([props.get("bindgen_flags", [])])
    for flag in bp_flags:
        if flag not in cargo_flags:
            problems.append(f"{where}: bindgen flag '{flag}' is not in {crate_dir}/build.rs")
    for flag in cargo_flags:
        if flag not in bp_flags:
            problems.append(f"{where}: {crate_dir}/build.rs passes bindgen '{flag}', which "
                            f"bindgen_flags lacks")
    # How the output is used: as the crate itself, or as a source of the crate's module.
    include = f'"/{stem}.rs"'
    as_lib = [n for n, (t, p, _) in defined.items()
              if name in flat_strings(walk_props(merged(p), "rustlibs"))]
    as_src = [n for n, (t, p, _) in defined.items()
              if ":" + name in flat_strings(walk_props(merged(p), "srcs"))]
    if not as_lib and not as_src:
        problems.append(f"{where}: used by no module (rustlibs or srcs \":{name}\")")
    if as_lib:
        _, lib_name, _, _, _, _ = cargo_deps(os.path.join(root, crate_dir, "Cargo.toml"))
        if props.get("crate_name") != lib_name:
            problems.append(f"{where}: crate_name '{props.get('crate_name')}' is not {lib_name} "
                            f"(from {crate_dir}/Cargo.toml), the crate {', '.join(as_lib)} depend on")
        lib_rs = os.path.join(root, crate_dir, "src", "lib.rs")
        body = ""
        if os.path.exists(lib_rs):
            with open(lib_rs, encoding="utf-8") as f:
                body = f.read()
        if include not in body:
            problems.append(f"{where}: {crate_dir}/src/lib.rs does not include the generated "
                            f"{stem}.rs (the crate Soong builds is that file alone)")
    for user in as_src:
        srcs = flat_strings([merged(defined[user][1]).get("srcs", [])])
        user_dir = srcs[0].split("/src/")[0] if srcs else None
        if user_dir != crate_dir:
            problems.append(f"{where}: a source of {user} ({user_dir}), but {crate_dir}/build.rs "
                            f"generates it for cargo")
            continue
        bodies = []
        for dirpath, _, files in os.walk(os.path.join(root, crate_dir, "src")):
            for fn in files:
                if fn.endswith(".rs"):
                    with open(os.path.join(dirpath, fn), encoding="utf-8") as f:
                        bodies.append(f.read())
        if not any('env!("OUT_DIR")' in body and include in body for body in bodies):
            problems.append(f"{where}: no file of {crate_dir}/src includes {stem}.rs from OUT_DIR")
    return problems


NOTES = []


def check(root, bp_path, known_path):
    problems = []
    with open(bp_path, encoding="utf-8") as f:
        text = f.read()
    try:
        bp = parse(text)
    except ParseError as e:
        return [f"{bp_path}: parse error: {e}"]
    known = load_known_external(known_path)

    defined = {}
    for mtype, props, line in bp.modules:
        name = props.get("name")
        if mtype == "package":
            continue
        if not isinstance(name, str) or not name:
            problems.append(f"line {line}: {mtype} has no name")
            continue
        if name in defined:
            problems.append(f"line {line}: module {name} defined twice")
        defined[name] = (mtype, props, line)

    def merged(props):
        """props with its defaults' list properties appended (one level, as Soong does)."""
        out = {k: v for k, v in props.items()}
        for d in props.get("defaults", []):
            if d in defined:
                for k, v in defined[d][1].items():
                    if k == "name":
                        continue
                    if k not in out:
                        out[k] = v
                    elif isinstance(v, list) and isinstance(out[k], list):
                        out[k] = v + out[k]
                    elif isinstance(v, dict) and isinstance(out[k], dict):
                        out[k] = {**v, **out[k]}
        return out

    for name, (mtype, props, line) in defined.items():
        where = f"line {line}: {mtype} {name}"
        # References.
        for prop in DEP_PROPS:
            for dep in flat_strings(walk_props(props, prop)):
                dep = dep.lstrip(":")
                if dep in defined or dep in known:
                    continue
                problems.append(
                    f"{where}: {prop} names '{dep}', defined neither here nor in "
                    f"{os.path.relpath(known_path, root)}"
                )
        # Paths.
        if mtype in NO_SOURCE_TYPES:
            continue
        for prop in PATH_PROPS:
            for p in flat_strings(walk_props(props, prop)):
                if p.startswith(":"):
                    if p[1:] not in defined and p[1:] not in known:
                        problems.append(f"{where}: {prop} references unknown module {p}")
                    continue
                full = os.path.join(root, p)
                hits = glob.glob(full, recursive=True) if any(c in p for c in "*?[") else (
                    [full] if os.path.exists(full) else [])
                if not hits:
                    problems.append(f"{where}: {prop} '{p}' matches no file in the repository")
        # bindgen modules against the build script that runs the same bindgen for cargo.
        if mtype in BINDGEN_TYPES:
            problems.extend(check_bindgen(root, name, props, where, defined, merged))
            continue
        # Rust modules against their Cargo crate.
        if mtype.startswith("rust_") and mtype != "rust_defaults":
            m = merged(props)
            srcs = flat_strings([m.get("srcs", [])])
            if not srcs:
                problems.append(f"{where}: no srcs")
                continue
            crate_dir = srcs[0].split("/src/")[0]
            cargo = os.path.join(root, crate_dir, "Cargo.toml")
            if not os.path.exists(cargo):
                problems.append(f"{where}: no Cargo.toml at {crate_dir}")
                continue
            deps, lib_name, bins, build_script, defaults, omitted = cargo_deps(cargo)
            for feat in omitted:
                NOTES.append(f"{name}: {crate_dir}/Cargo.toml's default feature '{feat}' is left "
                             f"off on purpose ([package.metadata.aosp] omit-features)")
            features = set(flat_strings(walk_props(m, "features")))
            for feat in defaults:
                if feat not in features:
                    problems.append(f"{where}: {crate_dir}/Cargo.toml enables feature '{feat}' by "
                                    f"default; Soong enables none by default: add it to features")
            bindgens = [n for n, (t, p, _) in defined.items() if t in BINDGEN_TYPES
                        and bindgen_crate_dir(root, p.get("wrapper_src", "")) == crate_dir]
            if build_script and "cxx" in deps:
                NOTES.append(f"{name}: {crate_dir}/build.rs is not run by Soong; the cxxbridge "
                             f"genrules generate the bridge's C++ instead"
                             + (f", and {', '.join(bindgens)} its bindgen output" if bindgens
                                else ""))
            elif build_script:
                NOTES.append(f"{name}: {crate_dir} has a Cargo build script, which Soong never "
                             f"runs; what it generates must come from a genrule or be checked in "
                             f"(docs/aosp-build.md)")
            crate_name = m.get("crate_name")
            want = bins if mtype.startswith("rust_binary") else [lib_name]
            if crate_name not in want:
                problems.append(f"{where}: crate_name '{crate_name}' is not {' or '.join(want)} "
                                f"(from {crate_dir}/Cargo.toml)")
            rustlibs = set(flat_strings(walk_props(m, "rustlibs")))
            rustlibs |= set(flat_strings(walk_props(m, "proc_macros")))
            for dep in deps:
                if aosp_name(dep) not in rustlibs:
                    problems.append(
                        f"{where}: {crate_dir}/Cargo.toml depends on '{dep}' but rustlibs "
                        f"lacks '{aosp_name(dep)}' (add it to the module's rustlibs, and to "
                        f"tests/aosp/aosp-modules.txt if AOSP defines it)"
                    )

    # The cxx bridge.
    bridge_rules = [(n, p) for n, (t, p, _) in defined.items()
                    if t == "genrule" and "cxxbridge" in flat_strings([p.get("tools", [])])]
    runtime_src = os.path.join(root, "rust", "runtime", "src")
    bridge_files = []
    for dirpath, _, files in os.walk(runtime_src):
        for fn in files:
            if fn.endswith(".rs"):
                full = os.path.join(dirpath, fn)
                with open(full, encoding="utf-8") as f:
                    if re.search(r"#\[cxx::bridge", f.read()):
                        bridge_files.append(os.path.relpath(full, root))
    runtime_deps, _, _, _, _, _ = cargo_deps(os.path.join(root, "rust", "runtime", "Cargo.toml"))
    if not bridge_rules:
        problems.append("no cxxbridge genrule")
    headers = set()
    for n, p in bridge_rules:
        srcs = flat_strings([p.get("srcs", [])])
        if "--header" in p.get("cmd", ""):
            headers |= set(flat_strings([p.get("out", [])]))
        if "cxx" in runtime_deps or bridge_files:
            if len(bridge_files) != 1:
                problems.append(f"genrule {n}: expected one #[cxx::bridge] file in "
                                f"rust/runtime/src, found {bridge_files or 'none'}")
            elif srcs != bridge_files:
                problems.append(f"genrule {n}: srcs {srcs} but the bridge is in {bridge_files[0]}")
    # ART files that include a generated bridge header must use the genrule's output path.
    art_files = os.path.join(root, "art-patches")
    for dirpath, _, files in os.walk(art_files):
        for fn in files:
            full = os.path.join(dirpath, fn)
            try:
                with open(full, encoding="utf-8", errors="replace") as f:
                    body = f.read()
            except OSError:
                continue
            for inc in re.findall(r'#include\s+"([^"]+\.rs\.h)"', body):
                if inc not in headers:
                    problems.append(f"{os.path.relpath(full, root)} includes \"{inc}\" but the "
                                    f"bridge header genrule writes {sorted(headers)}")
            if fn.endswith(".patch") and "runtime/Android.bp" in body:
                for ref in re.findall(r'^\+.*?"((?:lib)?hubble[A-Za-z0-9_]*)"', body, re.M):
                    if ref not in defined:
                        problems.append(f"{os.path.relpath(full, root)} adds '{ref}' to "
                                        f"art/runtime/Android.bp, which Android.bp does not define")
    return problems


def self_test():
    ok = parse('a = ["x"]\nb = a + ["y"]\nm { name: "n", srcs: b, t: { x: { y: true, }, }, }\n')
    assert ok.modules[0][1]["srcs"] == ["x", "y"], ok.modules
    assert ok.modules[0][1]["t"]["x"]["y"] is True
    for bad in ('m { name: "n" srcs: [] }', 'm { name: "n", name: "o" }', 'm { s: undefined_v }',
                'a = "x"\na = "y"', 'm { s: ["a" "b"] }', 'm { s: "a" + ["b"] }'):
        try:
            parse(bad)
        except ParseError:
            continue
        raise AssertionError(f"parsed but should not: {bad!r}")
    print("bp_check self-test: parser accepts and rejects as expected")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(here)))
    ap.add_argument("--bp", default=None)
    ap.add_argument("--known", default=os.path.join(here, "aosp-modules.txt"))
    ap.add_argument("--self-test", action="store_true")
    ap.add_argument("--genrules", metavar="TOOL",
                    help="print, as JSON, the genrules whose tools include TOOL (name, cmd, srcs, "
                         "out) for a test that runs their commands")
    a = ap.parse_args()
    if a.self_test:
        self_test()
        return 0
    bp = a.bp or os.path.join(a.root, "Android.bp")
    if a.genrules:
        import json
        with open(bp, encoding="utf-8") as f:
            mods = parse(f.read()).modules
        rules = [{"name": p["name"], "cmd": p["cmd"], "srcs": p.get("srcs", []), "out": p["out"]}
                 for t, p, _ in mods if t == "genrule" and a.genrules in p.get("tools", [])]
        print(json.dumps(rules))
        return 0
    problems = check(a.root, bp, a.known)
    for note in dict.fromkeys(NOTES):
        print(f"note: {note}")
    for p in problems:
        print(f"{os.path.relpath(bp, a.root)}: {p}")
    if problems:
        print(f"bp_check: {len(problems)} problem(s)")
        return 1
    print(f"bp_check: {bp} consistent with the repository")
    return 0


if __name__ == "__main__":
    sys.exit(main())
