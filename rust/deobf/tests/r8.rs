//! R8's extensions, which ProGuard does not write: hand-written mapping files, each expected
//! result worked out from R8's format documentation (doc/retrace.md, "R8, Retrace and map file
//! versioning"): the version header and its gating, sourceFile, synthesized, inline frames
//! (one minified range, innermost frame first), outline and outlineCallsite, rewriteFrame,
//! catch-all ranges, residual signatures, lenient JSON; plus R8's own rule that an invalid
//! residual signature is ignored with a warning.

use hubble_deobf::{Kind, Mapping, MappingError};

fn parse(text: &str) -> Mapping {
    Mapping::parse("r8.txt", text).unwrap_or_else(|e| panic!("{e}"))
}

fn check(m: &Mapping, obfuscated: &str, want: &str, kind: Kind) {
    let r = m.deobfuscate(obfuscated).unwrap();
    assert_eq!((r.name.as_str(), r.kind), (want, kind), "{obfuscated}");
}

/// Inline frames: the runtime entered the residual method, i.e. the outermost frame of the
/// group; the inlinee (`other.Util.inlinee`) is code inside it, not a method the trace saw.
#[test]
fn an_inlined_into_method_is_named_by_its_outermost_frame() {
    let m = parse(
        r#"# {"id":"com.android.tools.r8.mapping","version":"2.2"}
com.example.Foo -> a:
# {"id":"sourceFile","fileName":"Foo.kt"}
    1:3:void bar():47:49 -> a
    4:4:void other.Util.inlinee():23:23 -> a
    4:4:void baz(int):7 -> a
    5:9:void baz(int):8:12 -> a
    0:65535:void single():33:33 -> b
"#,
    );
    let d = Kind::Deobfuscated;
    check(&m, "void a.a()", "void com.example.Foo.bar()", d);
    check(&m, "void a.a(int)", "void com.example.Foo.baz(int)", d);
    check(&m, "void a.b()", "void com.example.Foo.single()", d);
    assert_eq!(m.info().metadata["sourceFile"], 1);
}

/// Two original methods behind one residual method with the same signature (e.g. R8 merged
/// identical code): both printed, never one picked.
#[test]
fn several_originals_with_one_signature_print_every_candidate() {
    let m = parse(
        "com.example.A -> f:
    1:1:void onStart():10:10 -> a
    2:2:void onResume():20:20 -> a
    3:3:void onStart():11:11 -> a
",
    );
    check(
        &m,
        "void f.a()",
        "void com.example.A.onStart() | void com.example.A.onResume()",
        Kind::Ambiguous,
    );
}

/// Residual signature (2.2): the runtime prints the residual signature, here with a removed
/// parameter and a merged return type, which mapping the original types forward cannot give.
#[test]
fn a_residual_signature_finds_a_method_whose_signature_r8_changed() {
    let text = |version: &str| {
        format!(
            "# {{'id':'com.android.tools.r8.mapping','version':'{version}'}}
com.example.Key -> c:
com.example.Model -> d:
com.example.Repo -> b:
    1:1:com.example.Model load(com.example.Key,boolean):10:10 -> a
    # {{'id':'com.android.tools.r8.residualsignature','signature':'(Lc;)Ld;'}}
    2:4:com.example.Model load(com.example.Key,boolean):11:13 -> a
    5:5:void save(com.example.Model):20:20 -> a
"
        )
    };
    let m = parse(&text("2.2"));
    check(
        &m,
        "d b.a(c)",
        "com.example.Model com.example.Repo.load(com.example.Key, boolean)",
        Kind::Deobfuscated,
    );
    // The residual signature replaces the computed one: the unchanged-looking form does not
    // match any more ...
    check(
        &m,
        "d b.a(c, boolean)",
        "com.example.Model com.example.Repo.a(com.example.Key, boolean)",
        Kind::SignatureMismatch,
    );
    // ... and a method without one still matches by its mapped types.
    check(
        &m,
        "void b.a(d)",
        "void com.example.Repo.save(com.example.Model)",
        Kind::Deobfuscated,
    );
    // Under a version 2.0 header the residual signature is a plain comment (R8's rule): the
    // changed signature then matches nothing, and says so.
    let old = parse(&text("2.0"));
    assert_eq!(old.info().ignored_for_version, 1);
    check(
        &old,
        "d b.a(c)",
        "com.example.Model com.example.Repo.a(com.example.Key)",
        Kind::SignatureMismatch,
    );
}

