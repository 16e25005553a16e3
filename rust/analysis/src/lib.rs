//! hubble-analysis: under construction (see docs/architecture.md).
