//! The Java twins on OpenJDK (tests/compiler-corpus/java/Oracle.java).
use std::path::Path;
use std::process::Command;

use hubble_art_compile::heap::ObjectSpec;
use hubble_art_compile::Arg;
use hubble_testkit::{stdout_of, stdout_of_fed};

fn classes(dir: &Path) -> std::path::PathBuf {
    let out = dir.join("classes");
    if !out.join("Oracle.class").exists() {
        let java = super::corpus_dir().join("java");
        let mut srcs: Vec<_> = std::fs::read_dir(&java)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "java"))
            .collect();
        srcs.sort();
        let st = Command::new("javac")
            .arg("-d")
            .arg(&out)
            .args(&srcs)
            .status()
            .expect("javac (default-jdk-headless)");
        assert!(st.success(), "javac failed");
    }
    out
}

/// `java Oracle` with the twins compiled.
fn oracle(dir: &Path) -> Command {
    let mut java = Command::new("java");
    java.arg("-cp").arg(classes(dir)).arg("Oracle");
    java
}

/// (descriptor, shorty) of every public static method of the twins.
pub fn list(dir: &Path, class_names: &[&str]) -> Vec<(String, String)> {
    stdout_of(oracle(dir).arg("list").args(class_names))
        .lines()
        .map(|l| {
            let (d, s) = l.split_once(' ').unwrap();
            (d.to_string(), s.to_string())
        })
        .collect()
}

/// "LArith;->sumLoop(II)I" → ("Arith", "sumLoop").
pub fn split(desc: &str) -> (String, String) {
    let (class, rest) = desc.split_once(";->").unwrap();
    let name = rest.split('(').next().unwrap();
    (
        class.trim_start_matches('L').replace('/', "."),
        name.to_string(),
    )
}

/// The twin's results for each input, one JVM for all of them.
pub fn run(dir: &Path, class: &str, method: &str, inputs: &[Vec<Arg>]) -> Vec<String> {
    let mut text = String::new();
    for args in inputs {
        text.push_str(&format!("{class} {method}"));
        for a in args {
            text.push_str(&format!(" {:x}", a.bits));
        }
        text.push('\n');
    }
    answers(dir, text, inputs.len())
}

/// An instance method's results on OpenJDK, one JVM for all inputs: per input, the result
/// (as `run` gives it) and the receiver's fields after the call, (name, canonical bits) sorted
/// by name; a reference field reads 0 when null (u64::MAX when not).
pub fn run_on(
    dir: &Path,
    class: &str,
    method: &str,
    inputs: &[(Vec<Arg>, ObjectSpec)],
) -> Vec<(String, Vec<(String, u64)>)> {
    let mut text = String::new();
    for (args, receiver) in inputs {
        text.push_str(&format!("{class} {method}"));
        for a in args {
            text.push_str(&format!(" {:x}", a.bits));
        }
        text.push_str(&format!(
            " @ {}",
            receiver.class.trim_start_matches('L').trim_end_matches(';')
        ));
        for (name, bits) in &receiver.fields {
            text.push_str(&format!(" {name}={bits:x}"));
        }
        text.push('\n');
    }
    answers(dir, text, inputs.len())
        .into_iter()
        .map(|line| {
            let (result, fields) = line
                .split_once(" |")
                .expect("an answer with the receiver's fields");
            let fields = fields
                .split_whitespace()
                .map(|kv| {
                    let (k, v) = kv.split_once('=').unwrap();
                    let bits = if v == "ref" {
                        u64::MAX
                    } else {
                        u64::from_str_radix(v, 16).unwrap()
                    };
                    (k.to_string(), bits)
                })
                .collect();
            (result.to_string(), fields)
        })
        .collect()
}

fn answers(dir: &Path, text: String, n: usize) -> Vec<String> {
    let out = stdout_of_fed(oracle(dir).arg("run"), &text);
    let lines: Vec<String> = out.lines().map(String::from).collect();
    assert_eq!(
        lines.len(),
        n,
        "oracle answered {} of {n} inputs",
        lines.len(),
    );
    lines
}