/// R8 ignores (with a warning) a residual signature that is not a descriptor or is of the
/// wrong kind; so does this crate, counting them.
#[test]
fn invalid_residual_signatures_are_counted_and_ignored() {
    let m = parse(
        "# { id: 'com.android.tools.r8.mapping', version: '2.2' }
some.Class -> b:
  int f -> a
  # { id:'com.android.tools.r8.residualsignature',signature:'()Ljava/lang/Object;' }
  int method1() -> a
  # { id:'com.android.tools.r8.residualsignature',signature:'I' }
  1:2:int method2(int):3:4 -> a
  # { id:'com.android.tools.r8.residualsignature',signature:'VOLAPYK' }
",
    );
    assert_eq!(m.info().invalid_residual, 3);
    check(
        &m,
        "int b.a()",
        "int some.Class.method1()",
        Kind::Deobfuscated,
    );
    check(
        &m,
        "int b.a(int)",
        "int some.Class.method2(int)",
        Kind::Deobfuscated,
    );
}

/// Synthesized (1.0), on a class and on a method: the name is the mapping's, flagged.
#[test]
fn synthesized_classes_and_methods_are_named_and_flagged() {
    let m = parse(
        "# {'id':'com.android.tools.r8.mapping','version':'1.0'}
com.example.Foo$$ExternalSyntheticLambda0 -> x.y.z:
# {'id':'com.android.tools.r8.synthesized'}
    void run() -> run
com.example.Foo -> x.y.a:
    void lambda$main$0() -> a
    # {'id':'com.android.tools.r8.synthesized'}
    void main() -> b
",
    );
    let r = m.deobfuscate("void x.y.z.run()").unwrap();
    assert_eq!(
        r.name,
        "void com.example.Foo$$ExternalSyntheticLambda0.run()"
    );
    assert!(r.synthesized);
    let r = m.deobfuscate("void x.y.a.a()").unwrap();
    assert_eq!(r.name, "void com.example.Foo.lambda$main$0()");
    assert!(r.synthesized);
    assert!(!m.deobfuscate("void x.y.a.b()").unwrap().synthesized);
    assert_eq!(m.info().metadata["com.android.tools.r8.synthesized"], 2);
}

/// Outline and outlineCallsite (2.0): the documentation's own example. Positions are lines,
/// which a method trace does not have: the outline is named as the mapping names it (and
/// flagged), its callers by their outermost frames.
#[test]
fn outlines_from_the_documentation_example() {
    let m = parse(
        "# { id: 'com.android.tools.r8.mapping', version: '2.0' }
outline.Class -> a:
  1:2:int outline() -> a
# { 'id':'com.android.tools.r8.outline' }
some.Class -> b:
  1:1:void foo.bar.Baz.qux():42:42 -> s
  4:4:int outlineCaller(int):98:98 -> s
  5:5:int outlineCaller(int):100:100 -> s
  27:27:int outlineCaller(int):0:0 -> s
# { 'id':'com.android.tools.r8.outlineCallsite', 'positions': { '1': 4, '2': 5 }, 'outline':'La;a()I'}
",
    );
    let r = m.deobfuscate("int a.a()").unwrap();
    assert_eq!(
        (r.name.as_str(), r.outline),
        ("int outline.Class.outline()", true)
    );
    let r = m.deobfuscate("int b.s(int)").unwrap();
    assert_eq!(
        (r.name.as_str(), r.outline),
        ("int some.Class.outlineCaller(int)", false)
    );
    // A method moved into the class keeps the class it came from.
    check(
        &m,
        "void b.s()",
        "void foo.bar.Baz.qux()",
        Kind::Deobfuscated,
    );
}

