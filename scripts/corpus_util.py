"""Small helpers shared by the corpus gen.py scripts."""
import os
import numpy as np

M32 = (1 << 32) - 1
M64 = (1 << 64) - 1


def save_in(name, arr):
    os.makedirs("inputs", exist_ok=True)
    np.save(os.path.join("inputs", name), np.ascontiguousarray(arr))


def save_exp(name, arr):
    os.makedirs("expected", exist_ok=True)
    np.save(os.path.join("expected", name), np.ascontiguousarray(arr))


def sx(v, bits):
    """Interpret the low `bits` of v as a two's complement signed integer."""
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


def tdiv(a, b):
    """C/PTX integer division: truncates toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def trem(a, b):
    """C/PTX remainder: sign of the dividend."""
    return a - tdiv(a, b) * b


def u32(a):
    return np.array(a, dtype=np.uint64).astype(np.uint32) if False else np.array([x & M32 for x in a], dtype=np.uint32)


def f32(x):
    return float(np.float32(x))
