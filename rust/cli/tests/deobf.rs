//! `--mapping`: for an obfuscated trace and its mapping, every command that prints or writes
//! method names (decode, top, chains, match, summary, tasks, every export format, the Parquet
//! tables) gives byte for byte what it gives for the trace before obfuscation; mappings are
//! chosen by `app.version`; bad and mismatched mappings are errors naming what is wrong, with
//! no output file; names that cannot be deobfuscated are kept and counted on stderr.
#![cfg(feature = "deobf")]

#[path = "../../format/tests/common/pool_scenario.rs"]
mod scenario;

mod common;
use common::output;

use common::obfuscate::obfuscate;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use hubble_format::{Mode, TraceFile};
use hubble_testkit::synth::{trace, Spec};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn ok(o: Output) -> Vec<u8> {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    o.stdout
}

/// Two synthetic threads and a version 4 file, with app types in signatures; written plain
/// under `plain/` and obfuscated under `obf/` with the same file names, and the mapping.
struct Case {
    plain: Vec<PathBuf>,
    obf: Vec<PathBuf>,
    mapping: PathBuf,
}

fn case(dir: &Path) -> Case {
    let mut singles: Vec<TraceFile> = (0..2)
        .map(|i| {
            trace(&Spec {
                seed: 60 + i,
                tid: 20 + i as u32,
                thread_name: format!("thread{i}"),
                ..Spec::default()
            })
        })
        .collect();
    let mut threads = scenario::build(Mode::Bits64, 3).file();
    // App types in signatures, so that types are deobfuscated too.
    for name in singles
        .iter_mut()
        .flat_map(|f| f.symbols.values_mut())
        .chain(threads.symbols.values_mut())
    {
        *name = name
            .replace("android.os.Bundle", "com.example.app.model.Bundle")
            .replace("(int)", "(com.example.app.model.Item[])");
    }
    let mut all = BTreeMap::new();
    for f in &singles {
        all.extend(f.symbols.clone());
    }
    for (p, n) in &threads.symbols {
        all.insert(p | 1 << 60, n.clone());
    }
    let (mapping_text, obf) = obfuscate(&all, "");
    let mapping = dir.join("mapping.txt");
    std::fs::write(&mapping, mapping_text).unwrap();
    let (plain_dir, obf_dir) = (dir.join("plain"), dir.join("obf"));
    std::fs::create_dir_all(&plain_dir).unwrap();
    std::fs::create_dir_all(&obf_dir).unwrap();
    let (mut plain, mut obfs) = (Vec::new(), Vec::new());
    for (i, f) in singles.iter().enumerate() {
        let name = format!("t{i}.hubble");
        f.write_atomic(&plain_dir.join(&name)).unwrap();
        let mut o = f.clone();
        for (p, n) in o.symbols.iter_mut() {
            *n = obf[p].clone();
        }
        assert_ne!(o.symbols, f.symbols);
        o.write_atomic(&obf_dir.join(&name)).unwrap();
        plain.push(plain_dir.join(&name));
        obfs.push(obf_dir.join(&name));
    }
    std::fs::write(plain_dir.join("v4.hubble"), threads.to_bytes().unwrap()).unwrap();
    for (p, n) in threads.symbols.iter_mut() {
        *n = obf[&(p | 1 << 60)].clone();
    }
    std::fs::write(obf_dir.join("v4.hubble"), threads.to_bytes().unwrap()).unwrap();
    plain.push(plain_dir.join("v4.hubble"));
    obfs.push(obf_dir.join("v4.hubble"));
    Case {
        plain,
        obf: obfs,
        mapping,
    }
}

