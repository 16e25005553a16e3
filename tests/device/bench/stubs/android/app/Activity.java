// Compile-only stub of the SDK class (see Instrumentation.java).
package android.app;

public class Activity {
    public static final int RESULT_CANCELED = 0;
    public static final int RESULT_OK = -1;
}
