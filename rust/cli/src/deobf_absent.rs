//! `hubble` built without the `deobf` feature (the AOSP modules: Android.bp): `--mapping`
//! exists, so scripts get the same usage everywhere, and says why it cannot run.

use std::collections::BTreeMap;

use anyhow::{bail, Result};
use hubble_format::Trace;

pub fn init(specs: &[String]) -> Result<()> {
    if !specs.is_empty() {
        bail!(
            "--mapping: this hubble was built without deobfuscation (the `deobf` feature: AOSP's \
             build leaves it off); use a hubble built with cargo (docs/deobfuscation.md)"
        );
    }
    Ok(())
}

/// Never: without the feature there is no mapping to be bad. (Used by the Parquet commands,
/// which a build may leave out too: AOSP's leaves out both.)
#[allow(dead_code)]
pub fn is_bad_mapping(_e: &anyhow::Error) -> bool {
    false
}

#[allow(dead_code)]
pub fn ready() -> Result<()> {
    Ok(())
}

pub fn apply(_trace: &mut Trace, _version: Option<&str>, _name: &str) -> Result<()> {
    Ok(())
}

pub fn apply_symbols(
    _symbols: &mut BTreeMap<u64, String>,
    _version: Option<&str>,
    _name: &str,
) -> Result<()> {
    Ok(())
}

pub fn messages() -> Vec<String> {
    Vec::new()
}
