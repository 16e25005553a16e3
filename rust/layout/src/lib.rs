//! The layouts ART's Hubble headers define, as bindgen reads them (`build.rs` on `layout.hpp`):
//! from `pool_layout.h` the pool's header and block header words in bytes (`HUBBLE_POOL_*`,
//! `HUBBLE_BLOCK_*`) and the sealed cursor, the owned state and the tries; from `trace_point.h`
//! the per-thread block's words (`BlockWord`), the slot markers (`kMark*`), the task kinds
//! (`TaskKind`) and `kIdentityMask`.
//!
//! Soong builds this crate from the generated file alone (Android.bp's `rust_bindgen`
//! `libhubble_layout`, same wrapper, same flags), so nothing but that file belongs here; the
//! names the rest of the code uses are `hubble_format::slot`'s and `hubble_format::pool`'s,
//! defined from these.
#![no_std]
#![allow(non_snake_case, non_upper_case_globals)]

include!(concat!(env!("OUT_DIR"), "/layout.rs"));
