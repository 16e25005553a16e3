// Compile-only stub of the SDK class (CI has no Android SDK). Never packaged: Android.bp builds
// tests/device/bench/src against sdk_version "current".
package android.app;

import android.os.Bundle;

public class Instrumentation {
    public void onCreate(Bundle arguments) {}
    public void start() {}
    public void onStart() {}
    public void finish(int resultCode, Bundle results) {}
}
