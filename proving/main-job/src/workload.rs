//! The call stream: an app cold start, as the UI thread's trace points see it.
//!
//! Shape (Hubble §8.3: a cold start is hundreds of thousands of method invocations):
//! `ActivityThread.main` → `Looper.loop` → bind application (class loading with parent
//! delegation and `ClassNotFoundException`s unwinding several frames, a dependency-injection
//! graph built recursively, a JSON config parsed by recursive descent, a `NumberFormatException`
//! caught three frames up, binder calls and `System.loadLibrary` in native code) → launch the
//! activity (layout inflation of a nested view tree, recursively) → frames (`Choreographer.doFrame`:
//! measure / layout / draw recursing over the view tree, RecyclerView binding feed items) → one
//! janky frame (case study 1 of the paper: the UI thread busy in the app's own long-running
//! methods while binding a list) → more frames → idle in `MessageQueue.nativePollOnce`.
//!
//! `ArtMethod*` values come from a synthetic class table: framework methods in the boot image
//! (below 4 GiB, one-slot entries), app methods in the app's `LinearAlloc` (above 4 GiB, two-slot
//! entries), as on a 64-bit device.
//!
//! The stream is three things: the op array the guest driver loop runs (`ops`), the native calls
//! the host performs between chunks (`natives`), and the frames the jank detector watches.

use std::collections::HashMap;

/// One guest op (a little-endian u64 in the op array):
/// * `ptr` (≥ 4, 8-byte aligned): method entry with this `ArtMethod*` (in x0);
/// * `0`: method exit (normal return or one frame of an exception unwind);
/// * `(n << 1) | 1`: `n` iterations of a busy loop (the method's own work; no trace point).
pub type Op = u64;

/// Encodes `n` ≥ 1 iterations of work.
pub fn work_op(n: u64) -> Op {
    (n.max(1) << 1) | 1
}

/// Whether an op is a trace point, and which.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpKind {
    /// Method entry.
    Entry(u64),
    /// Method exit.
    Exit,
    /// Work (no trace point).
    Work(u64),
}

/// Decodes an op.
pub fn op_kind(op: Op) -> OpKind {
    if op & 1 == 1 {
        OpKind::Work(op >> 1)
    } else if op == 0 {
        OpKind::Exit
    } else {
        OpKind::Entry(op)
    }
}

/// A native call the host performs between two guest chunks: before op `at`, the thread leaves
/// runnable for `ms` milliseconds (JNI, binder, sleep). `idle` marks the final idle wait in
/// `nativePollOnce`, which lasts until the host says so.
#[derive(Clone, Debug)]
pub struct Native {
    /// The op before which the call happens.
    pub at: usize,
    /// How long (ms).
    pub ms: u64,
    /// The final idle wait.
    pub idle: bool,
    /// What the native method is.
    pub what: &'static str,
}

/// A frame the jank detector watches (`Choreographer.doFrame`, ops `start..end`).
#[derive(Clone, Debug)]
pub struct Frame {
    /// First op of the frame.
    pub start: usize,
    /// One past its last op.
    pub end: usize,
    /// Frame number.
    pub number: usize,
    /// Whether the generator made it slow on purpose.
    pub janky: bool,
}

/// The synthetic class table: `ArtMethod*` → pretty name (what `ArtMethod::PrettyMethod` says).
#[derive(Clone, Debug, Default)]
pub struct ClassTable {
    names: HashMap<u64, String>,
    by_name: HashMap<String, u64>,
    boot_next: u64,
    app_next: u64,
}

/// First boot-image `ArtMethod` (below 4 GiB, like a boot image mapped at 0x7000_0000).
pub const BOOT_BASE: u64 = 0x7000_1000;
/// First app `ArtMethod` (the app's `LinearAlloc`, above 4 GiB).
pub const APP_BASE: u64 = 0x7b_4c20_0000;
/// `sizeof(ArtMethod)` on a 64-bit device.
pub const ART_METHOD_SIZE: u64 = 32;

impl ClassTable {
    fn new() -> ClassTable {
        ClassTable {
            boot_next: BOOT_BASE,
            app_next: APP_BASE,
            ..ClassTable::default()
        }
    }

