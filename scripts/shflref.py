"""Reference for PTX shfl.sync (all lanes of the segment active)."""


def shfl(mode, vals, lane, b, c):
    """vals: the 32 source values of the warp; returns (value, pred)."""
    b &= 0x1f  # the ISA's pseudo-code uses b[4:0] in every mode
    segmask = (c >> 8) & 0x1f
    clamp = c & 0x1f
    max_lane = (lane & segmask) | (clamp & ~segmask & 0x1f)
    min_lane = lane & segmask
    if mode == "up":
        j = lane - b; p = j >= max_lane
    elif mode == "down":
        j = lane + b; p = j <= max_lane
    elif mode == "bfly":
        j = lane ^ b; p = j <= max_lane
    elif mode == "idx":
        j = min_lane | (b & 0x1f & ~segmask); p = j <= max_lane
    else:
        raise ValueError(mode)
    if not p:
        j = lane
    return vals[j], p


def cval(mode, width):
    return ((32 - width) << 8) | (0 if mode == "up" else 0x1f)
