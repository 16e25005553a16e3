# Hubble compiler corpus, part (a): see Shape.smali.
.class public interface abstract LScalable;
.super Ljava/lang/Object;

.method public abstract grow(I)I
.end method