    /// The pointer of a method (allocated on first use: framework names go to the boot image,
    /// app names — `com.example.` — to the app's LinearAlloc).
    pub fn method(&mut self, pretty: &str) -> u64 {
        if let Some(&p) = self.by_name.get(pretty) {
            return p;
        }
        let app = pretty
            .split(' ')
            .nth(1)
            .unwrap_or(pretty)
            .starts_with("com.example.");
        let next = if app {
            &mut self.app_next
        } else {
            &mut self.boot_next
        };
        let p = *next;
        *next += ART_METHOD_SIZE;
        self.names.insert(p, pretty.to_string());
        self.by_name.insert(pretty.to_string(), p);
        p
    }

    /// The pretty name of a pointer.
    pub fn name(&self, method: u64) -> Option<&str> {
        self.names.get(&method).map(String::as_str)
    }

    /// Number of methods.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Methods below / above 4 GiB.
    pub fn split_4g(&self) -> (usize, usize) {
        let low = self.names.keys().filter(|p| **p >> 32 == 0).count();
        (low, self.names.len() - low)
    }
}

/// The generated stream.
pub struct Workload {
    /// Guest ops.
    pub ops: Vec<Op>,
    /// Native calls, in op order.
    pub natives: Vec<Native>,
    /// Frames, in op order.
    pub frames: Vec<Frame>,
    /// Names of every pointer.
    pub table: ClassTable,
    /// Method invocations (entries).
    pub invocations: usize,
    /// Exceptions thrown (each unwinding ≥ 2 frames).
    pub exceptions: usize,
    /// Deepest stack reached.
    pub max_depth: usize,
    /// Total work-loop iterations.
    pub work_iterations: u64,
}

/// Parameters of the stream.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    /// Target number of method invocations (the generator stops adding frames past it).
    pub invocations: usize,
    /// Work-loop iterations per "unit" of method self time (calibrated to the emulator's speed
    /// so that one unit is ~1 µs).
    pub iters_per_us: u64,
    /// Self time of the janky frame's hot methods, in total (µs).
    pub jank_us: u64,
    /// Seed of the PRNG.
    pub seed: u64,
    /// A regression to plant: every call of this method does this much more self time (µs).
    /// The fleet generator plants one in one app version for the fleet queries to find.
    pub slow: Option<(&'static str, u64)>,
}

use hubble_testkit::Rng;

struct Gen {
    w: Workload,
    rng: Rng,
    depth: usize,
    shape: Shape,
}

impl Gen {
    fn enter(&mut self, pretty: &str) {
        let p = self.w.table.method(pretty);
        self.w.ops.push(p);
        self.w.invocations += 1;
        self.depth += 1;
        self.w.max_depth = self.w.max_depth.max(self.depth);
    }

    fn exit(&mut self) {
        assert!(self.depth > 0, "unbalanced stream");
        self.w.ops.push(0);
        self.depth -= 1;
    }

    /// Self time in µs (converted to loop iterations).
    fn work_us(&mut self, us: u64) {
        let n = us * self.shape.iters_per_us;
        if n > 0 {
            self.w.ops.push(work_op(n));
            self.w.work_iterations += n;
        }
    }

    /// A little self time: most methods are short.
    fn jitter(&mut self) {
        if self.rng.below(4) == 0 {
            let us = self.rng.below(3);
            self.work_us(us);
        }
    }

    fn call(&mut self, pretty: &str, body: impl FnOnce(&mut Gen)) {
        self.enter(pretty);
        self.jitter();
        if let Some((slow, us)) = self.shape.slow {
            if slow == pretty {
                self.work_us(us);
            }
        }
        body(self);
        self.exit();
    }

    fn leaf(&mut self, pretty: &str) {
        self.call(pretty, |_| {});
    }

    fn leaf_us(&mut self, pretty: &str, us: u64) {
        self.call(pretty, |g| g.work_us(us));
    }

    /// A native method: its entry and exit trace points (the JNI stub's), and in between the
    /// thread out of runnable for `ms` (the host sleeps between two guest chunks).
    fn native(&mut self, pretty: &str, ms: u64, what: &'static str) {
        self.enter(pretty);
        let at = self.w.ops.len();
        self.w.natives.push(Native {
            at,
            ms,
            idle: false,
            what,
        });
        self.exit();
    }