/// Runs `args` (with `{files}` and `{out}` placeholders) on the plain files `files` (indices
/// into the case's) and on the obfuscated ones with `--mapping`; returns both outputs (stdout,
/// or the written file).
fn both(c: &Case, files: &[usize], dir: &Path, args: &[&str]) -> (Vec<u8>, Vec<u8>, String) {
    let pick = |v: &[PathBuf]| files.iter().map(|&i| v[i].clone()).collect::<Vec<_>>();
    let run = |files: &[PathBuf], out: &Path, mapping: Option<&Path>| {
        let mut v: Vec<String> = Vec::new();
        for a in args {
            match *a {
                "{files}" => v.extend(files.iter().map(|f| s(f).to_owned())),
                "{out}" => v.push(s(out).to_owned()),
                a => v.push(a.to_owned()),
            }
        }
        if let Some(m) = mapping {
            v.extend(["--mapping".to_owned(), s(m).to_owned()]);
        }
        let o = Command::new(env!("CARGO_BIN_EXE_hubble"))
            .args(&v)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{v:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let err = String::from_utf8(o.stderr).unwrap();
        if args.contains(&"{out}") {
            (std::fs::read(out).unwrap(), err)
        } else {
            (o.stdout, err)
        }
    };
    let (a, _) = run(&pick(&c.plain), &dir.join("plain.out"), None);
    let (b, err) = run(&pick(&c.obf), &dir.join("obf.out"), Some(&c.mapping));
    (a, b, err)
}

#[test]
fn every_command_and_format_prints_the_names_of_the_unobfuscated_trace() {
    let dir = tempfile::tempdir().unwrap();
    let c = case(dir.path());
    let sigs = dir.path().join("sigs.txt");
    std::fs::write(
        &sigs,
        "method click *MainActivity.onClick*\nchain click-sleep *onClick* > *sleep*\n\
         method item *(com.example.app.model.Item[])\n",
    )
    .unwrap();
    let sigs = s(&sigs);
    let mut commands: Vec<Vec<&str>> = vec![
        vec!["top", "{files}", "-n", "0"],
        vec!["top", "{files}", "-n", "0", "--json", "--inclusive"],
        vec!["chains", "{files}", "--last-ms", "0", "-n", "0"],
        vec!["chains", "{files}", "--json", "--by", "depth"],
        vec!["match", sigs, "{files}"],
        vec!["match", sigs, "{files}", "--json"],
        vec!["summary", "{files}", "--signatures", sigs],
        vec!["summary", "{files}", "--signatures", sigs, "--json"],
        vec!["tasks", "{files}"],
        vec!["tasks", "{files}", "--json"],
    ];
    for format in ["perfetto", "trace", "chrome-json", "folded", "svg"] {
        commands.push(vec!["export", "{files}", "--format", format, "-o", "{out}"]);
    }
    // The two single-thread files together, then the version 4 file (.trace cannot hold
    // both: their clocks are 2^32 µs apart).
    for (files, args) in [[0, 1].as_slice(), &[2]]
        .into_iter()
        .flat_map(|f| commands.iter().map(move |a| (f, a)))
    {
        let (plain, deobf, err) = both(&c, files, dir.path(), args);
        assert!(!plain.is_empty(), "{args:?}");
        assert!(
            plain == deobf,
            "{args:?} {files:?}: the deobfuscated output differs\n--- plain\n{}\n--- deobfuscated\n{}",
            String::from_utf8_lossy(&plain[..plain.len().min(3000)]),
            String::from_utf8_lossy(&deobf[..deobf.len().min(3000)])
        );
        assert!(!err.contains("warning"), "{args:?}: {err}");
        if args[0] == "match" && args.contains(&"--json") {
            // The signature names original types: it matches only once they are deobfuscated.
            let v: serde_json::Value = serde_json::from_slice(&plain).unwrap();
            let item = v.as_array().unwrap().iter().find(|m| m["name"] == "item");
            assert!(
                item.unwrap()["count"].as_u64().unwrap() > 0,
                "{files:?} {v}"
            );
        }
    }
    // One file at a time (Nanoscope), and decode's paths (trace files of every version).
    for (p, o) in c.plain.iter().zip(&c.obf) {
        let m = s(&c.mapping);
        for args in [
            vec!["decode", "--format", "tree"],
            vec!["decode", "--format", "nanoscope"],
        ] {
            let plain = ok(output(&[args.as_slice(), &[s(p)]].concat()));
            let deobf = ok(output(&[args.as_slice(), &[s(o), "--mapping", m]].concat()));
            assert!(plain == deobf, "{args:?} {}", p.display());
        }
    }
    let m = s(&c.mapping);
    let o = dir.path().join("obf.nanoscope");
    let p = dir.path().join("plain.nanoscope");
    ok(output(&[
        "export",
        s(&c.plain[0]),
        "--format",
        "nanoscope",
        "-o",
        s(&p),
    ]));
    ok(output(&[
        "export",
        s(&c.obf[0]),
        "--format",
        "nanoscope",
        "-o",
        s(&o),
        "--mapping",
        m,
    ]));
    assert_eq!(std::fs::read(p).unwrap(), std::fs::read(o).unwrap());
}

/// A raw ring import's symbol table (`decode --raw --symbols`) is deobfuscated too.
#[test]
fn raw_imports_are_deobfuscated() {
    let dir = tempfile::tempdir().unwrap();
    let c = case(dir.path());
    let file = TraceFile::read(&c.obf[0]).unwrap();
    let ring = dir.path().join("ring.bin");
    let bytes: Vec<u8> = file.window.iter().flat_map(|s| s.to_le_bytes()).collect();
    std::fs::write(&ring, bytes).unwrap();
    let tsv = dir.path().join("symbols.tsv");
    let text: String = file
        .symbols
        .iter()
        .map(|(p, n)| format!("{p:x}\t{n}\n"))
        .collect();
    std::fs::write(&tsv, text).unwrap();
    let args = |tsv: &Path| {
        vec![
            "decode".to_owned(),
            "--raw".to_owned(),
            s(&ring).to_owned(),
            "--mode".to_owned(),
            "64".to_owned(),
            "--write-pos".to_owned(),
            "0".to_owned(),
            "--ref-counter".to_owned(),
            file.header.reference_counter.to_string(),
            "--timer-hz".to_owned(),
            file.header.timer_hz.to_string(),
            "--symbols".to_owned(),
            s(tsv).to_owned(),
        ]
    };
    let a = args(&tsv);
    let mut with = a.clone();
    with.extend(["--mapping".to_owned(), s(&c.mapping).to_owned()]);
    let obf = String::from_utf8(ok(output(
        &a.iter().map(String::as_str).collect::<Vec<_>>(),
    )))
    .unwrap();
    let deobf = String::from_utf8(ok(output(
        &with.iter().map(String::as_str).collect::<Vec<_>>(),
    )))
    .unwrap();
    assert!(
        !obf.contains("MainActivity") && obf.contains(" o."),
        "{obf:.300}"
    );
    assert!(deobf.contains(" com.example.app.feature"), "{deobf:.300}");
    assert!(!deobf.contains(" o."), "{deobf:.300}");
}

/// Fleet tables: deobfuscated at export (docs/deobfuscation.md), the mapping chosen by each
/// trace's `app.version` (its own, or `--meta`'s): a mixed batch of two versions, each
/// obfuscated differently, gives the methods of the plain batch.
#[cfg(feature = "parquet")]
#[test]
fn parquet_tables_hold_source_names_with_one_mapping_per_app_version() {
    use arrow_array::StringArray;
    let dir = tempfile::tempdir().unwrap();
    let base = trace(&Spec {
        seed: 70,
        ..Spec::default()
    });
    let (plain_dir, obf_dir) = (dir.path().join("plain"), dir.path().join("obf"));
    std::fs::create_dir_all(&plain_dir).unwrap();
    std::fs::create_dir_all(&obf_dir).unwrap();
    let mut specs = Vec::new();
    for (i, version) in ["1.0", "2.0"].into_iter().enumerate() {
        let mut f = base.clone();
        f.header.tid += i as u32;
        f.header
            .metadata
            .insert("app.version".into(), version.into());
        f.write_atomic(&plain_dir.join(format!("{version}.hubble")))
            .unwrap();
        // Each version obfuscated apart: its own class names.
        let (text, obf) = obfuscate(&f.symbols, &i.to_string());
        f.symbols = obf;
        f.write_atomic(&obf_dir.join(format!("{version}.hubble")))
            .unwrap();
        let m = dir.path().join(format!("mapping-{version}.txt"));
        std::fs::write(&m, text).unwrap();
        specs.push(format!("{version}={}", s(&m)));
    }
    let methods = |table: &Path| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(table)
            .unwrap()
            .flat_map(|e| {
                hubble_fleet::write::read_part(&e.unwrap().path())
                    .unwrap()
                    .1
            })
            .flat_map(|b| {
                b.column_by_name("method")
                    .unwrap()
                    .as_any()
                    .downcast_ref::<StringArray>()
                    .unwrap()
                    .iter()
                    .map(|m| m.unwrap().to_owned())
                    .collect::<Vec<_>>()
            })
            .collect();
        v.sort();
        v
    };
    let export = |src: &Path, out: &Path, mapping: &[&str]| {
        let files: Vec<PathBuf> = ["1.0", "2.0"]
            .iter()
            .map(|v| src.join(format!("{v}.hubble")))
            .collect();
        let mut args = vec!["export", "--format", "parquet", "-o", s(out)];
        args.extend(files.iter().map(|f| s(f)));
        args.extend(mapping);
        ok(output(&args));
        let mut args = vec!["summary", "--parquet", s(out)];
        args.extend(files.iter().map(|f| s(f)));
        args.extend(mapping);
        ok(output(&args));
    };
    let (plain_out, obf_out) = (dir.path().join("fleet-plain"), dir.path().join("fleet-obf"));
    export(&plain_dir, &plain_out, &[]);
    export(
        &obf_dir,
        &obf_out,
        &["--mapping", &specs[0], "--mapping", &specs[1]],
    );
    for table in ["calls", "summary_top"] {
        let (plain, deobf) = (
            methods(&plain_out.join(table)),
            methods(&obf_out.join(table)),
        );
        assert!(plain.iter().any(|m| m.contains("com.example.app")));
        assert_eq!(plain, deobf, "{table}");
    }
    // `--meta app.version` chooses the mapping over the file's own version: version 2.0's
    // mapping on the 1.0 file finds none of its classes.
    let one = s(&obf_dir.join("1.0.hubble")).to_owned();
    let out = dir.path().join("fleet-meta");
    let r = output(&[
        "export",
        "--format",
        "parquet",
        "-o",
        s(&out),
        &one,
        "--meta",
        "app.version=2.0",
        "--mapping",
        &specs[1],
    ]);
    assert_eq!(r.status.code(), Some(2));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(
        err.contains("none of its classes is in the mapping"),
        "{err}"
    );
}

