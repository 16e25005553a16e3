//! Host replay of the interpreter's C++ trace point: see `tests/replay.rs`.
//!
//! The C++ driver (`cpp/replay.cc`) includes `art-patches/files/runtime/hubble/trace_point.h`
//! unchanged and is compiled by the test with the host C++ compiler (`$CXX`, default `c++`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// Repository root (two levels above this crate).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `-DTHREAD_HUBBLE_*_OFFSET=` and ART's `-DTHREAD_TID_OFFSET=` for one pointer size (8: arm64,
/// x86_64; 4: x86).
pub fn offset_defines(pointer_size: &str) -> Vec<String> {
    let offsets = std::fs::read_to_string(repo_root().join("art-patches/thread-offsets.txt"))
        .expect("art-patches/thread-offsets.txt");
    let mut defs = Vec::new();
    for line in offsets.lines().filter(|l| !l.starts_with('#')) {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() == 3 && f[1] == pointer_size {
            let name = match f[0].strip_prefix("hubble_") {
                Some(field) => format!("HUBBLE_{}", field.to_uppercase()),
                None => f[0].to_uppercase(),
            };
            defs.push(format!("-DTHREAD_{name}_OFFSET={}", f[2]));
        }
    }
    assert_eq!(
        defs.len(),
        6,
        "six {pointer_size}-byte offsets in thread-offsets.txt"
    );
    defs
}

/// An ISA whose nterp macro file (`art-patches/files/runtime/hubble/nterp_<isa>.S`) a harness runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NterpIsa {
    /// Under qemu-aarch64, a static binary.
    Arm64,
    /// Natively (`%gs` set to the fake Thread).
    X86_64,
    /// A static i386 binary (`%fs`), 32-bit mode.
    X86,
}

impl NterpIsa {
    /// Compiler, its flags, the harness assembler file, the pointer size of the offsets.
    fn build(
        self,
    ) -> (
        &'static str,
        &'static [&'static str],
        &'static str,
        &'static str,
    ) {
        match self {
            NterpIsa::Arm64 => (
                "aarch64-linux-gnu-gcc",
                &["-static"],
                "nterp_arm64_harness.S",
                "8",
            ),
            NterpIsa::X86_64 => ("gcc", &["-DHUBBLE_X86_64"], "nterp_x86_64_harness.S", "8"),
            NterpIsa::X86 => (
                "i686-linux-gnu-gcc",
                &["-static", "-no-pie", "-DHUBBLE_X86"],
                "nterp_x86_harness.S",
                "4",
            ),
        }
    }
}

/// The command that runs `cpp/<driver>` built with `isa`'s harness around nterp's macro file
/// (`cpp/nterp_<isa>_harness.S`, which includes the ART file unchanged) and the Thread offsets
/// of its pointer size (`offset_defines`), into `out_dir`; built once per process and driver.
/// A missing compiler or a failed build fails the calling test.
pub fn nterp_harness(out_dir: &Path, isa: NterpIsa, driver: &str) -> Vec<String> {
    /// (ISA, driver) → the command, for every harness built so far.
    type Built = Vec<((NterpIsa, String), Vec<String>)>;
    static BUILT: Mutex<Built> = Mutex::new(Vec::new());
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    let key = (isa, driver.to_string());
    if let Some((_, cmd)) = built.iter().find(|(k, _)| *k == key) {
        return cmd.clone();
    }
    let (compiler, extra, asm, pointer_size) = isa.build();
    let cpp = Path::new(env!("CARGO_MANIFEST_DIR")).join("cpp");
    let exe = out_dir.join(format!("{}-{isa:?}", driver.trim_end_matches(".c")));
    let ok = Command::new(compiler)
        .args(["-O2", "-Wall", "-Werror"])
        .args(extra)
        .args(offset_defines(pointer_size))
        .arg("-I")
        .arg(repo_root().join("art-patches/files"))
        .arg(cpp.join(driver))
        .arg(cpp.join(asm))
        .arg("-o")
        .arg(&exe)
        .status()
        .unwrap_or_else(|e| panic!("{compiler}: {e}"));
    assert!(
        ok.success(),
        "building {driver} with {asm} by {compiler} failed"
    );
    let exe = exe.to_str().unwrap().to_string();
    let cmd = match isa {
        NterpIsa::Arm64 => vec!["qemu-aarch64".to_string(), exe],
        NterpIsa::X86_64 | NterpIsa::X86 => vec![exe],
    };
    built.push((key, cmd.clone()));
    cmd
}

/// Compiles the driver once per test binary run into `OUT`; returns its path.
pub fn build_driver(out_dir: &Path, extra_flags: &[&str]) -> PathBuf {
    build_cpp(out_dir, "replay.cc", "hubble-interp-replay", extra_flags)
}

/// Compiles `cpp/<source>` (which includes the ART-free headers of
/// `art-patches/files/runtime/hubble/`, unchanged unless `extra_flags` put a mutant first on the
/// include path) into `<out_dir>/<name>`; returns its path.
pub fn build_cpp(out_dir: &Path, source: &str, name: &str, extra_flags: &[&str]) -> PathBuf {
    let root = repo_root();
    let exe = out_dir.join(name);
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".to_string());
    let status = Command::new(&cxx)
        .args(["-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror"])
        .args(extra_flags)
        .arg("-I")
        .arg(root.join("art-patches/files"))
        .arg(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("cpp")
                .join(source),
        )
        .arg("-o")
        .arg(&exe)
        .status()
        .unwrap_or_else(|e| panic!("cannot run {cxx}: {e}"));
    assert!(status.success(), "compiling cpp/{source} with {cxx} failed");
    exe
}

