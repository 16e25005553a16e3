//! hubble-runtime: under construction (see docs/architecture.md).
