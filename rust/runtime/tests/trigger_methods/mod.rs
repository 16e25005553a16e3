//! What the duration-trigger tests share (`triggers.rs`, ring mode; `pool_triggers.rs`, many-
//! thread mode): a manual clock at 1 GHz and the methods the fake ART names.

use std::time::Duration;

use hubble_runtime::triggers::Fired;
use hubble_testkit::runtime::FakeArt;

pub const MS: u64 = 1_000_000;
/// Timer value of "time 0" of a test (non-zero: 0 means the real clock in FakeArt).
pub const T0: u64 = 7_000_000 * MS;
pub const DO_FRAME: u64 = 0x1000;
/// Above 4 GiB: two-slot entries.
pub const BIND: u64 = 0x7f12_0000_0040;
pub const OTHER: u64 = 0x2000;

pub const JANK: &str = "android.view.Choreographer.doFrame>32ms=jank";

/// A fake ART that names [`DO_FRAME`], [`BIND`] and [`OTHER`], its timer at [`T0`].
pub fn art() -> FakeArt {
    let art = FakeArt::default();
    {
        let mut names = art.names.lock().unwrap();
        names.insert(
            DO_FRAME,
            "void android.view.Choreographer.doFrame(long, int)".into(),
        );
        names.insert(
            BIND,
            "void android.app.ActivityThread.handleBindApplication(android.app.ActivityThread$AppBindData)"
                .into(),
        );
        names.insert(OTHER, "void com.example.Feed.bind(int)".into());
    }
    art.set_timer(T0);
    art
}

/// The only firing in `fired`, which ran `ms` and had returned (`exited`) or not.
pub fn one_firing(fired: &[Fired], exited: bool, ms: u64) -> &Fired {
    assert_eq!(fired.len(), 1, "{fired:?}");
    assert_eq!(fired[0].exited, exited, "{fired:?}");
    assert_eq!(fired[0].duration, Duration::from_millis(ms));
    &fired[0]
}
