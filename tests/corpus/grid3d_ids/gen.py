import numpy as np
from corpus_util import save_exp
G, B = (3, 2, 2), (4, 3, 5)
out = []
for bz in range(G[2]):
    for by in range(G[1]):
        for bx in range(G[0]):
            for tz in range(B[2]):
                for ty in range(B[1]):
                    for tx in range(B[0]):
                        out += [tx, ty, tz, bx, by, bz, *B, *G]
save_exp("out.npy", np.array(out, np.uint32))
