//! The control surface of `docs/architecture.md`: system properties and the thread-name hook.

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
/// Task records (`docs/tasks.md`): `1` makes the framework methods that submit,
/// begin and end asynchronous tasks write the identities of the task and its queue; `0` (the
/// default) leaves them as every other method. Read once, when the control thread starts.
pub const TASKS: &str = "debug.hubble.tasks";
/// `files,MiB` kept per app.
pub const RETENTION: &str = "debug.hubble.retention";
/// Duration triggers: `<method>><threshold>=<reason>[; ...]`, e.g.
/// `android.view.Choreographer.doFrame>32ms=jank`. A value holds at most 91 bytes on Android
/// (`PROP_VALUE_MAX`), so more triggers go on in [`TRIGGERS`]`.1` ... `.9`, all read as one list.
pub const TRIGGERS: &str = "debug.hubble.triggers";
/// Continuation properties of [`TRIGGERS`]: `debug.hubble.triggers.1` to `.9`.
pub const TRIGGER_CONTINUATIONS: usize = 9;
/// Minimum time between two flushes of one trigger reason (`30s`, `500ms`).
pub const TRIGGER_INTERVAL: &str = "debug.hubble.trigger_interval";
/// Default of [`TRIGGER_INTERVAL`]: a trigger that keeps firing (every frame janky) writes one
/// file per half minute, not one per frame; retention keeps 8 files by default.
pub const DEFAULT_TRIGGER_INTERVAL: Duration = Duration::from_secs(30);
/// ANR flush rate limit: `<n>ms` / `<n>s`, the least time between two ANR
/// flushes; `off`: SIGQUIT never flushes. Requests within it are counted and dropped.
pub const ANR_INTERVAL: &str = "debug.hubble.anr_interval";
/// Default of [`ANR_INTERVAL`]. An app whose main thread stays stuck gets an ANR per input
/// event it does not answer (5 s each), and a bugreport sends SIGQUIT to every app: one set of
/// files a minute keeps the seconds before the first ANR without filling retention's 8 files.
pub const DEFAULT_ANR_INTERVAL: Duration = Duration::from_secs(60);

/// Parses [`TASKS`]: absent or `0` is off, `1` on.
pub fn parse_tasks(value: Option<&str>) -> Result<bool, ConfigError> {
    match value.map(str::trim) {
        None | Some("") | Some("0") => Ok(false),
        Some("1") => Ok(true),
        Some(other) => Err(ConfigError::BadTasks(other.to_string())),
    }
}

/// [`ANR_INTERVAL`] is neither a duration nor `off`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{ANR_INTERVAL} '{0}' is not a number of ms or s (60s, 500ms) or off")]
pub struct AnrIntervalError(pub String);

/// Parses [`ANR_INTERVAL`]: `Some(interval)`, or `None` for `off`.
pub fn parse_anr_interval(value: &str) -> Result<Option<Duration>, AnrIntervalError> {
    if value.trim() == "off" {
        return Ok(None);
    }
    parse_duration(value)
        .map(Some)
        .ok_or_else(|| AnrIntervalError(value.to_string()))
}

/// Triggers per process: each is a bit of a 64-bit mask in the detector.
pub const MAX_TRIGGERS: usize = 64;

/// What every flushed file records about the device and build (format version 3 metadata):
/// `(metadata key, read-only system property)`. These identify a device *class* and a build,
/// never a device or a user (no serial, no IMEI, no account), so they may leave the device with
/// a trace under `persist.hubble.consent`. Fleet queries group by them (`docs/fleet.md`). The
/// app's own version is not known to ART; the ingest step adds it (`hubble export --meta`).
pub const METADATA: [(&str, &str); 5] = [
    ("device.manufacturer", "ro.product.manufacturer"),
    ("device.model", "ro.product.model"),
    ("build.fingerprint", "ro.build.fingerprint"),
    ("android.sdk", "ro.build.version.sdk"),
    ("cpu.abi", "ro.product.cpu.abi"),
];

