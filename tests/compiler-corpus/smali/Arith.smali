# Hubble compiler corpus, part (a): static methods on primitives, each with a Java
# twin in ../java/Arith.java that computes the same function on OpenJDK (the oracle).
.class public LArith;
.super Ljava/lang/Object;

# A loop with a suspend check: sum of (a + i * b) for i in [0, a & 1023).
.method public static sumLoop(II)I
    .registers 6
    and-int/lit16 v3, p0, 0x3ff
    const/4 v0, 0
    const/4 v1, 0
    :loop
    if-ge v1, v3, :done
    mul-int v2, v1, p1
    add-int/2addr v2, p0
    add-int/2addr v0, v2
    add-int/lit8 v1, v1, 1
    goto :loop
    :done
    return v0
.end method

# Several returns.
.method public static classify(I)I
    .registers 3
    if-gez p0, :nonneg
    const/4 v0, -1
    return v0
    :nonneg
    if-nez p0, :pos
    const/4 v0, 0
    return v0
    :pos
    const/16 v1, 1000
    if-le p0, v1, :small
    div-int/lit8 v0, p0, 7
    return v0
    :small
    mul-int/lit8 v0, p0, 3
    return v0
.end method

# Every return type.
.method public static retZ(II)Z
    .registers 3
    if-ge p0, p1, :f
    const/4 v0, 1
    return v0
    :f
    const/4 v0, 0
    return v0
.end method

.method public static retB(I)B
    .registers 2
    int-to-byte v0, p0
    return v0
.end method

.method public static retS(I)S
    .registers 2
    mul-int/lit8 v0, p0, 3
    int-to-short v0, v0
    return v0
.end method

.method public static retC(I)C
    .registers 2
    add-int/lit8 v0, p0, 1
    int-to-char v0, v0
    return v0
.end method

.method public static retJ(JJ)J
    .registers 8
    mul-long v0, p0, p2
    xor-long/2addr v0, p2
    const/16 v2, 13
    shr-long v4, p0, v2
    add-long/2addr v0, v4
    return-wide v0
.end method

.method public static retF(FF)F
    .registers 4
    mul-float v0, p0, p1
    add-float/2addr v0, p0
    return v0
.end method

.method public static retD(DD)D
    .registers 8
    div-double v0, p0, p2
    add-double/2addr v0, p2
    return-wide v0
.end method

.method public static retV(I)V
    .registers 2
    return-void
.end method

# Packed switch.
.method public static packed(I)I
    .registers 3
    packed-switch p0, :table
    const/16 v0, -7
    return v0
    :c0
    const/16 v0, 10
    return v0
    :c1
    const/16 v0, 20
    return v0
    :c2
    const/16 v0, 33
    return v0
    :c3
    mul-int/lit8 v0, p0, 5
    return v0
    :table
    .packed-switch 0x0
        :c0
        :c1
        :c2
        :c3
    .end packed-switch
.end method

# Sparse switch.
.method public static sparse(I)I
    .registers 3
    sparse-switch p0, :table
    const/4 v0, 0
    return v0
    :a
    const/4 v0, 1
    return v0
    :b
    const/4 v0, 2
    return v0
    :c
    const/4 v0, 3
    return v0
    :table
    .sparse-switch
        -100 -> :a
        7 -> :b
        100000 -> :c
    .end sparse-switch
.end method

# Mixed long/int/float arguments (ABI placement: thumb2 puts the long in r2:r3).
.method public static mixed(JIF)J
    .registers 8
    int-to-long v0, p2
    add-long/2addr v0, p0
    float-to-long v2, p3
    add-long/2addr v0, v2
    return-wide v0
.end method

# Nested loops: a Collatz-like step count, bounded.
.method public static steps(I)I
    .registers 4
    and-int/lit16 v0, p0, 0x7fff
    add-int/lit8 v0, v0, 1
    const/4 v1, 0
    :loop
    const/4 v2, 1
    if-eq v0, v2, :done
    const/16 v2, 500
    if-ge v1, v2, :done
    and-int/lit8 v2, v0, 1
    if-eqz v2, :even
    mul-int/lit8 v0, v0, 3
    add-int/lit8 v0, v0, 1
    goto :next
    :even
    shr-int/lit8 v0, v0, 1
    :next
    add-int/lit8 v1, v1, 1
    goto :loop
    :done
    return v1
.end method

# Long division and remainder (thumb2 calls pLdiv/pLmod, __aeabi_ldivmod); the divisor is
# made odd, so never zero (exception delivery is not run by the harness yet).
.method public static longDivRem(JJ)J
    .registers 10
    const-wide/16 v0, 1
    or-long v0, p2, v0
    div-long v2, p0, v0
    rem-long v4, p0, v0
    add-long/2addr v2, v4
    return-wide v2
.end method

# Floating remainder (pFmod / pFmodf on both ARM back ends).
.method public static remD(DD)D
    .registers 6
    rem-double v0, p0, p2
    return-wide v0
.end method

.method public static remF(FF)F
    .registers 4
    rem-float v0, p0, p1
    return v0
.end method

# Conversions with Java's saturating semantics (thumb2: pD2l, pF2l, pL2f).
.method public static convD2l(D)J
    .registers 4
    double-to-long v0, p0
    return-wide v0
.end method

.method public static convL2f(J)F
    .registers 4
    long-to-float v0, p0
    return v0
.end method