#[test]
fn outline_callsites_and_rewrite_frames_parse_and_change_no_name() {
    let m = parse(
        "# {\"id\":\"com.android.tools.r8.mapping\",\"version\":\"2.2\"}
some.Class -> a:
  4:4:void other.Class.inlinee():23:23 -> a
  4:4:void caller(other.Class):7 -> a
  # { id: 'com.android.tools.r8.rewriteFrame', conditions: ['throws(Ljava/lang/NullPointerException;)'], actions: ['removeInnerFrames(1)'] }
  27:27:int outlineCaller(int):0:0 -> b
  # {'id':'com.android.tools.r8.outlineCallsite','positions':{'1':4,'2':5},'outline':'La;a()I'}
  # {'id':'com.example.future.thing','x':1}
  # {'no':'id'}
  # pg_map_id: 1234567
",
    );
    check(
        &m,
        "void a.a(other.Class)",
        "void some.Class.caller(other.Class)",
        Kind::Deobfuscated,
    );
    check(
        &m,
        "int a.b(int)",
        "int some.Class.outlineCaller(int)",
        Kind::Deobfuscated,
    );
    let info = m.info();
    assert_eq!(info.metadata["com.android.tools.r8.rewriteFrame"], 1);
    assert_eq!(info.metadata["com.android.tools.r8.outlineCallsite"], 1);
    assert_eq!(info.unknown_ids["com.example.future.thing"], 1);
    assert_eq!(info.unknown_ids["(no id)"], 1);
}

#[test]
fn a_newer_version_than_known_is_read_and_reported() {
    let m = parse("# {'id':'com.android.tools.r8.mapping','version':'3.0'}\na -> b:\n");
    assert_eq!(m.info().newer_version.as_deref(), Some("3.0"));
    let m = parse("# {'id':'com.android.tools.r8.mapping','version':'2.2'}\na -> b:\n");
    assert_eq!(m.info().newer_version, None);
    assert_eq!(m.info().version.as_deref(), Some("2.2"));
}

/// Every bad line: an error naming the file and the line, never a panic.
#[test]
fn bad_lines_name_the_file_and_the_line() {
    let cases: &[(&str, usize, &str)] = &[
        ("a -> b\n", 1, "class line"),
        ("    void f() -> a\n", 1, "before any class line"),
        ("a -> b:\n    void f( -> a\n", 2, "member line"),
        ("a -> b:\n    void f() -> \n", 2, "member line"),
        ("a -> b:\n    void f():x -> a\n", 2, "`:line`"),
        ("a -> b:\n    1:void -> a\n", 2, "member line"),
        ("a -> b:\n    void f() -> a.b\n", 2, "not an obfuscated member name"),
        ("a -> b:\nc -> b:\n", 2, "already the name of a (line 1)"),
        ("a -> b:\n# {'id':'sourceFile'\n", 2, "metadata comment"),
        ("# {'id':'sourceFile','fileName':'A.java'}\n", 1, "right under its class"),
        (
            "# {'id':'com.android.tools.r8.mapping','version':'2.2'}\na -> b:\n# {'id':'com.android.tools.r8.residualsignature','signature':'()V'}\n",
            3,
            "under a member line",
        ),
        ("# {'id':'com.android.tools.r8.mapping','version':'two'}\n", 1, "MAJOR.MINOR"),
        (
            "# {'id':'com.android.tools.r8.mapping','version':'2.0'}\na -> b:\n    void f() -> a\n# {'id':'com.android.tools.r8.outlineCallsite'}\n",
            4,
            "positions",
        ),
    ];
    for (text, line, what) in cases {
        match Mapping::parse("bad.txt", text) {
            Err(e @ (MappingError::Syntax { .. } | MappingError::DuplicateClass { .. })) => {
                let msg = e.to_string();
                assert!(
                    msg.starts_with(&format!("bad.txt:{line}: ")),
                    "{text:?}: {msg}"
                );
                assert!(msg.contains(what), "{text:?}: {msg}");
            }
            other => panic!("{text:?}: {other:?}"),
        }
    }
}

