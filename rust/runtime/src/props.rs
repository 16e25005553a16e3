//! The control surface of `docs/architecture.md`: system properties and the thread-name hook.

use std::collections::HashMap;
use std::sync::Mutex as StdMutex;
use std::time::Duration;

/// Consent gate: nothing is written to disk unless this is `1`.
pub const CONSENT: &str = "persist.hubble.consent";
/// Packages (processes) in which the control thread runs: `pkg1,pkg2` or `*`.
pub const PACKAGES: &str = "debug.hubble.packages";
/// `<package> <command> [<arg>]`, acted on when the value changes.
pub const CTL: &str = "debug.hubble.ctl";
/// Ring size per traced thread in MiB.
pub const RING_MB: &str = "debug.hubble.ring_mb";
/// N most-recently-foreground threads traced.
pub const THREADS: &str = "debug.hubble.threads";
/// `files,MiB` kept per app.
pub const RETENTION: &str = "debug.hubble.retention";

/// Where properties come from: Android's property area, or a fake in tests.
pub trait PropertySource: Send + Sync {
    /// The value, if the property is set and non-empty.
    fn get(&self, name: &str) -> Option<String>;
    /// Waits up to `timeout` for any property to change (returns early on a change).
    fn wait_change(&self, timeout: Duration);
}

/// Properties held in memory (host and tests).
#[derive(Debug, Default)]
pub struct FakeProperties {
    values: StdMutex<HashMap<String, String>>,
}

impl FakeProperties {
    /// Sets (or with `""` clears) a property.
    pub fn set(&self, name: &str, value: &str) {
        let mut v = self.values.lock().expect("properties lock");
        if value.is_empty() {
            v.remove(name);
        } else {
            v.insert(name.to_string(), value.to_string());
        }
    }
}

impl PropertySource for FakeProperties {
    fn get(&self, name: &str) -> Option<String> {
        self.values
            .lock()
            .expect("properties lock")
            .get(name)
            .cloned()
    }
    fn wait_change(&self, timeout: Duration) {
        std::thread::sleep(timeout.min(Duration::from_millis(20)));
    }
}

/// Android's system properties through bionic.
#[cfg(target_os = "android")]
#[derive(Debug, Default)]
pub struct SystemProperties;

#[cfg(target_os = "android")]
mod sys {
    use std::ffi::{c_char, c_void};

    #[repr(C)]
    pub struct PropInfo {
        _private: [u8; 0],
    }
    extern "C" {
        pub fn __system_property_find(name: *const c_char) -> *const PropInfo;
        pub fn __system_property_read_callback(
            pi: *const PropInfo,
            callback: unsafe extern "C" fn(*mut c_void, *const c_char, *const c_char, u32),
            cookie: *mut c_void,
        );
        pub fn __system_property_wait(
            pi: *const PropInfo,
            old_serial: u32,
            new_serial: *mut u32,
            timeout: *const libc::timespec,
        ) -> bool;
        pub fn __system_property_area_serial() -> u32;
    }
}

#[cfg(target_os = "android")]
impl PropertySource for SystemProperties {
    fn get(&self, name: &str) -> Option<String> {
        unsafe extern "C" fn read(
            cookie: *mut std::ffi::c_void,
            _name: *const std::ffi::c_char,
            value: *const std::ffi::c_char,
            _serial: u32,
        ) {
            // SAFETY: cookie is the &mut Option<String> passed below, alive for the call; bionic
            // passes a NUL-terminated value.
            let out = unsafe { &mut *cookie.cast::<Option<String>>() };
            // SAFETY: as above, `value` is a valid C string for the duration of the callback.
            let v = unsafe { std::ffi::CStr::from_ptr(value) };
            *out = Some(v.to_string_lossy().into_owned());
        }
        let cname = std::ffi::CString::new(name).ok()?;
        // SAFETY: cname is a valid C string; the result is checked for null.
        let pi = unsafe { sys::__system_property_find(cname.as_ptr()) };
        if pi.is_null() {
            return None;
        }
        let mut out: Option<String> = None;
        // SAFETY: pi came from __system_property_find; the cookie outlives the synchronous call.
        unsafe {
            sys::__system_property_read_callback(pi, read, (&mut out as *mut Option<String>).cast())
        };
        out.filter(|v| !v.is_empty())
    }
    fn wait_change(&self, timeout: Duration) {
        let ts = libc::timespec {
            tv_sec: timeout.as_secs() as libc::time_t,
            tv_nsec: timeout.subsec_nanos() as libc::c_long,
        };
        let mut new_serial = 0u32;
        // SAFETY: a null prop_info waits on the global serial; pointers are to live locals.
        unsafe {
            let old = sys::__system_property_area_serial();
            sys::__system_property_wait(std::ptr::null(), old, &mut new_serial, &ts);
        }
    }
}

