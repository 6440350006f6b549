import numpy as np
from corpus_util import save_in, save_exp, M32
x = np.random.default_rng(32).integers(-1000, 1000, 100).astype(np.int32); save_in("x.npy", x)
def ref(bs, nb):
    out = []
    for b in range(nb):
        for t in range(bs):
            g = b * bs + t; lane, warp = t % 32, t // 32
            w0 = b * bs + warp * 32; lanes = min(32, bs - warp * 32)
            ws = [int(v) for v in x[w0:w0 + lanes]]
            mask = (1 << lanes) - 1
            out += [sum(1 << l for l in range(lanes) if ws[l] & 1), mask, ws[(lane + 1) % lanes],
                    ws[lane ^ 1], sum(ws[:lane + 1])]
    return np.array([v & M32 for v in out], np.uint32)
save_exp("out50.npy", ref(50, 2)); save_exp("out20.npy", ref(20, 5))
