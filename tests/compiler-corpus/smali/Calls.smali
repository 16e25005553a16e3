# Hubble compiler corpus, part (a): call trees through invoke-static, each public
# method with a Java twin in ../java/Calls.java. The harness calls the public methods; the
# private ones run through its invoke dispatch (proving/art-compile/src/dispatch.rs).
.class public LCalls;
.super Ljava/lang/Object;

# Recursion: fib(n) for n in [0, 12].
.method public static fib(I)I
    .registers 2
    const v0, 0x7fffffff
    and-int/2addr v0, p0
    rem-int/lit8 v0, v0, 13
    invoke-static {v0}, LCalls;->fibRec(I)I
    move-result v0
    return v0
.end method

.method private static fibRec(I)I
    .registers 3
    const/4 v0, 2
    if-ge p0, v0, :rec
    return p0
    :rec
    add-int/lit8 v0, p0, -1
    invoke-static {v0}, LCalls;->fibRec(I)I
    move-result v0
    add-int/lit8 v1, p0, -2
    invoke-static {v1}, LCalls;->fibRec(I)I
    move-result v1
    add-int/2addr v0, v1
    return v0
.end method

# Ackermann, bounded: m and n in [0, 3].
.method public static ackermann(II)I
    .registers 4
    const v0, 0x7fffffff
    and-int v1, p0, v0
    rem-int/lit8 v1, v1, 4
    and-int/2addr v0, p1
    rem-int/lit8 v0, v0, 4
    invoke-static {v1, v0}, LCalls;->ack(II)I
    move-result v0
    return v0
.end method

.method private static ack(II)I
    .registers 4
    if-nez p0, :m_pos
    add-int/lit8 v0, p1, 1
    return v0
    :m_pos
    add-int/lit8 v0, p0, -1
    if-nez p1, :n_pos
    const/4 v1, 1
    invoke-static {v0, v1}, LCalls;->ack(II)I
    move-result v0
    return v0
    :n_pos
    add-int/lit8 v1, p1, -1
    invoke-static {p0, v1}, LCalls;->ack(II)I
    move-result v1
    invoke-static {v0, v1}, LCalls;->ack(II)I
    move-result v0
    return v0
.end method

# A call tree seven frames deep, mixed argument types.
.method public static tree(IJFD)J
    .registers 14
    invoke-static/range {p0 .. p5}, LCalls;->t1(IJFD)J
    move-result-wide v0
    xor-int/lit16 v2, p0, 0x55
    const-wide/16 v6, 3
    add-long v3, p1, v6
    const/high16 v5, 0x3f000000
    mul-float/2addr v5, p3
    const-wide/high16 v6, 0x3ff0000000000000L
    sub-double v6, p4, v6
    invoke-static/range {v2 .. v7}, LCalls;->t1(IJFD)J
    move-result-wide v2
    const-wide/16 v4, 31
    mul-long/2addr v0, v4
    add-long/2addr v0, v2
    return-wide v0
.end method

.method private static t1(IJFD)J
    .registers 14
    add-int/lit8 v2, p0, 1
    int-to-long v6, p0
    xor-long v3, p1, v6
    const/high16 v5, 0x3f800000
    add-float/2addr v5, p3
    move-wide v6, p4
    invoke-static/range {v2 .. v7}, LCalls;->t2(IJFD)J
    move-result-wide v0
    add-int/lit8 v2, p0, -1
    move-wide v3, p1
    move v5, p3
    const-wide/high16 v6, 0x4000000000000000L
    mul-double/2addr v6, p4
    invoke-static/range {v2 .. v7}, LCalls;->t2(IJFD)J
    move-result-wide v2
    add-long/2addr v0, v2
    return-wide v0
.end method

.method private static t2(IJFD)J
    .registers 14
    move v0, p0
    long-to-int v1, p1
    const/16 v4, 32
    ushr-long v2, p1, v4
    long-to-int v2, v2
    move v3, p3
    invoke-static {v0, v1, v2, v3}, LCalls;->t3(IIIF)I
    move-result v0
    move-wide v2, p4
    move v4, p3
    move v5, p0
    invoke-static {v2, v3, v4, v5}, LCalls;->mix(DFI)D
    move-result-wide v2
    double-to-long v2, v2
    int-to-long v4, v0
    add-long v4, p1, v4
    add-long/2addr v2, v4
    return-wide v2
.end method

.method private static mix(DFI)D
    .registers 8
    const-wide/high16 v0, 0x3fd0000000000000L
    mul-double/2addr v0, p0
    float-to-double v2, p2
    add-double/2addr v0, v2
    int-to-double v2, p3
    sub-double/2addr v0, v2
    return-wide v0
.end method

.method private static t3(IIIF)I
    .registers 10
    xor-int v4, p0, p2
    move v0, p0
    move v1, p1
    move v2, p2
    move v3, p3
    invoke-static {v0, v1, v2, v3, v4}, LCalls;->t4(IIIFI)I
    move-result v5
    mul-int/lit8 v5, v5, 3
    move v0, p1
    move v1, p0
    neg-float v3, p3
    const/4 v4, 7
    invoke-static {v0, v1, v2, v3, v4}, LCalls;->t4(IIIFI)I
    move-result v0
    add-int/2addr v0, v5
    return v0
.end method

