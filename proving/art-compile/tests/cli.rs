//! `art-compile-run` (scripts/art-compile-run) on a dex the corpus does not contain, and on bad
//! input: each gets a clear message naming what is wrong and exit status 2, never a crash.
mod common;

use std::path::Path;
use std::process::Command;

use common::harness_or_skip;

const SMALI: &str = r#".class public LUser;
.super Ljava/lang/Object;
# 3 * a - b, written for this test only
.method public static f(II)I
    .registers 3
    mul-int/lit8 v0, p0, 3
    sub-int/2addr v0, p1
    return v0
.end method

.field public n:I

# An instance method: n += a (a new User's n is 0), then this.twice(n), a virtual call.
.method public bump(I)I
    .registers 4
    iget v0, p0, LUser;->n:I
    add-int/2addr v0, p1
    iput v0, p0, LUser;->n:I
    invoke-virtual {p0, v0}, LUser;->twice(I)I
    move-result v1
    return v1
.end method

.method public twice(I)I
    .registers 3
    add-int v0, p1, p1
    return v0
.end method
"#;

fn run(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_art-compile-run"))
        .args(args)
        .output()
        .expect("art-compile-run");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

fn user_dex(dir: &Path) -> String {
    let src = dir.join("User.smali");
    std::fs::write(&src, SMALI).unwrap();
    let dex = dir.join("user.dex");
    let st = Command::new("smali")
        .arg("a")
        .arg("-o")
        .arg(&dex)
        .arg(&src)
        .status()
        .expect("smali");
    assert!(st.success());
    dex.display().to_string()
}

#[test]
#[ignore = "needs scripts/art-build --compiler: run by tests/stages/32-art-compiler.sh"]
fn users_dex_runs_and_bad_input_is_refused_clearly() {
    let Some(_) = harness_or_skip() else { return };
    let dir = std::env::temp_dir().join(format!("hubble-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let dex = user_dex(&dir);

    // 3 * 7 - 4 = 17 on every ISA (arm64, thumb2, x86_64, x86), with the trace points marked
    // and the ring decoded.
    let (code, text) = run(&["--dex", &dex, "--method", "LUser;->f(II)I", "--args", "7,4"]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(text.matches("result: 17").count(), 4, "{text}");
    assert!(
        text.contains("◀ TraceEntry") && text.contains("◀ TraceExit"),
        "{text}"
    );
    assert_eq!(text.matches("trace (2 records)").count(), 4, "{text}");

    // An instance method, on a new User: 2 * (0 + 21) = 42 on every ISA (x86_64 natively), its
    // field served and its virtual call dispatched and traced (4 records: two entries, two
    // exits).
    let (code, text) = run(&[
        "--dex",
        &dex,
        "--method",
        "LUser;->bump(I)I",
        "--args",
        "21",
    ]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("this: a new LUser;"), "{text}");
    assert_eq!(text.matches("result: 42").count(), 4, "{text}");
    assert_eq!(text.matches("trace (4 records)").count(), 4, "{text}");

    let cases: &[(&[&str], &str)] = &[
        (
            &["--method", "LUser;->g(II)I", "--args", "1,2"],
            "no method LUser;->g(II)I",
        ),
        (
            &["--method", "LUser;->f(II)I", "--args", "1"],
            "takes 2 argument(s)",
        ),
        (
            &["--method", "LUser;->f(II)I", "--args", "1,x"],
            "'x' is not a valid I argument",
        ),
        (
            &["--method", "LUser;->f(II)I", "--isa", "mips"],
            "unknown ISA 'mips'",
        ),
    ];
    for (args, want) in cases {
        let mut all = vec!["--dex", dex.as_str()];
        all.extend_from_slice(args);
        let (code, text) = run(&all);
        assert_eq!(code, 2, "{args:?}: {text}");
        assert!(text.contains(want), "{args:?}: wanted '{want}' in: {text}");
    }

    // A truncated dex and a missing file.
    let bytes = std::fs::read(&dex).unwrap();
    let bad = dir.join("bad.dex");
    std::fs::write(&bad, &bytes[..bytes.len() / 2]).unwrap();
    let bad = bad.display().to_string();
    let (code, text) = run(&["--dex", &bad, "--method", "LUser;->f(II)I", "--args", "1,2"]);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("not a dex file ART can open"), "{text}");
    let missing = dir.join("missing.dex").display().to_string();
    let (code, text) = run(&["--dex", &missing, "--method", "LUser;->f(II)I"]);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("no such file"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A user's native method: the JNI stub runs around the user's C function (found by its JNI
/// short name) on every ISA; without the C file, or with one clang cannot turn into
/// self-contained code, a clear message and exit 2.
#[test]
#[ignore = "needs scripts/art-build --compiler: run by tests/stages/32-art-compiler.sh"]
fn users_native_method_runs_through_its_jni_stub() {
    let Some(_) = harness_or_skip() else { return };
    let dir = std::env::temp_dir().join(format!("hubble-cli-jni-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("Hello.smali");
    std::fs::write(
        &src,
        ".class public Lcom/example/Hello;\n.super Ljava/lang/Object;\n\
         .method public static native sum3(IJI)J\n.end method\n",
    )
    .unwrap();
    let dex = dir.join("hello.dex");
    assert!(Command::new("smali")
        .arg("a")
        .arg("-o")
        .arg(&dex)
        .arg(&src)
        .status()
        .unwrap()
        .success());
    let c = dir.join("hello.c");
    std::fs::write(
        &c,
        "#include <stdint.h>\nint64_t Java_com_example_Hello_sum3(void* e, void* c, int32_t a, \
         int64_t b, int32_t d) { return a + b * d; }\n",
    )
    .unwrap();
    let dex = dex.display().to_string();
    let method = "Lcom/example/Hello;->sum3(IJI)J";
    let native = c.display().to_string();
    // 5 + 1000000007 * 3 on every ISA (arm64, thumb2, x86_64, x86), through each stub's entry
    // and exit.
    let (code, text) = run(&[
        "--dex",
        &dex,
        "--method",
        method,
        "--args",
        "5,1000000007,3",
        "--native",
        &native,
    ]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(text.matches("result: 3000000026").count(), 4, "{text}");
    assert_eq!(text.matches("JNI stub").count(), 4, "{text}");
    assert!(!text.contains("CHECK FAILED"), "{text}");

    let (code, text) = run(&["--dex", &dex, "--method", method, "--args", "1,2,3"]);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("is native: give --native"), "{text}");

    // A 64-bit division is a runtime call on 32-bit arm (__aeabi_ldivmod): not self-contained.
    let bad = dir.join("bad.c");
    std::fs::write(
        &bad,
        "#include <stdint.h>\nint64_t Java_com_example_Hello_sum3(void* e, void* c, int32_t a, \
         int64_t b, int32_t d) { return b / d + a; }\n",
    )
    .unwrap();
    let bad = bad.display().to_string();
    let (code, text) = run(&[
        "--dex", &dex, "--method", method, "--isa", "thumb2", "--args", "1,2,3", "--native", &bad,
    ]);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("relocates .text"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}
