//! What can be wrong with a mapping file: every error names the file, and a syntax error the
//! line, so that a bad mapping is fixed instead of silently producing wrong names.

use std::path::PathBuf;

/// A mapping file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum MappingError {
    /// The file cannot be read.
    #[error("{path}: {source}")]
    Io {
        /// The mapping file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A line that is not a class line, a member line or a comment, or metadata that is
    /// malformed or in a place where it describes nothing.
    #[error("{file}:{line}: {what}")]
    Syntax {
        /// The file's name as given.
        file: String,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        what: String,
    },
    /// Two classes renamed to the same obfuscated name: the mapping is not one build's.
    #[error("{file}:{line}: obfuscated class {obfuscated} is already the name of {first} (line {first_line})")]
    DuplicateClass {
        /// The file's name as given.
        file: String,
        /// Line of the second class.
        line: usize,
        /// The obfuscated name both have.
        obfuscated: String,
        /// The first class's original name.
        first: String,
        /// Line of the first class.
        first_line: usize,
    },
}

/// Why a class's member lines could not be had: a bad line (its number, what), or the file
/// failing (or changing) when read again. Kept with the class, and turned into a
/// [`MappingError`] naming the file each time a lookup meets it.
#[derive(Debug)]
pub(crate) enum BodyError {
    Syntax(usize, String),
    Io(std::io::ErrorKind, String),
}