/// Compiles `cpp/<source>`, a model of the ART functions that call the series' hooks, into
/// `exe`, with `defines`. The include path is ART's as the hooks see it: `shadow` first (a
/// mutant's directories), then the stand-ins for ART's headers (`cpp/art-model`), then the
/// series' files ("runtime/hubble/..." from the model, "hubble/..." inside the series' headers).
/// `Err`: what the compiler said, for a mutant its own `static_assert`s refuse.
pub fn build_model(
    source: &str,
    exe: &Path,
    defines: &[String],
    shadow: &[PathBuf],
) -> Result<(), String> {
    let root = repo_root();
    let cpp = Path::new(env!("CARGO_MANIFEST_DIR")).join("cpp");
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".to_string());
    let out = Command::new(&cxx)
        .args(["-std=c++17", "-O1", "-Wall", "-Wextra", "-Werror"])
        .args(defines)
        .args(shadow.iter().map(|d| format!("-I{}", d.display())))
        .arg("-I")
        .arg(cpp.join("art-model"))
        .arg("-I")
        .arg(root.join("art-patches/files"))
        .arg("-I")
        .arg(root.join("art-patches/files/runtime"))
        .arg(cpp.join(source))
        .arg("-o")
        .arg(exe)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cxx}: {e}"));
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// A mutant of one of the ART-free headers (`art-patches/files/runtime/hubble/<file>`): the
/// header with the first `from` replaced by `to`, written as `<base>/<name>/runtime/hubble/<file>`.
/// Returns `<base>/<name>`: first on the include path, it shadows the real header, so a test can
/// show that its checks fail on a broken trace point.
pub fn mutant_header(base: &Path, name: &str, file: &str, from: &str, to: &str) -> PathBuf {
    let header = std::fs::read_to_string(
        repo_root()
            .join("art-patches/files/runtime/hubble")
            .join(file),
    )
    .unwrap_or_else(|e| panic!("reading {file}: {e}"));
    assert!(
        header.contains(from),
        "mutant {name}: pattern not in {file}"
    );
    let dir = base.join(name);
    std::fs::create_dir_all(dir.join("runtime/hubble")).unwrap();
    // Its siblings too, unchanged: a header's own includes ("pool_take.h") resolve next to it.
    let real = repo_root().join("art-patches/files/runtime/hubble");
    for entry in std::fs::read_dir(&real).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(
            entry.path(),
            dir.join("runtime/hubble").join(entry.file_name()),
        )
        .unwrap();
    }
    std::fs::write(
        dir.join("runtime/hubble").join(file),
        header.replacen(from, to, 1),
    )
    .unwrap();
    dir
}

/// What the driver printed.
#[derive(Debug, PartialEq, Eq)]
pub struct Replay {
    /// Byte offset of the cursor from the ring's first slot, or `None` when it is 0 (off).
    pub cursor: Option<u64>,
    /// 0, 1, or the published end position as a byte offset from the ring's first slot.
    pub stop: u64,
    /// Every slot of the ring.
    pub slots: Vec<u64>,
}

/// Runs `cmd` (a driver or harness, possibly behind `qemu-aarch64`) with `script` on its stdin;
/// returns its stdout. A failure names the command, its status and its stderr.
pub fn run_script(cmd: &[String], script: &str) -> String {
    hubble_testkit::stdout_of_fed(Command::new(&cmd[0]).args(&cmd[1..]), script)
}

/// Runs the driver on a script.
pub fn run(exe: &Path, script: &str) -> Replay {
    let text = run_script(&[exe.to_str().unwrap().to_string()], script);
    let mut lines = text.lines();
    let cursor: i64 = lines
        .next()
        .unwrap()
        .strip_prefix("cursor ")
        .unwrap()
        .parse()
        .unwrap();
    let stop: u64 = lines
        .next()
        .unwrap()
        .strip_prefix("stop ")
        .unwrap()
        .parse()
        .unwrap();
    let slots = lines.map(|l| u64::from_str_radix(l, 16).unwrap()).collect();
    Replay {
        cursor: if cursor < 0 {
            None
        } else {
            Some(cursor as u64)
        },
        stop,
        slots,
    }
}

/// Checks that every line of `cpp/<model>` marked `// HOOK <patch>` is, whitespace aside, a line
/// that patch adds to ART (a call the patch wraps over two lines counts as one string), so a
/// model cannot drift from the series. Returns how many marked lines it checked.
pub fn check_marked_hooks(model: &str) -> usize {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("cpp")
            .join(model),
    )
    .unwrap_or_else(|e| panic!("reading cpp/{model}: {e}"));
    let squash = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
    let mut added: std::collections::HashMap<String, String> = std::collections::HashMap::new();
    for entry in std::fs::read_dir(repo_root().join("art-patches/patches")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let patch = std::fs::read_to_string(&path).unwrap();
        let lines: String = patch
            .lines()
            .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
            .map(|l| squash(&l[1..]))
            .collect();
        added.insert(name[..4].to_string(), lines);
    }
    let mut hooks = 0;
    for line in text.lines() {
        let Some((code, marker)) = line.split_once("// HOOK ") else {
            continue;
        };
        let patch = marker.trim();
        if patch.len() != 4 || !patch.bytes().all(|b| b.is_ascii_digit()) {
            continue; // prose about the marker, not a marked line
        }
        let lines = added
            .get(patch)
            .unwrap_or_else(|| panic!("HOOK {patch}: no such patch"));
        assert!(
            lines.contains(&squash(code)),
            "cpp/{model} calls `{}` but patch {patch} adds no such line",
            code.trim()
        );
        hooks += 1;
    }
    hooks
}