#[test]
fn unreadable_and_binary_files_are_errors_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.txt");
    let e = Mapping::read(&missing).unwrap_err();
    assert!(
        e.to_string().starts_with(&missing.display().to_string()),
        "{e}"
    );
    let binary = dir.path().join("binary.txt");
    std::fs::write(&binary, b"a -> b:\n\xff\xfe\x00\n").unwrap();
    let e = Mapping::read(&binary).unwrap_err().to_string();
    assert!(e.contains("binary.txt:2: not UTF-8"), "{e}");
}

/// A mapping is read class by class: a bad member line of a class no name uses does not stop
/// `read`, it is an error (naming file and line) when a name of its class is looked up, and
/// `check` finds it; a version declared between classes applies to the classes after it.
#[test]
fn member_lines_are_read_when_their_class_is_first_used() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lazy.txt");
    std::fs::write(
        &path,
        "com.example.Good -> a:
    void run() -> a
    # {'id':'com.android.tools.r8.residualsignature','signature':'(I)V'}
# {'id':'com.android.tools.r8.mapping','version':'2.2'}
com.example.Bad -> b:
    void run() -> a
    void cut(int -> b
com.example.Later -> c:
    void run() -> a
    # {'id':'com.android.tools.r8.residualsignature','signature':'(I)V'}
",
    )
    .unwrap();
    let m = Mapping::read(&path).unwrap();
    // Before the version line, a residual signature is a comment: `()V` is computed.
    check(
        &m,
        "void a.a()",
        "void com.example.Good.run()",
        Kind::Deobfuscated,
    );
    // After it, the residual signature counts.
    check(
        &m,
        "void c.a(int)",
        "void com.example.Later.run()",
        Kind::Deobfuscated,
    );
    let e = m.deobfuscate("void b.a()").unwrap_err().to_string();
    assert!(e.ends_with("lazy.txt:7: expected a member line `[a:b:]type name(args)[:c[:d]] -> obfuscated` or `type name -> obfuscated`, found `void cut(int -> b`"), "{e}");
    let e = m.check().unwrap_err().to_string();
    assert!(e.contains("lazy.txt:7: "), "{e}");
    // A class line is checked when the file is read.
    std::fs::write(&path, "a -> b:\n    void f() -> a\nbroken class line\n").unwrap();
    let e = Mapping::read(&path).unwrap_err().to_string();
    assert!(e.contains("lazy.txt:3: expected a class line"), "{e}");
}

/// A class's member lines are read back from the file when the class is first used: a file
/// rewritten in place since it was read (same size, other names) is an error, never the other
/// file's names; a file replaced by a rename is still the one that was read.
#[cfg(unix)]
#[test]
fn a_mapping_rewritten_while_in_use_is_an_error_not_other_names() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("live.txt");
    let first = "com.example.One -> a:\n    void run() -> a\n";
    let other = "com.example.Two -> a:\n    void go()  -> a\n";
    assert_eq!(first.len(), other.len());
    std::fs::write(&path, first).unwrap();
    let m = Mapping::read(&path).unwrap();
    // Past the file system's timestamp granularity (a jiffy), so that the rewrite shows.
    std::thread::sleep(std::time::Duration::from_millis(50));
    std::fs::write(&path, other).unwrap();
    let e = m.deobfuscate("void a.a()").unwrap_err().to_string();
    assert!(
        e.contains("live.txt") && e.contains("the file changed while it was in use"),
        "{e}"
    );

    std::fs::write(&path, first).unwrap();
    let m = Mapping::read(&path).unwrap();
    let renamed = dir.path().join("new.txt");
    std::fs::write(&renamed, other).unwrap();
    std::fs::rename(&renamed, &path).unwrap();
    check(
        &m,
        "void a.a()",
        "void com.example.One.run()",
        Kind::Deobfuscated,
    );
}