/// The [`METADATA`] entries that `source` has, truncated to what the file format allows.
pub fn metadata(source: &dyn PropertySource) -> std::collections::BTreeMap<String, String> {
    METADATA
        .iter()
        .filter_map(|(key, property)| {
            let mut value = source.get(property)?;
            if value.len() > hubble_format::file::MAX_METADATA_VALUE {
                let mut end = hubble_format::file::MAX_METADATA_VALUE;
                while !value.is_char_boundary(end) {
                    end -= 1;
                }
                value.truncate(end);
            }
            Some((key.to_string(), value))
        })
        .collect()
}

/// Where properties come from: Android's property area, or a fake in tests.
pub trait PropertySource: Send + Sync {
    /// The value, if the property is set and non-empty.
    fn get(&self, name: &str) -> Option<String>;
    /// Waits up to `timeout` for any property to change (returns early on a change).
    fn wait_change(&self, timeout: Duration);
}

/// Properties held in memory: the host build's property source ([`crate::host_properties`]),
/// and the tests' (`hubble_testkit::runtime::FakeProperties`).
#[cfg(any(not(target_os = "android"), test))]
#[derive(Debug, Default)]
pub struct MemProperties {
    values: std::sync::Mutex<std::collections::HashMap<String, String>>,
}

#[cfg(any(not(target_os = "android"), test))]
impl MemProperties {
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

#[cfg(any(not(target_os = "android"), test))]
impl PropertySource for MemProperties {
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

/// bionic's system property calls (`<sys/system_properties.h>`), generated by bindgen from
/// `system_properties.h`: by build.rs in a cargo build for Android, by Android.bp's rust_bindgen
/// libhubble_runtime_system_properties (a source of libhubble_runtime, in its `OUT_DIR`) under
/// Soong. Android only: no cargo build on this host targets Android, so this module is compiled
/// (and the bindings generated) only where one does.
#[cfg(target_os = "android")]
mod sys {
    #![allow(
        non_camel_case_types,
        non_snake_case,
        non_upper_case_globals,
        dead_code
    )]
    include!(concat!(env!("OUT_DIR"), "/system_properties.rs"));
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
            sys::__system_property_read_callback(
                pi,
                Some(read),
                (&mut out as *mut Option<String>).cast(),
            )
        };
        out.filter(|v| !v.is_empty())
    }
    fn wait_change(&self, timeout: Duration) {
        // bindgen's struct timespec (bionic's field types, whatever their width).
        let ts = sys::timespec {
            tv_sec: timeout.as_secs() as _,
            tv_nsec: timeout.subsec_nanos() as _,
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

/// Which methods a trigger watches: `Class.method` (every overload) or `Class.method(args)`,
/// as `ArtMethod::PrettyMethod` prints them (the return type may be given or left out).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MethodPattern {
    /// Fully qualified `package.Class.method` (`$` for nested classes, `<init>` for constructors).
    pub name: String,
    /// The argument types without spaces (`long,int`), or `None` for every overload.
    pub args: Option<String>,
}

impl MethodPattern {
    /// Whether a `PrettyMethod` name (`void a.B.c(long, int)`) is one of the pattern's methods.
    pub fn matches(&self, pretty: &str) -> bool {
        let Some((name, args)) = split_pretty(pretty) else {
            return false;
        };
        if name != self.name {
            return false;
        }
        match &self.args {
            None => true,
            Some(want) => args.chars().filter(|c| !c.is_whitespace()).eq(want.chars()),
        }
    }
}

impl std::fmt::Display for MethodPattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.args {
            Some(a) => write!(f, "{}({a})", self.name),
            None => f.write_str(&self.name),
        }
    }
}

/// `ret a.B.c(x, y)` → (`a.B.c`, `x, y`); `a.B.c(x)` → (`a.B.c`, `x`); no parentheses: `None`.
fn split_pretty(pretty: &str) -> Option<(&str, &str)> {
    let (head, rest) = pretty.split_once('(')?;
    let args = rest.trim_end().strip_suffix(')')?;
    let name = head.trim_end().rsplit(' ').next()?;
    Some((name, args))
}

