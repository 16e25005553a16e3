# Hubble compiler corpus, part (a): instance methods. Shape, Square, Cube and
# Scalable exercise instance fields of every type (iget/iput, built unresolved: the runtime's
# field entrypoints), and calls on objects: invoke-virtual (overridden in Square and Cube),
# invoke-direct (a private method), invoke-super (Square and Cube up their chain) and
# invoke-interface (Scalable). The harness lays out the receiver and dispatches every call
# (proving/art-compile/src/heap.rs, dispatch.rs); the Java twins are ../java/Shape.java,
# Square.java, Cube.java, Scalable.java, called by tests/corpus_objects.rs on the same receivers.
.class public LShape;
.super Ljava/lang/Object;

.field public sides:I
.field public scale:D
.field public hits:J
.field public self:LShape;

.method public constructor <init>()V
    .registers 1
    invoke-direct {p0}, Ljava/lang/Object;-><init>()V
    return-void
.end method

# Overridden by Square and Cube.
.method public kind()I
    .registers 2
    const/16 v0, 10
    return v0
.end method

# Overridden by Square: a double through a virtual call.
.method public area(D)D
    .registers 5
    iget-wide v0, p0, LShape;->scale:D
    mul-double/2addr v0, p1
    return-wide v0
.end method

# invoke-direct.
.method private helper(I)I
    .registers 5
    mul-int/lit8 v0, p1, 3
    iget-wide v1, p0, LShape;->hits:J
    long-to-int v1, v1
    add-int/2addr v0, v1
    return v0
.end method

# hits += n; return kind() * 100 + helper(n) + sides.
.method public describe(I)I
    .registers 6
    iget-wide v0, p0, LShape;->hits:J
    int-to-long v2, p1
    add-long/2addr v0, v2
    iput-wide v0, p0, LShape;->hits:J
    invoke-virtual {p0}, LShape;->kind()I
    move-result v0
    mul-int/lit8 v0, v0, 100
    invoke-direct {p0, p1}, LShape;->helper(I)I
    move-result v1
    add-int/2addr v0, v1
    iget v1, p0, LShape;->sides:I
    add-int/2addr v0, v1
    return v0
.end method

# area(s) on the receiver's class, plus scale.
.method public measure(D)D
    .registers 7
    invoke-virtual {p0, p1, p2}, LShape;->area(D)D
    move-result-wide v0
    iget-wide v2, p0, LShape;->scale:D
    add-double/2addr v0, v2
    return-wide v0
.end method

# A reference field: this stored, read back, compared, cleared.
.method public same()I
    .registers 3
    iput-object p0, p0, LShape;->self:LShape;
    iget-object v0, p0, LShape;->self:LShape;
    const/4 v1, 0
    iput-object v1, p0, LShape;->self:LShape;
    if-ne v0, p0, :differ
    const/4 v0, 1
    return v0
    :differ
    const/4 v0, 0
    return v0
.end method

# self is null: above 100, a call on it inside a try (the invoke trampoline throws
# NullPointerException, this frame's handler catches it); odd, the same call uncaught; even,
# a read of its field (the field entrypoint throws).
.method public nullSelf(I)I
    .registers 4
    iget-object v0, p0, LShape;->self:LShape;
    const/16 v1, 100
    if-gt p1, v1, :guarded
    and-int/lit8 v1, p1, 1
    if-eqz v1, :field
    invoke-virtual {v0}, LShape;->kind()I
    move-result v1
    return v1
    :field
    iget v1, v0, LShape;->sides:I
    return v1
    :guarded
    :try_start
    invoke-virtual {v0}, LShape;->kind()I
    move-result v1
    :try_end
    .catch Ljava/lang/NullPointerException; {:try_start .. :try_end} :handler
    return v1
    :handler
    const/4 v1, -1
    return v1
.end method

.method private divide(II)I
    .registers 4
    div-int v0, p1, p2
    return v0
.end method

# try/finally as javac compiles it: the finally's code on the normal path, and a catch-all
# handler that loads the exception (move-exception), runs it and rethrows (throw).
.method public rethrow(II)I
    .registers 6
    :try_start
    invoke-direct {p0, p1, p2}, LShape;->divide(II)I
    move-result v0
    :try_end
    .catchall {:try_start .. :try_end} :finally
    iget v1, p0, LShape;->sides:I
    add-int/lit8 v1, v1, 1
    iput v1, p0, LShape;->sides:I
    return v0
    :finally
    move-exception v2
    iget v1, p0, LShape;->sides:I
    add-int/lit8 v1, v1, 1
    iput v1, p0, LShape;->sides:I
    throw v2
.end method

# The rethrown exception caught one frame up, and read (move-exception).
.method public outer(II)I
    .registers 8
    :try_start
    invoke-virtual {p0, p1, p2}, LShape;->rethrow(II)I
    move-result v0
    :try_end
    .catch Ljava/lang/ArithmeticException; {:try_start .. :try_end} :handler
    return v0
    :handler
    move-exception v4
    iget-wide v0, p0, LShape;->hits:J
    const-wide/16 v2, 100
    add-long/2addr v0, v2
    iput-wide v0, p0, LShape;->hits:J
    if-eqz v4, :null
    const/4 v0, -1
    return v0
    :null
    const/4 v0, -2
    return v0
.end method
