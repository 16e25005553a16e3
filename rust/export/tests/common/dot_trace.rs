//! A `.trace` file read back from its layout (dmtracedump's format, `docs/tools.md`), never
//! through the writer's code: the key's text up to `*end`, its thread and method sections, the
//! binary part's start time and records.

// Each test file reads what it checks.
#![allow(dead_code)]

use std::collections::HashMap;

/// A method as the key names it: class, method, signature.
pub type Method = (String, String, String);

/// What a `.trace` holds.
pub struct DotTrace<'a> {
    /// The key, `*version` to `*end` included.
    pub key: &'a str,
    /// `*threads`: id and name, in the key's order.
    pub threads: Vec<(u16, String)>,
    /// The binary header's start time (µs).
    pub start_us: u64,
    /// Every record in file order: thread id, action (0 enter, 1 exit), method, µs.
    pub records: Vec<(u16, u32, Method, u32)>,
}

/// Reads `out`, a whole `.trace` file; panics on anything malformed (a test's failure).
pub fn read(out: &[u8]) -> DotTrace<'_> {
    let end = out.windows(5).position(|w| w == b"*end\n").unwrap() + 5;
    let key = std::str::from_utf8(&out[..end]).unwrap();
    let section = |name: &str| -> Vec<&str> {
        let from = key.find(&format!("*{name}\n")).unwrap() + name.len() + 2;
        key[from..]
            .lines()
            .take_while(|l| !l.starts_with('*'))
            .collect()
    };
    let threads = section("threads")
        .iter()
        .map(|l| {
            let (id, name) = l.split_once('\t').unwrap();
            (id.parse().unwrap(), name.to_owned())
        })
        .collect();
    let methods: HashMap<u32, Method> = section("methods")
        .iter()
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            let id = u32::from_str_radix(f[0].trim_start_matches("0x"), 16).unwrap() >> 2;
            (id, (f[1].to_owned(), f[2].to_owned(), f[3].to_owned()))
        })
        .collect();
    let bin = &out[end..];
    let start_us = u64::from_le_bytes(bin[8..16].try_into().unwrap());
    let records = bin[32..]
        .chunks_exact(10)
        .map(|r| {
            let tid = u16::from_le_bytes([r[0], r[1]]);
            let value = u32::from_le_bytes(r[2..6].try_into().unwrap());
            let us = u32::from_le_bytes(r[6..10].try_into().unwrap());
            (tid, value & 3, methods[&(value >> 2)].clone(), us)
        })
        .collect();
    DotTrace {
        key,
        threads,
        start_us,
        records,
    }
}