/// One parsed trigger of [`TRIGGERS`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TriggerSpec {
    /// The methods.
    pub method: MethodPattern,
    /// A call longer than this fires.
    pub threshold: Duration,
    /// The flush reason (in the file name and header).
    pub reason: String,
}

/// Why [`TRIGGERS`] (or [`TRIGGER_INTERVAL`]) was rejected. The detector logs it and keeps
/// the triggers it had.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TriggerSpecError {
    /// Not `<method>><threshold>=<reason>`.
    #[error("trigger {index} '{entry}': expected <method>><threshold>=<reason>, e.g. android.view.Choreographer.doFrame>32ms=jank")]
    Syntax {
        /// 1-based position in the list.
        index: usize,
        /// The trigger as written.
        entry: String,
    },
    /// The method is not `Class.method` or `[ret ]Class.method(args)`.
    #[error("trigger {index}: method '{method}' is not Class.method or Class.method(arg, ...) as PrettyMethod prints it")]
    Method {
        /// 1-based position in the list.
        index: usize,
        /// The method as written.
        method: String,
    },
    /// The threshold is not a positive whole number of `ms` or `s`.
    #[error(
        "trigger {index}: threshold '{threshold}' is not a positive number of ms or s (32ms, 2s)"
    )]
    Threshold {
        /// 1-based position in the list.
        index: usize,
        /// The threshold as written.
        threshold: String,
    },
    /// The reason is empty, too long, or has characters a file name should not.
    #[error("trigger {index}: reason '{reason}' must be 1-32 characters of A-Z a-z 0-9 . _ -")]
    Reason {
        /// 1-based position in the list.
        index: usize,
        /// The reason as written.
        reason: String,
    },
    /// More than [`MAX_TRIGGERS`].
    #[error("{0} triggers: at most {MAX_TRIGGERS}")]
    TooMany(usize),
    /// [`TRIGGER_INTERVAL`] is not a duration.
    #[error("{TRIGGER_INTERVAL} '{0}' is not a number of ms or s (30s, 500ms)")]
    Interval(String),
}

/// Parses a duration: a whole number followed by `ms` or `s`.
pub fn parse_duration(value: &str) -> Option<Duration> {
    let v = value.trim();
    let (digits, scale) = if let Some(d) = v.strip_suffix("ms") {
        (d, 1)
    } else if let Some(d) = v.strip_suffix('s') {
        (d, 1000)
    } else {
        return None;
    };
    let n: u64 = digits.trim().parse().ok()?;
    Some(Duration::from_millis(n.checked_mul(scale)?))
}

/// Parses [`TRIGGER_INTERVAL`].
pub fn parse_trigger_interval(value: &str) -> Result<Duration, TriggerSpecError> {
    parse_duration(value).ok_or_else(|| TriggerSpecError::Interval(value.to_string()))
}

/// Parses [`TRIGGERS`] (with its continuations joined by `;`): triggers separated by `;`, each
/// `<method>><threshold>=<reason>`. Empty entries are skipped; any bad entry rejects the whole
/// value (a half-applied list would be harder to notice than a logged error).
pub fn parse_triggers(value: &str) -> Result<Vec<TriggerSpec>, TriggerSpecError> {
    let mut out = Vec::new();
    for (i, entry) in value.split(';').map(str::trim).enumerate() {
        let index = i + 1;
        if entry.is_empty() {
            continue;
        }
        let syntax = || TriggerSpecError::Syntax {
            index,
            entry: entry.to_string(),
        };
        // The reason and threshold never hold '=' or '>'; the method may (`<init>`).
        let (lhs, reason) = entry.rsplit_once('=').ok_or_else(syntax)?;
        let (method, threshold) = lhs.rsplit_once('>').ok_or_else(syntax)?;
        let reason = reason.trim();
        if reason.is_empty()
            || reason.len() > 32
            || !reason
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        {
            return Err(TriggerSpecError::Reason {
                index,
                reason: reason.to_string(),
            });
        }
        let threshold = parse_duration(threshold)
            .filter(|d| !d.is_zero())
            .ok_or_else(|| TriggerSpecError::Threshold {
                index,
                threshold: threshold.trim().to_string(),
            })?;
        let method = parse_method(method.trim()).ok_or_else(|| TriggerSpecError::Method {
            index,
            method: method.trim().to_string(),
        })?;
        out.push(TriggerSpec {
            method,
            threshold,
            reason: reason.to_string(),
        });
    }
    if out.len() > MAX_TRIGGERS {
        return Err(TriggerSpecError::TooMany(out.len()));
    }
    Ok(out)
}

