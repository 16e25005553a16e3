//! The native code the scene loads next to the emitted trace points: the pool's block-end
//! function (`runtime/hubble/pool_x86_64.S`, through the x86_64 harness's wrapper) and the task
//! record's writer (`tp::Task`, `cpp/entrypoints.cc`), both compiled unchanged from
//! `art-patches/files` into one shared object with the `Thread` offsets of the ART that emitted
//! the trace points (the blob file's `offsets 8` and `tid 8` lines), then `dlopen`ed.

use std::ffi::{c_void, CStr, CString};
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, ensure, Context as _, Result};

type TaskFn = unsafe extern "C" fn(*mut u64, u32, u32, u32, *const u32) -> u64;

/// The loaded shared object.
pub struct Entrypoints {
    handle: *mut c_void,
    /// `hubble_pool_take`: what the pool header's `P_TAKE` holds.
    pub pool_take: u64,
    task: TaskFn,
    /// The shared object's path.
    pub path: PathBuf,
}

// SAFETY: the handle is only passed to dlclose on drop; the functions are thread-safe (they
// touch only the calling thread's block and the pool, through the pool's atomics).
unsafe impl Send for Entrypoints {}
// SAFETY: as above.
unsafe impl Sync for Entrypoints {}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn dlerror() -> String {
    // SAFETY: dlerror returns a thread-local message or null.
    let e = unsafe { libc::dlerror() };
    if e.is_null() {
        "unknown error".into()
    } else {
        // SAFETY: a NUL-terminated string owned by libc, read before the next dl* call.
        unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
    }
}

impl Entrypoints {
    /// Compiles the shared object into `dir` with the ART's `Thread` offsets (cursor, limit,
    /// stop, begin, end; tid) and loads it.
    pub fn build(offsets: [i64; 5], tid: i64, dir: &Path) -> Result<Entrypoints> {
        std::fs::create_dir_all(dir).with_context(|| format!("{}", dir.display()))?;
        let root = repo();
        let path = dir.join("libhubble-main-job-entrypoints.so");
        let names = ["CURSOR", "LIMIT", "STOP", "BEGIN", "END"];
        let mut cmd = Command::new("c++");
        cmd.args([
            "-shared",
            "-fPIC",
            "-O2",
            "-std=c++17",
            "-Wall",
            "-Wextra",
            "-Werror",
        ])
        .args(
            names
                .iter()
                .zip(offsets)
                .map(|(n, v)| format!("-DTHREAD_HUBBLE_{n}_OFFSET={v}")),
        )
        .arg(format!("-DTHREAD_TID_OFFSET={tid}"))
        .arg("-I")
        .arg(root.join("art-patches/files"))
        .arg(root.join("proving/main-job/cpp/entrypoints.cc"))
        .arg(root.join("proving/hotpath-x86/cpp/pool_x86_64.S"))
        .arg("-o")
        .arg(&path);
        let out = cmd.output().context("cannot run c++")?;
        if !out.status.success() {
            bail!(
                "building {} failed:\n{}",
                path.display(),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let c_path = CString::new(path.as_os_str().to_string_lossy().as_bytes())?;
        // SAFETY: a NUL-terminated path; the library has no constructors that need anything.
        let handle = unsafe { libc::dlopen(c_path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        ensure!(
            !handle.is_null(),
            "dlopen {}: {}",
            path.display(),
            dlerror()
        );
        let sym = |name: &CStr| -> Result<*mut c_void> {
            // SAFETY: a live handle and a NUL-terminated name.
            let p = unsafe { libc::dlsym(handle, name.as_ptr()) };
            ensure!(
                !p.is_null(),
                "{}: no {name:?}: {}",
                path.display(),
                dlerror()
            );
            Ok(p)
        };
        let pool_take = sym(CStr::from_bytes_with_nul(b"hubble_pool_take\0")?)? as u64;
        let task = sym(CStr::from_bytes_with_nul(b"hubble_main_job_task\0")?)?;
        // SAFETY: `hubble_main_job_task` is defined in entrypoints.cc with exactly this signature.
        let task = unsafe { std::mem::transmute::<*mut c_void, TaskFn>(task) };
        Ok(Entrypoints {
            handle,
            pool_take,
            task,
            path,
        })
    }

    /// Writes a task record on the calling thread: `tp::Task(block, kind, task, queue, tid)`.
    /// Returns the cursor after the call.
    ///
    /// # Safety
    /// `block` is the calling thread's block words (in its `Thread` image), whose ring or pool
    /// the control plane keeps alive, and `tid` its `Thread`'s tid word.
    pub unsafe fn task(
        &self,
        block: *mut u64,
        kind: u32,
        task: u32,
        queue: u32,
        tid: *const u32,
    ) -> u64 {
        // SAFETY: the caller's contract.
        unsafe { (self.task)(block, kind, task, queue, tid) }
    }
}

impl Drop for Entrypoints {
    fn drop(&mut self) {
        // SAFETY: the handle from dlopen; nothing calls into the library any more (the scene's
        // threads have joined before the entrypoints are dropped).
        unsafe { libc::dlclose(self.handle) };
    }
}
