//! hubble-hotpath-emu: under construction (see docs/architecture.md).