#[test]
fn names_that_do_not_resolve_are_kept_and_counted_in_one_warning_line() {
    let dir = tempfile::tempdir().unwrap();
    let c = case(dir.path());
    // Drop one class's section from the mapping: its names keep their obfuscated class.
    let text = std::fs::read_to_string(&c.mapping).unwrap();
    let mut kept = String::new();
    let mut skip = false;
    for line in text.lines() {
        if !line.starts_with([' ', '#']) {
            skip = line.starts_with("com.example.app.MainActivity ");
        }
        if !skip {
            kept += line;
            kept.push('\n');
        }
    }
    assert_ne!(kept, text);
    let partial = dir.path().join("partial.txt");
    std::fs::write(&partial, kept).unwrap();
    let r = output(&["top", s(&c.obf[0]), "-n", "0", "--mapping", s(&partial)]);
    let err = String::from_utf8(r.stderr.clone()).unwrap();
    let out = String::from_utf8(ok(r)).unwrap();
    let warnings: Vec<&str> = err.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(warnings.len(), 1, "{err}");
    assert!(
        warnings[0].contains("partial.txt: 1 of ")
            && warnings[0].contains("1 in classes that look obfuscated but are not in the mapping"),
        "{err}"
    );
    assert!(out.contains("com.example.app.feature"), "{out}");
}

