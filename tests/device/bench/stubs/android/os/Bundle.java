// Compile-only stub of the SDK class (see ../app/Instrumentation.java).
package android.os;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

public final class Bundle {
    private final Map<String, String> map = new LinkedHashMap<>();
    public Set<String> keySet() { return map.keySet(); }
    public String getString(String key) { return map.get(key); }
    public void putString(String key, String value) { map.put(key, value); }
}
