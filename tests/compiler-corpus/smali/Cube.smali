# Hubble compiler corpus, part (a): see Shape.smali.
.class public LCube;
.super LSquare;

.method public constructor <init>()V
    .registers 1
    invoke-direct {p0}, LSquare;-><init>()V
    return-void
.end method

# invoke-super twice up the chain (Cube → Square → Shape).
.method public kind()I
    .registers 2
    invoke-super {p0}, LSquare;->kind()I
    move-result v0
    mul-int/lit8 v0, v0, 2
    return v0
.end method

.method public grow(I)I
    .registers 3
    invoke-super {p0, p1}, LSquare;->grow(I)I
    move-result v0
    add-int/lit16 v0, v0, 1000
    return v0
.end method