    /// `chain[0]` calls `chain[1]` ... calls `chain[k]`, which throws: the exception's
    /// constructor runs, then the unwinder pops `chain[k]..chain[1]` (one exit trace point per
    /// frame, no code in between) and `chain[0]`'s catch block runs `handler`.
    fn throw_through(&mut self, chain: &[&str], exception: &str, handler: impl FnOnce(&mut Gen)) {
        assert!(chain.len() >= 3, "an unwind of at least two frames");
        for m in chain {
            self.enter(m);
            self.jitter();
        }
        self.call(&format!("void {exception}.<init>(java.lang.String)"), |g| {
            g.call("void java.lang.Throwable.<init>(java.lang.String)", |g| {
                g.call(
                    "java.lang.Throwable java.lang.Throwable.fillInStackTrace()",
                    |g| {
                        g.leaf_us(
                            "java.lang.Object java.lang.Throwable.nativeFillInStackTrace()",
                            3,
                        )
                    },
                );
            });
        });
        for _ in 1..chain.len() {
            self.exit();
        }
        self.w.exceptions += 1;
        handler(self);
        self.exit();
    }

    // ---------------------------------------------------------------- the app

    fn load_class(&mut self, name: &str, found_in_boot: bool) {
        // PathClassLoader delegates to its parent first; BootClassLoader throws
        // ClassNotFoundException for an app class, caught in ClassLoader.loadClass, which
        // then looks in the dex files.
        if found_in_boot {
            self.call(
                "java.lang.Class java.lang.ClassLoader.loadClass(java.lang.String, boolean)",
                |g| {
                    g.leaf("java.lang.Class java.lang.ClassLoader.findLoadedClass(java.lang.String)");
                    g.call(
                        "java.lang.Class java.lang.BootClassLoader.loadClass(java.lang.String, boolean)",
                        |g| g.leaf_us("java.lang.Class java.lang.Class.classForName(java.lang.String, boolean, java.lang.ClassLoader)", 4),
                    );
                },
            );
            return;
        }
        self.throw_through(
            &[
                "java.lang.Class java.lang.ClassLoader.loadClass(java.lang.String, boolean)",
                "java.lang.Class java.lang.BootClassLoader.loadClass(java.lang.String, boolean)",
                "java.lang.Class java.lang.BootClassLoader.findClass(java.lang.String)",
                "java.lang.Class java.lang.Class.classForName(java.lang.String, boolean, java.lang.ClassLoader)",
            ],
            "java.lang.ClassNotFoundException",
            |g| {
                g.call(
                    "java.lang.Class dalvik.system.BaseDexClassLoader.findClass(java.lang.String)",
                    |g| {
                        g.call(
                            "java.lang.Class dalvik.system.DexPathList.findClass(java.lang.String, java.util.List)",
                            |g| {
                                g.call("java.lang.Class dalvik.system.DexPathList$Element.findClass(java.lang.String, java.lang.ClassLoader, java.util.List)", |g| {
                                    g.leaf_us("java.lang.Class dalvik.system.DexFile.defineClassNative(java.lang.String, java.lang.ClassLoader, java.lang.Object, dalvik.system.DexFile)", 12);
                                });
                            },
                        );
                    },
                );
            },
        );
        let class = self.rng.below(400);
        self.call(&format!("void {name}.Class{class}.<clinit>()"), |g| {
            g.leaf(&format!("void {name}.Class{class}.<init>()"));
        });
    }

    /// A Dagger-style component graph: providers call providers, recursively.
    fn provide(&mut self, depth: u32, i: u64) {
        let k = i % 211;
        let name = format!(
            "java.lang.Object com.example.app.di.Module{}_Provide{k}Factory.get()",
            k % 17
        );
        self.call(&name, |g| {
            if depth > 0 {
                let fanout = 1 + g.rng.below(3);
                for j in 0..fanout {
                    g.provide(depth - 1, i * 3 + j + 1);
                }
            }
            if g.rng.below(5) == 0 {
                let boot = g.rng.below(3) == 0;
                g.load_class("com.example.app.di", boot);
            }
            g.leaf("void dagger.internal.Preconditions.checkNotNull(java.lang.Object)");
        });
    }