.method private static t4(IIIFI)I
    .registers 11
    add-int v0, p0, p1
    int-to-long v1, p2
    int-to-long v4, p4
    mul-long/2addr v1, v4
    move v3, p3
    invoke-static {v0, v1, v2, v3}, LCalls;->t5(IJF)I
    move-result v0
    sub-int/2addr v0, p4
    return v0
.end method

.method private static t5(IJF)I
    .registers 8
    invoke-static {p0}, LCalls;->nop(I)V
    float-to-int v3, p3
    move v0, p0
    move-wide v1, p1
    invoke-static {v0, v1, v2, v3}, LCalls;->t6(IJI)I
    move-result v0
    xor-int/2addr v0, v3
    return v0
.end method

.method private static t6(IJI)I
    .registers 8
    mul-int/lit8 v0, p0, 17
    const/4 v3, 7
    ushr-long v1, p1, v3
    long-to-int v1, v1
    add-int/2addr v0, v1
    shl-int/lit8 v1, p3, 2
    add-int/2addr v0, v1
    return v0
.end method

.method private static nop(I)V
    .registers 1
    return-void
.end method

# Calls in a loop: the sum of i * i for i < (n & 31).
.method public static sumSquares(I)I
    .registers 5
    and-int/lit8 v2, p0, 31
    const/4 v0, 0
    const/4 v1, 0
    :loop
    if-ge v1, v2, :done
    invoke-static {v1}, LCalls;->sq(I)I
    move-result v3
    add-int/2addr v0, v3
    add-int/lit8 v1, v1, 1
    goto :loop
    :done
    return v0
.end method

.method private static sq(I)I
    .registers 2
    mul-int v0, p0, p0
    return v0
.end method

# An exception three frames down (div2 divides by b & 3).
.method public static divDeep(II)I
    .registers 3
    invoke-static {p0, p1}, LCalls;->div1(II)I
    move-result v0
    add-int/lit8 v0, v0, 1
    return v0
.end method

.method private static div1(II)I
    .registers 3
    and-int/lit8 v0, p1, 3
    invoke-static {p0, v0}, LCalls;->div2(II)I
    move-result v0
    mul-int/lit8 v0, v0, 2
    return v0
.end method

.method private static div2(II)I
    .registers 3
    div-int v0, p0, p1
    return v0
.end method

# Exceptions caught in compiled code: handlers are found from the dex try
# items and ART's catch stack maps, catch phis filled from the throwing call's stack map
# (proving/art-compile/src/catch.rs). No move-exception: the handlers do not read the
# exception, as d8 emits them when the Java code does not use it.

# Caught in the same frame; x = a * 3 lives into the handler.
.method public static catchHere(II)I
    .registers 4
    mul-int/lit8 v0, p0, 3
    and-int/lit8 v1, p1, 3
    :try_start
    div-int/2addr v0, v1
    :try_end
    .catch Ljava/lang/ArithmeticException; {:try_start .. :try_end} :handler
    return v0
    :handler
    add-int/lit8 v0, v0, 100
    return v0
.end method

# Two throwing instructions in one try: the handler's x is a catch phi (a, or a / (b & 3)).
.method public static catchPhi(II)I
    .registers 6
    move v0, p0
    and-int/lit8 v1, p1, 3
    shr-int/lit8 v2, p1, 2
    and-int/lit8 v2, v2, 3
    :try_start
    div-int v0, p0, v1
    const/16 v3, 1000
    div-int/2addr v3, v2
    add-int/2addr v0, v3
    :try_end
    .catch Ljava/lang/ArithmeticException; {:try_start .. :try_end} :handler
    return v0
    :handler
    add-int/lit8 v0, v0, -7
    return v0
.end method

# Caught two frames up: div1 -> div2 throws a quarter of the time; y lives into the handler.
.method public static catchUp(II)I
    .registers 4
    xor-int/lit8 v0, p0, 0x55
    :try_start
    invoke-static {p0, p1}, LCalls;->div1(II)I
    move-result v1
    :try_end
    .catch Ljava/lang/ArithmeticException; {:try_start .. :try_end} :handler
    add-int/2addr v0, v1
    return v0
    :handler
    mul-int/lit8 v0, v0, 2
    return v0
.end method

# A handler of a superclass (ArithmeticException extends RuntimeException).
.method public static catchSuper(II)I
    .registers 3
    and-int/lit8 v0, p1, 1
    :try_start
    rem-int v0, p0, v0
    :try_end
    .catch Ljava/lang/RuntimeException; {:try_start .. :try_end} :handler
    return v0
    :handler
    const/16 v0, -77
    return v0
.end method

# Handlers searched in order: NullPointerException does not match, Exception does.
.method public static catchMiss(II)I
    .registers 3
    and-int/lit8 v0, p1, 1
    :try_start
    div-int v0, p0, v0
    :try_end
    .catch Ljava/lang/NullPointerException; {:try_start .. :try_end} :npe
    .catch Ljava/lang/Exception; {:try_start .. :try_end} :ex
    return v0
    :npe
    const/4 v0, -2
    return v0
    :ex
    const/4 v0, -3
    return v0
.end method

# No handler matches: the exception leaves the method (the unwinder writes its exit).
.method public static catchWrong(II)I
    .registers 3
    and-int/lit8 v0, p1, 1
    :try_start
    div-int v0, p0, v0
    :try_end
    .catch Ljava/lang/NullPointerException; {:try_start .. :try_end} :npe
    return v0
    :npe
    const/4 v0, -2
    return v0
.end method