fn parse_method(m: &str) -> Option<MethodPattern> {
    let (name, args) = if m.contains('(') {
        let (name, args) = split_pretty(m)?;
        let args: String = args.chars().filter(|c| !c.is_whitespace()).collect();
        (name, Some(args))
    } else {
        (m, None)
    };
    let ok = name.contains('.')
        && !name.starts_with('.')
        && !name.ends_with('.')
        && !name.contains(char::is_whitespace)
        && !name.contains(['(', ')', ';', '=']);
    ok.then(|| MethodPattern {
        name: name.to_string(),
        args,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trigger_specs() {
        let t = parse_triggers(
            "android.view.Choreographer.doFrame>32ms=jank; \
             void android.app.ActivityThread.handleBindApplication(android.app.ActivityThread$AppBindData)>2s=slow-start;;",
        )
        .unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].method.name, "android.view.Choreographer.doFrame");
        assert_eq!(t[0].method.args, None);
        assert_eq!(t[0].threshold, Duration::from_millis(32));
        assert_eq!(t[0].reason, "jank");
        assert_eq!(
            t[1].method.args.as_deref(),
            Some("android.app.ActivityThread$AppBindData")
        );
        assert_eq!(t[1].threshold, Duration::from_secs(2));
        let doframe = "void android.view.Choreographer.doFrame(long, int, android.view.DisplayEventReceiver$VsyncEventData)";
        assert!(t[0].method.matches(doframe));
        assert!(!t[0]
            .method
            .matches("void android.view.Choreographer.doFrameX(long)"));
        assert!(!t[0].method.matches("<runtime method>"));
        let sig = parse_triggers("android.view.Choreographer.doFrame(long,int, android.view.DisplayEventReceiver$VsyncEventData)>1ms=a").unwrap();
        assert!(sig[0].method.matches(doframe));
        let other = parse_triggers("android.view.Choreographer.doFrame(long)>1ms=a").unwrap();
        assert!(!other[0].method.matches(doframe));
        // Constructors hold '<' and '>'.
        let init = parse_triggers("com.example.Foo.<init>>5ms=ctor").unwrap();
        assert_eq!(init[0].method.name, "com.example.Foo.<init>");
        assert!(init[0].method.matches("void com.example.Foo.<init>(int)"));
        assert_eq!(parse_triggers("").unwrap(), vec![]);
    }

    #[test]
    fn bad_trigger_specs_say_what_is_wrong() {
        let e = |v: &str| parse_triggers(v).unwrap_err();
        assert!(matches!(
            e("a.B.c=jank"),
            TriggerSpecError::Syntax { index: 1, .. }
        ));
        assert!(matches!(e("a.B.c>32ms"), TriggerSpecError::Syntax { .. }));
        assert!(matches!(
            e("a.B.c>32ms=ok; a.B.d>32=jank"),
            TriggerSpecError::Threshold { index: 2, .. }
        ));
        assert!(matches!(
            e("a.B.c>0ms=j"),
            TriggerSpecError::Threshold { .. }
        ));
        assert!(matches!(
            e("a.B.c>1.5s=j"),
            TriggerSpecError::Threshold { .. }
        ));
        assert!(matches!(
            e("doFrame>3ms=j"),
            TriggerSpecError::Method { .. }
        ));
        assert!(matches!(
            e("a.B.c(int>3ms=j"),
            TriggerSpecError::Method { .. }
        ));
        assert!(matches!(
            e("a.B.c>3ms=ja nk"),
            TriggerSpecError::Reason { .. }
        ));
        assert!(matches!(e("a.B.c>3ms="), TriggerSpecError::Reason { .. }));
        let many = vec!["a.B.c>1ms=x"; MAX_TRIGGERS + 1].join(";");
        assert_eq!(e(&many), TriggerSpecError::TooMany(MAX_TRIGGERS + 1));
        let most = vec!["a.B.c>1ms=x"; MAX_TRIGGERS].join(";");
        assert_eq!(parse_triggers(&most).map(|v| v.len()), Ok(MAX_TRIGGERS));
        // A reason of up to 32 characters.
        let r32 = "r".repeat(32);
        assert_eq!(
            parse_triggers(&format!("a.B.c>1ms={r32}")).map(|v| v[0].reason.clone()),
            Ok(r32.clone())
        );
        assert!(matches!(
            e(&format!("a.B.c>1ms={r32}x")),
            TriggerSpecError::Reason { .. }
        ));
        let msg = e("a.B.c>32=jank").to_string();
        assert!(msg.contains("'32'") && msg.contains("ms or s"), "{msg}");
        assert_eq!(
            parse_trigger_interval("500ms"),
            Ok(Duration::from_millis(500))
        );
        assert!(parse_trigger_interval("soon").is_err());
        assert_eq!(parse_anr_interval("5s"), Ok(Some(Duration::from_secs(5))));
        assert_eq!(parse_anr_interval(" off "), Ok(None));
        assert_eq!(parse_anr_interval("0ms"), Ok(Some(Duration::ZERO)));
        assert!(parse_anr_interval("never").is_err());
    }

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
        // Only a number after the last '#' is a sequence number: anything else is part of the
        // command, which then means nothing.
        assert_eq!(parse_ctl("com.a stop#x3", "com.a"), None);
        assert_eq!(parse_ctl("com.a stop#", "com.a"), Some(Command::Stop));
    }

    #[test]
    fn thread_names() {
        assert_eq!(parse_thread_name("HUBBLE:start"), Some(Command::Start));
        assert_eq!(parse_thread_name("HUBBLE:stop"), Some(Command::Stop));
        assert_eq!(
            parse_thread_name("HUBBLE:flush:jank"),
            Some(Command::Flush("jank".into()))
        );
        assert_eq!(
            parse_thread_name("HUBBLE:flush"),
            Some(Command::Flush("api".to_string()))
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

/// Many-thread mode's memory budget in MiB (`debug.hubble.threads all`).
pub const BUDGET_MB: &str = "debug.hubble.budget_mb";
/// Default of [`BUDGET_MB`].
pub const DEFAULT_BUDGET_MB: usize = 64;
/// Largest [`BUDGET_MB`] accepted, as for a ring ([`crate::ring::MAX_RING_BYTES`]): anything
/// larger is a configuration mistake, refused before anything is mapped.
pub const MAX_BUDGET_MB: usize = 1024;
/// BTrace's active-block bound A: a block sealed at pool head h is claimable from ticket
/// h + N − A on, so every record written since the head was N − A tickets back survives
/// (latest fragment ≥ 1 − A/N of the pool in tickets). 128: measured against 64 and 256 on the
/// 64-thread workload (`docs/many-threads.md`, "Reuse after the seal"). The budget must hold at
/// least [`MIN_BLOCKS_PER_ACTIVE`] × A blocks, so the bound is at least 1 − 1/4.
pub const ACTIVE_BLOCKS: usize = 128;
/// Blocks of budget required per active block.
pub const MIN_BLOCKS_PER_ACTIVE: usize = 4;

/// Which threads are traced (`debug.hubble.threads`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThreadSelector {
    /// The N most recently foreground threads, each in its own ring.
    Recent(usize),
    /// Every thread, in one pool of blocks of `budget` bytes.
    All {
        /// The pool's size in bytes (a power of two number of blocks).
        budget: usize,
    },
}

/// A bad tracing configuration: logged, and the previous settings stay.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    /// `debug.hubble.threads` is neither a positive count nor `all`.
    #[error("debug.hubble.threads = {0:?}: expected a thread count (1, 2, ...) or `all`")]
    UnknownSelector(String),
    /// `debug.hubble.tasks` is neither `0` nor `1`.
    #[error("debug.hubble.tasks = {0:?}: expected 1 (task records on) or 0 (off)")]
    BadTasks(String),
    /// `debug.hubble.budget_mb` is not a whole number of MiB.
    #[error("debug.hubble.budget_mb = {0:?}: expected a whole number of MiB")]
    BadBudget(String),
    /// The budget is above [`MAX_BUDGET_MB`].
    #[error("debug.hubble.budget_mb = {0}: at most {MAX_BUDGET_MB} MiB")]
    BudgetTooLarge(usize),
    /// The budget cannot hold the active blocks.
    #[error(
        "debug.hubble.budget_mb = {mb}: {blocks} blocks of {block_kib} KiB, but {active} active \
         blocks need at least {needed} ({needed_mb} MiB)"
    )]
    BudgetTooSmall {
        /// The budget asked for.
        mb: usize,
        /// Blocks it holds.
        blocks: usize,
        /// Block size in KiB.
        block_kib: usize,
        /// A.
        active: usize,
        /// Blocks needed.
        needed: usize,
        /// MiB needed.
        needed_mb: usize,
    },
}

