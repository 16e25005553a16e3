//! Shared by tests and proving grounds, never by the product: the one random generator every
//! test stream, fuzzed scenario and synthetic workload draws from, a list comparison's failure
//! message, a command's checked output, a cold start's mix of method pointers, ([`synth`],
//! feature `traces`) synthetic trace files and ([`runtime`], feature `runtime`) the runtime's
//! doubles.
#![deny(unsafe_op_in_unsafe_fn)]

#[cfg(all(feature = "runtime", not(loom)))]
pub mod runtime;
#[cfg(feature = "traces")]
pub mod synth;

/// xorshift64* (Vigna): 64 bits of state, no dependency, and the same sequence for the same
/// seed on every machine, so a failing run reproduces from the seed it prints.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed` (0, which xorshift never leaves, is taken as 1).
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    /// The next 64 random bits. Named as every copy it replaced named it; an `Iterator` would
    /// make each of the callers unwrap an `Option` that is never `None`.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform-enough below `n` (the modulo's bias is below 2^-40 for the bounds tests use);
    /// 0 when `n` is 0.
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }

    /// True with probability `num / den`.
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }
}

/// Runs `cmd` to its end and returns what it printed on stdout. It must succeed: otherwise the
/// test fails, naming the command and quoting its stderr.
pub fn stdout_of(cmd: &mut std::process::Command) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{cmd:?} could not run: {e}"));
    succeeded(cmd, out, "")
}

/// [`stdout_of`] for a command that reads `input` (a script) on its stdin; a failure quotes the
/// input too.
pub fn stdout_of_fed(cmd: &mut std::process::Command, input: &str) -> String {
    use std::io::Write as _;
    use std::process::Stdio;
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{cmd:?} could not run: {e}"));
    let mut stdin = child.stdin.take().expect("stdin piped");
    // Written beside the read: a child that answers as it reads would otherwise block on a full
    // stdout pipe while this side blocks on its full stdin.
    let (out, written) = std::thread::scope(|scope| {
        let writer = scope.spawn(move || stdin.write_all(input.as_bytes()));
        let out = child.wait_with_output().expect("the child's output");
        (out, writer.join().expect("the writer"))
    });
    // The child's failure first: it is why its input could not all be written.
    let stdout = succeeded(cmd, out, &format!("on:\n{input}"));
    written.unwrap_or_else(|e| panic!("{cmd:?} did not read all its input: {e}"));
    stdout
}

fn succeeded(cmd: &std::process::Command, out: std::process::Output, context: &str) -> String {
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}): {}{context}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 on stdout")
}

/// The names of the files in `dir` for which `keep` holds, sorted: what a test that must leave no
/// partial output (or must leave some) looks at.
pub fn file_names(dir: &std::path::Path, keep: impl Fn(&str) -> bool) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| {
            e.expect("a directory entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|name| keep(name))
        .collect();
    names.sort();
    names
}

/// `n` method pointers 64 bytes apart, nine in ten below 4 GiB (the boot image, low arenas: one
/// slot an entry) and every tenth above (two slots): the mix of a cold start's calls.
pub fn method_mix(n: u64) -> Vec<u64> {
    (0..n)
        .map(|i| {
            if i % 10 == 0 {
                0x7f_0000_0000 + i * 64
            } else {
                0x7000_0000 + i * 64
            }
        })
        .collect()
}

/// Where two lists first differ, for a failure message of a useful size (`None`: equal).
pub fn first_difference<T: PartialEq + core::fmt::Debug>(got: &[T], want: &[T]) -> Option<String> {
    if got == want {
        return None;
    }
    let i = got
        .iter()
        .zip(want)
        .position(|(g, w)| g != w)
        .unwrap_or(got.len().min(want.len()));
    Some(format!(
        "{} items, {} wanted; first difference at {i}: got {:?}, want {:?}",
        got.len(),
        want.len(),
        got.get(i),
        want.get(i)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sequence is xorshift64*'s: its first outputs for seed 1 (worked out once from the
    /// recurrence with Python's integers); a zero seed does not stick at zero.
    #[test]
    fn the_sequence_is_xorshift64_star() {
        let mut r = Rng::new(1);
        assert_eq!(
            [r.next(), r.next(), r.next()],
            [
                0x47e4_ce4b_896c_dd1d,
                0xabcf_a6a8_e079_651d,
                0xb9d1_0d8f_eb73_1f57
            ]
        );
        let mut z = Rng::new(0);
        assert_ne!(z.next(), 0);
        assert_eq!(Rng::new(7).below(0), 0);
        assert!((0..1000).all(|_| z.below(10) < 10));
    }
}