    /// Recursive-descent JSON: readObject ↔ readValue ↔ readArray.
    fn json_value(&mut self, depth: u32) {
        self.call(
            "java.lang.Object com.google.gson.internal.bind.ObjectTypeAdapter.read(com.google.gson.stream.JsonReader)",
            |g| {
                g.leaf("com.google.gson.stream.JsonToken com.google.gson.stream.JsonReader.peek()");
                if depth == 0 || g.rng.below(3) == 0 {
                    g.call("java.lang.String com.google.gson.stream.JsonReader.nextString()", |g| {
                        g.leaf("int com.google.gson.stream.JsonReader.doPeek()");
                        g.leaf_us("java.lang.String com.google.gson.stream.JsonReader.nextQuotedValue(char)", 1);
                    });
                    return;
                }
                let object = g.rng.below(2) == 0;
                let (begin, end) = if object {
                    ("void com.google.gson.stream.JsonReader.beginObject()", "void com.google.gson.stream.JsonReader.endObject()")
                } else {
                    ("void com.google.gson.stream.JsonReader.beginArray()", "void com.google.gson.stream.JsonReader.endArray()")
                };
                g.leaf(begin);
                let n = 1 + g.rng.below(4);
                for _ in 0..n {
                    if object {
                        g.leaf("java.lang.String com.google.gson.stream.JsonReader.nextName()");
                    }
                    g.leaf("boolean com.google.gson.stream.JsonReader.hasNext()");
                    g.json_value(depth - 1);
                }
                g.leaf(end);
            },
        );
    }

    fn parse_config_int(&mut self, bad: bool) {
        if !bad {
            self.call(
                "int com.example.app.config.RemoteConfig.getInt(java.lang.String, int)",
                |g| {
                    g.leaf("int java.lang.Integer.parseInt(java.lang.String)");
                },
            );
            return;
        }
        // A malformed value: NumberFormatException thrown in parseInt, caught three frames up.
        self.throw_through(
            &[
                "int com.example.app.config.RemoteConfig.getInt(java.lang.String, int)",
                "int com.example.app.config.RemoteConfig.parseValue(java.lang.String)",
                "int java.lang.Integer.parseInt(java.lang.String)",
                "int java.lang.Integer.parseInt(java.lang.String, int)",
            ],
            "java.lang.NumberFormatException",
            |g| {
                g.leaf_us("int android.util.Log.w(java.lang.String, java.lang.String, java.lang.Throwable)", 6);
            },
        );
    }

    /// LayoutInflater.inflate over a nested view tree.
    fn inflate(&mut self, depth: u32) {
        self.call("android.view.View android.view.LayoutInflater.createViewFromTag(android.view.View, java.lang.String, android.content.Context, android.util.AttributeSet, boolean)", |g| {
            g.call("android.view.View android.view.LayoutInflater.createView(android.content.Context, java.lang.String, java.lang.String, android.util.AttributeSet)", |g| {
                let view = match g.rng.below(4) {
                    0 => "void android.widget.TextView.<init>(android.content.Context, android.util.AttributeSet, int, int)",
                    1 => "void android.widget.ImageView.<init>(android.content.Context, android.util.AttributeSet, int, int)",
                    2 => "void androidx.constraintlayout.widget.ConstraintLayout.<init>(android.content.Context, android.util.AttributeSet)",
                    _ => "void android.widget.FrameLayout.<init>(android.content.Context, android.util.AttributeSet, int, int)",
                };
                g.call(view, |g| {
                    g.call("void android.view.View.<init>(android.content.Context, android.util.AttributeSet, int, int)", |g| {
                        g.leaf_us("android.content.res.TypedArray android.content.res.Resources$Theme.obtainStyledAttributes(android.util.AttributeSet, int[], int, int)", 3);
                        g.leaf("void android.content.res.TypedArray.recycle()");
                    });
                });
            });
        });
        if depth > 0 {
            self.call("void android.view.LayoutInflater.rInflate(org.xmlpull.v1.XmlPullParser, android.view.View, android.content.Context, android.util.AttributeSet, boolean)", |g| {
                let n = 1 + g.rng.below(3);
                for _ in 0..n {
                    g.leaf("int android.content.res.XmlBlock$Parser.next()");
                    g.inflate(depth - 1);
                    g.leaf("void android.view.ViewGroup.addView(android.view.View, int, android.view.ViewGroup$LayoutParams)");
                }
            });
        }
    }

    /// View.measure / layout / draw over the tree (recursion through ViewGroup).
    fn traverse(&mut self, phase: usize, depth: u32) {
        let (outer, inner) = [
            (
                "void android.view.View.measure(int, int)",
                "void android.view.ViewGroup.onMeasure(int, int)",
            ),
            (
                "void android.view.View.layout(int, int, int, int)",
                "void android.view.ViewGroup.onLayout(boolean, int, int, int, int)",
            ),
            (
                "void android.view.View.draw(android.graphics.Canvas)",
                "void android.view.ViewGroup.dispatchDraw(android.graphics.Canvas)",
            ),
        ][phase];
        self.call(outer, |g| {
            if depth == 0 {
                let leaf = [
                    "void android.widget.TextView.onMeasure(int, int)",
                    "void android.widget.TextView.onLayout(boolean, int, int, int, int)",
                    "void android.widget.TextView.onDraw(android.graphics.Canvas)",
                ][phase];
                g.call(leaf, |g| {
                    if phase != 1 {
                        g.leaf_us("int android.text.StaticLayout.generate(android.text.StaticLayout$Builder, boolean, boolean)", 2);
                    }
                });
                return;
            }
            g.call(inner, |g| {
                let n = 1 + g.rng.below(3);
                for _ in 0..n {
                    g.traverse(phase, depth - 1);
                }
            });
        });
    }

