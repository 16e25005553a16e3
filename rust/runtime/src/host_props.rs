//! The host's `setprop`: system properties read from a file, for a runtime that runs on a host
//! (the host VM of `proving/host-vm`). A device reads bionic's properties instead
//! ([`crate::props`]); this module does not exist there.
//!
//! The file holds `NAME=VALUE` lines (`#` comments and blank lines skipped), the names and
//! values a device's `setprop` takes. It is read again whenever it changes, so a test changes a
//! property mid-run by rewriting it (best through a temporary file and a rename, as `setprop`
//! changes a value at once). A line that is not `NAME=VALUE` is logged, naming the file and the
//! line, and skipped; an unreadable file keeps the last values read.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use crate::props::PropertySource;

/// The environment variable naming the property file; unset, the host runtime uses the
/// in-memory source ([`crate::host_properties`]).
pub const PROPERTIES_FILE_ENV: &str = "HUBBLE_PROPERTIES_FILE";

/// What identifies a version of the file: a rewrite changes one of them.
type Stamp = (SystemTime, u64, u64);

#[derive(Debug, Default)]
struct Loaded {
    stamp: Option<Stamp>,
    values: HashMap<String, String>,
}

/// Properties in a file, re-read when it changes.
#[derive(Debug)]
pub struct FileProperties {
    path: PathBuf,
    loaded: Mutex<Loaded>,
}

impl FileProperties {
    /// A source reading `path` (which need not exist yet: no properties until it does).
    pub fn new(path: impl Into<PathBuf>) -> FileProperties {
        FileProperties {
            path: path.into(),
            loaded: Mutex::new(Loaded::default()),
        }
    }

    /// The file this source reads.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn refresh(&self, loaded: &mut Loaded) {
        let stamp = match std::fs::metadata(&self.path) {
            Ok(m) => {
                use std::os::unix::fs::MetadataExt;
                (
                    m.modified().unwrap_or(SystemTime::UNIX_EPOCH),
                    m.len(),
                    m.ino(),
                )
            }
            Err(_) if loaded.stamp.is_none() => return,
            Err(e) => {
                log::warn!(
                    "hubble: property file {}: {e}; keeping its last values",
                    self.path.display()
                );
                loaded.stamp = None;
                return;
            }
        };
        if loaded.stamp == Some(stamp) {
            return;
        }
        match std::fs::read_to_string(&self.path) {
            Ok(text) => {
                loaded.values = parse(&self.path, &text);
                loaded.stamp = Some(stamp);
            }
            Err(e) => {
                log::warn!(
                    "hubble: property file {}: {e}; keeping its last values",
                    self.path.display()
                )
            }
        }
    }
}

/// `NAME=VALUE` lines; a bad line is logged with the file and its line number, and skipped.
fn parse(path: &Path, text: &str) -> HashMap<String, String> {
    let mut values = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let pair = line
            .split_once('=')
            .map(|(name, value)| (name.trim(), value.trim()));
        match pair {
            Some((name, value)) if !name.is_empty() && !name.contains(char::is_whitespace) => {
                if value.is_empty() {
                    values.remove(name);
                } else {
                    values.insert(name.to_string(), value.to_string());
                }
            }
            _ => log::warn!(
                "hubble: property file {} line {}: not NAME=VALUE, skipped: {line:?}",
                path.display(),
                i + 1
            ),
        }
    }
    values
}

impl PropertySource for FileProperties {
    fn get(&self, name: &str) -> Option<String> {
        let mut loaded = self.loaded.lock().expect("property file lock");
        self.refresh(&mut loaded);
        loaded.values.get(name).cloned()
    }

    fn wait_change(&self, timeout: Duration) {
        std::thread::sleep(timeout.min(Duration::from_millis(20)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, text).unwrap();
        std::fs::rename(&tmp, path).unwrap();
    }

    #[test]
    fn reads_names_and_values_as_setprop_takes_them() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("props");
        let p = FileProperties::new(&path);
        assert_eq!(
            p.get("debug.hubble.packages"),
            None,
            "no file yet: no properties"
        );
        write(
            &path,
            "# the host's setprop\npersist.hubble.consent=1\n\ndebug.hubble.packages = *\n\
             debug.hubble.triggers=a.B.c>32ms=jank\ndebug.hubble.ctl=\n",
        );
        assert_eq!(p.get("persist.hubble.consent").as_deref(), Some("1"));
        assert_eq!(p.get("debug.hubble.packages").as_deref(), Some("*"));
        // Only the first '=' separates: a trigger's own '=' stays in the value.
        assert_eq!(
            p.get("debug.hubble.triggers").as_deref(),
            Some("a.B.c>32ms=jank")
        );
        assert_eq!(
            p.get("debug.hubble.ctl"),
            None,
            "an empty value is unset, as on a device"
        );
    }

    #[test]
    fn a_rewrite_is_seen_at_the_next_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("props");
        write(&path, "debug.hubble.ctl=* flush one\n");
        let p = FileProperties::new(&path);
        assert_eq!(p.get("debug.hubble.ctl").as_deref(), Some("* flush one"));
        write(&path, "debug.hubble.ctl=* flush two\n");
        assert_eq!(p.get("debug.hubble.ctl").as_deref(), Some("* flush two"));
    }

    #[test]
    fn bad_lines_are_skipped_and_the_rest_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("props");
        write(
            &path,
            "no equals sign\nbad name=1\n=nameless\ndebug.hubble.threads=all\n",
        );
        let p = FileProperties::new(&path);
        assert_eq!(p.get("debug.hubble.threads").as_deref(), Some("all"));
        assert_eq!(p.get("bad name"), None);
        assert_eq!(p.get(""), None);
    }

    #[test]
    fn a_removed_file_keeps_the_last_values() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("props");
        write(&path, "persist.hubble.consent=1\n");
        let p = FileProperties::new(&path);
        assert_eq!(p.get("persist.hubble.consent").as_deref(), Some("1"));
        std::fs::remove_file(&path).unwrap();
        assert_eq!(p.get("persist.hubble.consent").as_deref(), Some("1"));
        write(&path, "persist.hubble.consent=0\n");
        assert_eq!(p.get("persist.hubble.consent").as_deref(), Some("0"));
    }
}
