//! `hubble` built without the `parquet` feature (the AOSP modules: Android.bp): the Parquet
//! options exist, so scripts get the same usage everywhere, and say why they cannot run.
use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use hubble_analysis::signatures::Signature;
use hubble_analysis::summary;

const WHY: &str = "this hubble was built without Parquet support (the `parquet` feature: AOSP's \
                   build leaves it off); use a hubble built with cargo (docs/fleet.md)";

pub fn export(_files: &[PathBuf], _out: &Path, _meta: &[String]) -> Result<()> {
    bail!(WHY)
}

pub fn summaries(
    _files: &[PathBuf],
    _out: &Path,
    _signatures: &[Signature],
    _options: summary::Options,
    _meta: &[String],
) -> Result<()> {
    bail!(WHY)
}
