# Hubble compiler corpus, part (a): see Shape.smali.
.class public LSquare;
.super LShape;
.implements LScalable;

.field public tag:B
.field public code:S
.field public letter:C
.field public on:Z
.field public ratio:F

.method public constructor <init>()V
    .registers 1
    invoke-direct {p0}, LShape;-><init>()V
    return-void
.end method

# invoke-super: Shape's kind, plus 4.
.method public kind()I
    .registers 2
    invoke-super {p0}, LShape;->kind()I
    move-result v0
    add-int/lit8 v0, v0, 4
    return v0
.end method

.method public area(D)D
    .registers 7
    mul-double v0, p1, p1
    iget-wide v2, p0, LShape;->scale:D
    mul-double/2addr v0, v2
    return-wide v0
.end method

# Scalable.grow: every sub-word field type through the field entrypoints.
.method public grow(I)I
    .registers 5
    iget-byte v0, p0, LSquare;->tag:B
    add-int/2addr v0, p1
    int-to-byte v0, v0
    iput-byte v0, p0, LSquare;->tag:B
    iget-short v1, p0, LSquare;->code:S
    xor-int/2addr v1, p1
    int-to-short v1, v1
    iput-short v1, p0, LSquare;->code:S
    add-int/2addr v0, v1
    iget-char v1, p0, LSquare;->letter:C
    add-int/lit8 v1, v1, 1
    int-to-char v1, v1
    iput-char v1, p0, LSquare;->letter:C
    add-int/2addr v0, v1
    iget-boolean v1, p0, LSquare;->on:Z
    xor-int/lit8 v1, v1, 1
    iput-boolean v1, p0, LSquare;->on:Z
    add-int/2addr v0, v1
    iget v1, p0, LSquare;->ratio:F
    const/high16 v2, 0x3fc00000
    mul-float/2addr v1, v2
    iput v1, p0, LSquare;->ratio:F
    add-int/2addr v0, p1
    return v0
.end method

# invoke-interface on this: Square's grow, or Cube's.
.method public viaIface(I)I
    .registers 4
    invoke-interface {p0, p1}, LScalable;->grow(I)I
    move-result v0
    add-int/lit8 v1, p1, 7
    invoke-interface {p0, v1}, LScalable;->grow(I)I
    move-result v1
    mul-int/lit8 v1, v1, 3
    add-int/2addr v0, v1
    return v0
.end method

# Long and float arguments; a long field named through this class (declared in Shape: the
# runtime's field lookup walks up) and a float field.
.method public mix(JF)J
    .registers 8
    iget-wide v0, p0, LSquare;->hits:J
    xor-long/2addr v0, p1
    iget v2, p0, LSquare;->ratio:F
    add-float/2addr v2, p3
    float-to-long v2, v2
    add-long/2addr v0, v2
    iput-wide v0, p0, LShape;->hits:J
    iput p3, p0, LSquare;->ratio:F
    return-wide v0
.end method