/// Parses `debug.hubble.threads` and `debug.hubble.budget_mb` (both as read; `None`: unset).
pub fn parse_thread_selector(
    threads: Option<&str>,
    budget_mb: Option<&str>,
    default_threads: usize,
) -> Result<ThreadSelector, ConfigError> {
    let threads = threads.map(str::trim).unwrap_or("");
    if threads.is_empty() {
        return Ok(ThreadSelector::Recent(default_threads));
    }
    if threads != "all" {
        return threads
            .parse::<usize>()
            .ok()
            .filter(|n| *n > 0)
            .map(ThreadSelector::Recent)
            .ok_or_else(|| ConfigError::UnknownSelector(threads.to_string()));
    }
    let mb = match budget_mb.map(str::trim) {
        None | Some("") => DEFAULT_BUDGET_MB,
        Some(v) => v
            .parse::<usize>()
            .map_err(|_| ConfigError::BadBudget(v.to_string()))?,
    };
    if mb > MAX_BUDGET_MB {
        return Err(ConfigError::BudgetTooLarge(mb));
    }
    let block = hubble_format::pool::BLOCK_BYTES;
    let blocks = mb.saturating_mul(1 << 20) / block;
    // The pool uses the largest power of two of blocks the budget holds (the ticket's mask).
    let blocks = if blocks == 0 {
        0
    } else {
        1 << (usize::BITS - 1 - blocks.leading_zeros())
    };
    let needed = ACTIVE_BLOCKS * MIN_BLOCKS_PER_ACTIVE;
    if blocks < needed {
        return Err(ConfigError::BudgetTooSmall {
            mb,
            blocks,
            block_kib: block >> 10,
            active: ACTIVE_BLOCKS,
            needed,
            needed_mb: (needed * block) >> 20,
        });
    }
    Ok(ThreadSelector::All {
        budget: blocks * block,
    })
}