#[test]
fn bad_and_mismatched_mappings_are_errors_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let c = case(dir.path());
    let obf = s(&c.obf[0]);
    let bad = dir.path().join("bad.txt");
    // A bad member line in a class the trace uses (read when first used), and a bad class
    // line (read with the file).
    std::fs::write(&bad, "com.a.B -> o.a:\n    void f( -> a\n").unwrap();
    let bad_class = dir.path().join("bad-class.txt");
    std::fs::write(&bad_class, "com.a.B -> o.a:\nnot a class line\n").unwrap();
    let other = dir.path().join("other.txt");
    std::fs::write(&other, "com.other.X -> q.r:\n    void run() -> a\n").unwrap();
    let never = dir.path().join("never.json");
    let cases: [(&[&str], &str); 6] = [
        (&["--mapping", s(&bad)], "bad.txt:2: expected a member line"),
        (
            &["--mapping", s(&bad_class)],
            "bad-class.txt:2: expected a class line",
        ),
        (
            &["--mapping", s(&other)],
            "none of its classes is in the mapping",
        ),
        (
            &["--mapping", "missing.txt"],
            "--mapping missing.txt: missing.txt: ",
        ),
        (
            &["--mapping", s(&c.mapping), "--mapping", s(&other)],
            "one mapping for every trace at most",
        ),
        (&["--mapping", "=x"], "want FILE or VERSION=FILE"),
    ];
    for (extra, want) in cases {
        let mut args = vec!["export", obf, "--format", "chrome-json", "-o", s(&never)];
        args.extend(extra);
        let r = output(&args);
        let err = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(2), "{extra:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with("hubble: error: ") && err.contains(want),
            "{err}"
        );
        let left = hubble_testkit::file_names(dir.path(), |name| name.contains("never"));
        assert!(left.is_empty(), "{left:?}");
    }
    // Fleet tables already hold the names export wrote.
    let r = output(&["--mapping", s(&c.mapping), "fleet", "growth", "x"]);
    assert_eq!(r.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&r.stderr).contains("give --mapping to those"));
}

