//! ProGuard / R8 deobfuscation of the method names in Hubble traces.
//!
//! ART names a traced method as `ArtMethod::PrettyMethod` prints it, e.g.
//! `void com.example.a.b(com.example.c, int)`. In an app shrunk by ProGuard or R8 those names
//! are the *residual* (obfuscated) ones; the build's `mapping.txt` maps them back. This crate
//! reads a mapping file ([`Mapping::parse`], [`Mapping::read`]) and rewrites one name
//! ([`Mapping::deobfuscate`]) or a trace's whole symbol table ([`Mapping::deobfuscate_symbols`]).
//!
//! What a method trace allows, and so what this crate decides (docs/deobfuscation.md):
//! * a traced name carries its class, its name and its full residual signature but no line
//!   number, so an obfuscated method is found by class, name *and* signature: overloads that
//!   ProGuard or R8 renamed to one name are told apart by their parameter (and return) types,
//!   each mapped back through the class mapping (or R8's `residualsignature` when the file
//!   has one);
//! * line ranges cannot be used: a residual method into which R8 inlined others is named by
//!   its outermost original method (the last frame of each inline group), the method the
//!   runtime actually entered;
//! * when more than one original method fits, every candidate is printed, `A | B` (the form
//!   the runtime itself uses for names it cannot tell apart); when none fits, the residual
//!   method name is kept (its class and types are still mapped) and the case is counted in the
//!   [`Report`], never replaced by a guess.
//!
//! Reading is cheap where traces need it to be: [`Mapping::read`] finds and checks the class
//! lines; a class's member lines are parsed the first time a name of that class is looked up
//! (a lookup can therefore report a bad line), and [`Mapping::check`] parses them all.
#![deny(unsafe_op_in_unsafe_fn)]

mod error;
mod hash;
mod json;
mod lookup;
mod model;
mod parse;
mod pretty;

pub use error::MappingError;
pub use hash::{Fx, FxBuild};
pub use lookup::{looks_obfuscated, Kind, Report, Resolution};
pub use model::{Mapping, ParseInfo, KNOWN_VERSION};