    fn bind_item(&mut self, position: u64, heavy_us: u64) {
        self.call("void com.example.app.feed.FeedAdapter.onBindViewHolder(androidx.recyclerview.widget.RecyclerView$ViewHolder, int)", |g| {
            g.call("void com.example.app.feed.PostViewHolder.bind(com.example.app.model.Post)", |g| {
                g.call("java.lang.CharSequence com.example.app.text.MessageFormatter.format(java.lang.String)", |g| {
                    let spans = 2 + position % 4;
                    for _ in 0..spans {
                        g.call("java.lang.CharSequence com.example.app.text.EmojiProcessor.process(java.lang.CharSequence, int, int)", |g| {
                            g.leaf("int java.lang.String.codePointAt(int)");
                            g.leaf("boolean com.example.app.text.EmojiTrie.match(int[], int)");
                            if heavy_us > 0 {
                                // The jank: the app's own code re-measures every span.
                                g.call("float com.example.app.text.SpanMeasurer.measure(java.lang.CharSequence)", |g| {
                                    g.work_us(heavy_us);
                                    g.leaf("float android.graphics.Paint.measureText(java.lang.CharSequence, int, int)");
                                });
                            }
                        });
                    }
                });
                g.call("void com.example.app.image.ImageLoader.load(java.lang.String, android.widget.ImageView)", |g| {
                    g.leaf("java.lang.Object android.util.LruCache.get(java.lang.Object)");
                    g.leaf("boolean android.os.Handler.post(java.lang.Runnable)");
                });
            });
        });
    }

    fn frame(&mut self, number: usize, janky: bool) {
        let start = self.w.ops.len();
        self.call("void android.view.Choreographer.doFrame(long, int, android.view.DisplayEventReceiver$VsyncEventData)", |g| {
            g.call("void android.view.Choreographer.doCallbacks(int, android.view.Choreographer$FrameData, long)", |g| {
                g.call("void android.view.ViewRootImpl$TraversalRunnable.run()", |g| {
                    g.call("void android.view.ViewRootImpl.performTraversals()", |g| {
                        g.call("void androidx.recyclerview.widget.RecyclerView.onLayout(boolean, int, int, int, int)", |g| {
                            let items = if janky { 24 } else { 1 + g.rng.below(3) };
                            let per = if janky { g.shape.jank_us / (items * 4) } else { 0 };
                            for i in 0..items {
                                g.call("androidx.recyclerview.widget.RecyclerView$ViewHolder androidx.recyclerview.widget.RecyclerView$Recycler.tryGetViewHolderForPositionByDeadline(int, boolean, long)", |g| {
                                    g.bind_item(number as u64 * 31 + i, per);
                                });
                            }
                        });
                        for phase in 0..3 {
                            g.traverse(phase, 5);
                        }
                    });
                });
            });
        });
        let end = self.w.ops.len();
        self.w.frames.push(Frame {
            start,
            end,
            number,
            janky,
        });
    }

    fn bind_application(&mut self) {
        self.call("void android.app.ActivityThread.handleBindApplication(android.app.ActivityThread$AppBindData)", |g| {
            g.native("void java.lang.System.loadLibrary(java.lang.String)", 8, "System.loadLibrary (dlopen)");
            g.call("android.app.Application android.app.LoadedApk.makeApplication(boolean, android.app.Instrumentation)", |g| {
                for i in 0..40 {
                    g.load_class("com.example.app", i % 3 == 0);
                }
                g.leaf_us("android.app.Application android.app.Instrumentation.newApplication(java.lang.ClassLoader, java.lang.String, android.content.Context)", 20);
            });
            g.call("void com.example.app.App.onCreate()", |g| {
                g.call("com.example.app.di.AppComponent com.example.app.di.DaggerAppComponent.create()", |g| {
                    for i in 0..6 {
                        g.provide(6, i);
                    }
                });
                g.call("com.example.app.config.RemoteConfig com.example.app.config.RemoteConfig.load(android.content.Context)", |g| {
                    g.call("java.lang.Object com.google.gson.Gson.fromJson(java.io.Reader, java.lang.reflect.Type)", |g| {
                        for _ in 0..4 {
                            g.json_value(7);
                        }
                    });
                    for i in 0..12 {
                        g.parse_config_int(i % 4 == 1);
                    }
                });
                g.native("android.os.Parcel android.os.BinderProxy.transactNative(int, android.os.Parcel, android.os.Parcel, int)", 3, "binder: PackageManager.getPackageInfo");
            });
        });
    }

