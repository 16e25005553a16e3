/*
 * Runs HubbleBench inside an app process, so the per-package knobs of docs/architecture.md
 * (debug.hubble.packages, persist.hubble.consent) apply to it:
 *
 *   adb shell am instrument -w -e tracing on -e work 0,1,10,100,1000 \
 *       dev.hubble.bench/.BenchInstrumentation
 *
 * Every -e key is passed to HubbleBench as --key value. The RESULT lines come back in the
 * "stream" entry of the final bundle, which `am instrument -w` prints as is.
 */
package dev.hubble.bench;

import android.app.Activity;
import android.app.Instrumentation;
import android.os.Bundle;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

public final class BenchInstrumentation extends Instrumentation {
    private Bundle arguments;

    @Override
    public void onCreate(Bundle arguments) {
        this.arguments = arguments;
        start();
    }

    @Override
    public void onStart() {
        List<String> args = new ArrayList<>();
        if (arguments != null) {
            for (String key : arguments.keySet()) {
                args.add("--" + key);
                args.add(arguments.getString(key));
            }
        }
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        Bundle result = new Bundle();
        int code = Activity.RESULT_OK;
        try (PrintStream out = new PrintStream(buf, true)) {
            HubbleBench.fromArgs(args.toArray(new String[0])).run(out);
        } catch (RuntimeException e) {
            code = Activity.RESULT_CANCELED;
            buf.reset();
            new PrintStream(buf, true).println("ERROR " + e);
        }
        result.putString("stream", buf.toString());
        finish(code, result);
    }
}
