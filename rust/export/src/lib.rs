//! hubble-export: under construction (see docs/architecture.md).
