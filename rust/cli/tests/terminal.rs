//! Progress on a terminal: `hubble export` draws its reading bar and its spinner when stderr is
//! a terminal (a pseudo-terminal here) and writes exactly the same file either way; with stderr
//! a pipe, stderr stays empty.

#![deny(unsafe_op_in_unsafe_fn)]

use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Command, Stdio};

use hubble_testkit::synth::{trace, Spec};

/// A pseudo-terminal: (master, slave).
fn openpty() -> (OwnedFd, OwnedFd) {
    let (mut master, mut slave) = (-1, -1);
    // SAFETY: openpty writes two descriptors into the given ints; the name, termios and window
    // size pointers may be null.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors were just opened by openpty and are owned by nobody else.
    unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) }
}

#[test]
fn export_shows_progress_on_a_terminal_only() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("t.hubble");
    trace(&Spec {
        ring_slots: 1 << 18,
        laps: 1.5,
        seed: 5,
        ..Spec::default()
    })
    .write_atomic(&input)
    .unwrap();
    let export = |out: &std::path::Path, stderr: Stdio| {
        Command::new(env!("CARGO_BIN_EXE_hubble"))
            .args(["export", "--format", "chrome-json", "-o"])
            .arg(out)
            .arg(&input)
            .env("TERM", "xterm")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .unwrap()
    };

    let (master, slave) = openpty();
    let on_tty = dir.path().join("tty.json");
    let mut child = export(&on_tty, Stdio::from(slave));
    // Read the terminal until the child has gone (EIO once no slave is open), on a thread so
    // that a full terminal buffer cannot stall the child.
    let reader = std::thread::spawn(move || {
        let mut f = std::fs::File::from(master);
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        while let Ok(n) = f.read(&mut buf) {
            if n == 0 {
                break;
            }
            seen.extend_from_slice(&buf[..n]);
        }
        String::from_utf8_lossy(&seen).into_owned()
    });
    assert!(child.wait().unwrap().success());
    let shown = reader.join().unwrap();
    assert!(
        shown.contains("reading"),
        "no reading bar on the terminal: {shown:?}"
    );
    assert!(
        shown.contains("exporting 1 file(s)"),
        "no spinner on the terminal: {shown:?}"
    );

    let piped = dir.path().join("pipe.json");
    let o = export(&piped, Stdio::piped()).wait_with_output().unwrap();
    assert!(o.status.success());
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(
        std::fs::read(&on_tty).unwrap(),
        std::fs::read(&piped).unwrap()
    );
}