/// The pool of a `budget` checked by [`parse_thread_selector`]: blocks of
/// [`hubble_format::pool::BLOCK_BYTES`], A = [`ACTIVE_BLOCKS`].
pub fn pool_geometry(budget: usize) -> hubble_format::pool::Geometry {
    let block = hubble_format::pool::BLOCK_BYTES;
    hubble_format::pool::Geometry {
        blocks: budget / block,
        block_slots: block / 8,
        active: ACTIVE_BLOCKS,
    }
}

/// Applies the properties to the current selector: the new one, or on a bad configuration the
/// previous one, with the error logged (tracing keeps what it had).
pub fn update_thread_selector(
    source: &dyn PropertySource,
    previous: ThreadSelector,
    default_threads: usize,
) -> (ThreadSelector, Option<ConfigError>) {
    match parse_thread_selector(
        source.get(THREADS).as_deref(),
        source.get(BUDGET_MB).as_deref(),
        default_threads,
    ) {
        Ok(s) => (s, None),
        Err(e) => {
            log::error!("hubble: {e}; keeping {previous:?}");
            (previous, Some(e))
        }
    }
}

#[cfg(test)]
mod selector_tests {
    use super::*;

    // `all` with a budget: the pool's size is the largest power of two of 16 KiB blocks in it.
    #[test]
    fn all_threads_with_a_budget() {
        assert_eq!(
            parse_thread_selector(Some("all"), Some("64"), 2),
            Ok(ThreadSelector::All { budget: 64 << 20 })
        );
        assert_eq!(
            parse_thread_selector(Some("all"), Some("100"), 2),
            Ok(ThreadSelector::All { budget: 64 << 20 })
        );
        assert_eq!(
            parse_thread_selector(Some("all"), None, 2),
            Ok(ThreadSelector::All {
                budget: DEFAULT_BUDGET_MB << 20
            })
        );
        assert_eq!(
            parse_thread_selector(Some("3"), Some("1"), 2),
            Ok(ThreadSelector::Recent(3))
        );
        assert_eq!(
            parse_thread_selector(None, None, 2),
            Ok(ThreadSelector::Recent(2))
        );
    }