    fn launch_activity(&mut self) {
        self.call("android.app.Activity android.app.ActivityThread.performLaunchActivity(android.app.ActivityThread$ActivityClientRecord, android.content.Intent)", |g| {
            for i in 0..20 {
                g.load_class("com.example.app.ui", i % 4 == 0);
            }
            g.call("void com.example.app.ui.MainActivity.onCreate(android.os.Bundle)", |g| {
                g.call("void androidx.appcompat.app.AppCompatActivity.setContentView(int)", |g| {
                    g.call("android.view.View android.view.LayoutInflater.inflate(int, android.view.ViewGroup, boolean)", |g| {
                        g.inflate(6);
                    });
                });
                g.native("android.os.Parcel android.os.BinderProxy.transactNative(int, android.os.Parcel, android.os.Parcel, int)", 2, "binder: WindowManager.addToDisplay");
            });
        });
    }
}

/// Generates the stream.
pub fn generate(shape: Shape) -> Workload {
    let mut g = Gen {
        w: Workload {
            ops: Vec::new(),
            natives: Vec::new(),
            frames: Vec::new(),
            table: ClassTable::new(),
            invocations: 0,
            exceptions: 0,
            max_depth: 0,
            work_iterations: 0,
        },
        rng: Rng::new(shape.seed | 1),
        depth: 0,
        shape,
    };
    g.enter("void android.app.ActivityThread.main(java.lang.String[])");
    g.enter("void android.os.Looper.loop()");
    g.enter("boolean android.os.Looper.loopOnce(android.os.Looper, long, int)");
    g.call(
        "void android.os.Handler.dispatchMessage(android.os.Message)",
        |g| {
            g.call(
                "void android.app.ActivityThread$H.handleMessage(android.os.Message)",
                |g| {
                    g.bind_application();
                },
            );
        },
    );
    g.call(
        "void android.os.Handler.dispatchMessage(android.os.Message)",
        |g| {
            g.launch_activity();
        },
    );
    // Frames until the stream is long enough; the janky one at ~60 % of it.
    let mut number = 0;
    let mut jank_done = false;
    while g.w.invocations < shape.invocations || !jank_done {
        number += 1;
        let janky = !jank_done && g.w.invocations * 10 >= shape.invocations * 6;
        g.frame(number, janky);
        jank_done |= janky;
    }
    // Startup done: the UI thread idles in nativePollOnce (the final flush finds it there).
    g.call("android.os.Message android.os.MessageQueue.next()", |g| {
        g.enter("void android.os.MessageQueue.nativePollOnce(long, int)");
        let at = g.w.ops.len();
        g.w.natives.push(Native {
            at,
            ms: 0,
            idle: true,
            what: "MessageQueue.nativePollOnce (idle)",
        });
        g.exit();
    });
    g.exit(); // loopOnce
    g.exit(); // loop
    g.exit(); // main
    assert_eq!(g.depth, 0);
    g.w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_is_balanced_and_has_both_pointer_widths() {
        let w = generate(Shape {
            invocations: 20_000,
            iters_per_us: 1,
            jank_us: 1000,
            seed: 7,
            slow: None,
        });
        let mut depth = 0i64;
        for op in &w.ops {
            match op_kind(*op) {
                OpKind::Entry(p) => {
                    assert!(w.table.name(p).is_some());
                    depth += 1;
                }
                OpKind::Exit => depth -= 1,
                OpKind::Work(n) => assert!(n >= 1),
            }
            assert!(depth >= 0);
        }
        assert_eq!(depth, 0);
        let (low, high) = w.table.split_4g();
        assert!(low > 50 && high > 20, "{low} {high}");
        assert!(w.exceptions > 10);
        assert_eq!(w.frames.iter().filter(|f| f.janky).count(), 1);
        assert!(w.invocations >= 20_000);
        assert!(w.natives.last().unwrap().idle);
    }
}