#[test]
fn traces_without_a_mapping_for_their_version_are_named_in_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let c = case(dir.path());
    let spec = format!("9.9={}", s(&c.mapping));
    let r = output(&["top", s(&c.obf[0]), "--mapping", &spec]);
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(r.status.success(), "{err}");
    assert!(
        err.contains("no --mapping for 1 trace(s) (1 without app.version)"),
        "{err}"
    );
}

/// A fleet batch skips a bad trace but not a bad mapping, which would spoil every trace: the
/// export stops with the mapping's error and writes nothing.
#[cfg(feature = "parquet")]
#[test]
fn a_bad_mapping_stops_a_fleet_batch() {
    let dir = tempfile::tempdir().unwrap();
    let c = case(dir.path());
    let bad = dir.path().join("bad.txt");
    std::fs::write(&bad, "com.a.B -> o.a:\n    void f( -> a\n").unwrap();
    let out = dir.path().join("fleet");
    for command in [
        &["export", "--format", "parquet", "-o"][..],
        &["summary", "--parquet"][..],
    ] {
        let mut args = command.to_vec();
        args.push(s(&out));
        args.extend(c.obf.iter().map(|f| s(f)));
        args.extend(["--mapping", s(&bad)]);
        let r = output(&args);
        let err = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(2), "{err}");
        assert!(!err.contains("skipped"), "{err}");
        assert!(err.contains("bad.txt:2: expected a member line"), "{err}");
        assert!(!out.exists());
    }
}