    // The two bad configurations of the issue, each named in the error.
    #[test]
    fn bad_configurations_say_what_is_wrong() {
        let e = parse_thread_selector(Some("every"), None, 2).unwrap_err();
        assert_eq!(e, ConfigError::UnknownSelector("every".into()));
        assert!(e.to_string().contains("`all`"), "{e}");
        assert_eq!(
            parse_thread_selector(Some("0"), None, 2),
            Err(ConfigError::UnknownSelector("0".into()))
        );
        let e = parse_thread_selector(Some("all"), Some("4"), 2).unwrap_err();
        assert_eq!(
            e,
            ConfigError::BudgetTooSmall {
                mb: 4,
                blocks: 256,
                block_kib: 16,
                active: ACTIVE_BLOCKS,
                needed: 512,
                needed_mb: 8,
            }
        );
        assert!(e.to_string().contains("8 MiB"), "{e}");
        assert_eq!(
            parse_thread_selector(Some("all"), Some("lots"), 2),
            Err(ConfigError::BadBudget("lots".into()))
        );
        // Past the bound nothing is mapped: a huge value used to abort the app at launch (the
        // mapping's failure panicked across the cxx bridge).
        assert_eq!(
            parse_thread_selector(Some("all"), Some("1024"), 2),
            Ok(ThreadSelector::All { budget: 1 << 30 })
        );
        let e = parse_thread_selector(Some("all"), Some("1025"), 2).unwrap_err();
        assert_eq!(e, ConfigError::BudgetTooLarge(1025));
        assert!(e.to_string().contains("at most 1024 MiB"), "{e}");
        assert_eq!(
            parse_thread_selector(Some("all"), Some("18446744073709551615"), 2),
            Err(ConfigError::BudgetTooLarge(usize::MAX))
        );
    }

    // A bad value keeps the previous setting; a good one replaces it.
    #[test]
    fn a_bad_configuration_keeps_the_previous_settings() {
        let p = MemProperties::default();
        let previous = ThreadSelector::All { budget: 32 << 20 };
        p.set(THREADS, "all");
        p.set(BUDGET_MB, "1");
        let (s, e) = update_thread_selector(&p, previous, 2);
        assert_eq!(s, previous);
        assert!(matches!(e, Some(ConfigError::BudgetTooSmall { .. })));
        p.set(THREADS, "bogus");
        assert_eq!(update_thread_selector(&p, previous, 2).0, previous);
        p.set(THREADS, "4");
        assert_eq!(
            update_thread_selector(&p, previous, 2),
            (ThreadSelector::Recent(4), None)
        );
    }
}