/// A command of `debug.hubble.ctl` or of the thread-name hook.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// Start tracing (the default threads, or the calling thread for the name hook).
    Start,
    /// Stop tracing.
    Stop,
    /// Flush with a reason (and restart).
    Flush(String),
    /// Set N, the number of traced threads.
    Threads(usize),
}

/// Parses `debug.hubble.ctl` (`<package> <command> [<arg>][#<n>]`) for `package`.
/// Returns `None` if it is addressed to another package or malformed.
pub fn parse_ctl(value: &str, package: &str) -> Option<Command> {
    let value = match value.rfind('#') {
        Some(i) if value[i + 1..].chars().all(|c| c.is_ascii_digit()) => &value[..i],
        _ => value,
    };
    let mut words = value.split_whitespace();
    let target = words.next()?;
    if target != package && target != "*" {
        return None;
    }
    let command = words.next()?;
    let arg = words.next();
    if words.next().is_some() {
        return None;
    }
    match (command, arg) {
        ("start", None) => Some(Command::Start),
        ("stop", None) => Some(Command::Stop),
        ("flush", r) => Some(Command::Flush(r.unwrap_or("property").to_string())),
        ("threads", Some(n)) => n.parse().ok().filter(|n| *n > 0).map(Command::Threads),
        _ => None,
    }
}

/// Parses the Nanoscope-style thread-name hook: `HUBBLE:start`, `HUBBLE:stop`,
/// `HUBBLE:flush:<reason>`. Any other name is a real name.
pub fn parse_thread_name(name: &str) -> Option<Command> {
    let rest = name.strip_prefix("HUBBLE:")?;
    match rest {
        "start" => Some(Command::Start),
        "stop" => Some(Command::Stop),
        "flush" => Some(Command::Flush("api".to_string())),
        _ => rest
            .strip_prefix("flush:")
            .map(|r| Command::Flush(r.to_string())),
    }
}

/// Whether `package` is selected by `debug.hubble.packages`.
pub fn package_selected(packages: Option<&str>, package: &str) -> bool {
    packages.is_some_and(|p| p.split(',').any(|x| x.trim() == "*" || x.trim() == package))
}

/// Parses `debug.hubble.retention` (`files,MiB`).
pub fn parse_retention(value: &str) -> Option<(usize, u64)> {
    let (files, mib) = value.split_once(',')?;
    Some((files.trim().parse().ok()?, mib.trim().parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ctl_commands() {
        assert_eq!(parse_ctl("com.a start", "com.a"), Some(Command::Start));
        assert_eq!(parse_ctl("com.a stop#3", "com.a"), Some(Command::Stop));
        assert_eq!(
            parse_ctl("com.a flush jank#12", "com.a"),
            Some(Command::Flush("jank".into()))
        );
        assert_eq!(
            parse_ctl("com.a flush", "com.a"),
            Some(Command::Flush("property".into()))
        );
        assert_eq!(
            parse_ctl("com.a threads 3", "com.a"),
            Some(Command::Threads(3))
        );
        assert_eq!(parse_ctl("com.a threads 0", "com.a"), None);
        assert_eq!(parse_ctl("com.b start", "com.a"), None);
        assert_eq!(parse_ctl("com.a bogus", "com.a"), None);
        assert_eq!(parse_ctl("com.a start extra", "com.a"), None);
    }

    #[test]
    fn thread_names() {
        assert_eq!(parse_thread_name("HUBBLE:start"), Some(Command::Start));
        assert_eq!(parse_thread_name("HUBBLE:stop"), Some(Command::Stop));
        assert_eq!(
            parse_thread_name("HUBBLE:flush:jank"),
            Some(Command::Flush("jank".into()))
        );
        assert_eq!(parse_thread_name("main"), None);
        assert_eq!(parse_thread_name("HUBBLE:other"), None);
    }

    #[test]
    fn packages_and_retention() {
        assert!(package_selected(Some("a,b"), "b"));
        assert!(package_selected(Some("*"), "x"));
        assert!(!package_selected(Some("a,b"), "c"));
        assert!(!package_selected(None, "a"));
        assert_eq!(parse_retention("8,256"), Some((8, 256)));
        assert_eq!(parse_retention("8"), None);
    }
}
