import math, numpy as np
from corpus_util import save_in, save_exp
rng = np.random.default_rng(40)
a = rng.integers(1, 10**6, 48).astype(np.uint32); b = rng.integers(0, 10**6, 48).astype(np.uint32)
a[:4] = [12, 0, 1071, 832040]; b[:4] = [18, 5, 462, 514229]
save_in("a.npy", a); save_in("b.npy", b)
def fib(n): return n if n < 2 else fib(n - 1) + fib(n - 2)
def ack(m, n): return n + 1 if m == 0 else ack(m - 1, 1) if n == 0 else ack(m - 1, ack(m, n - 1))
out = []
for t in range(48): out += [fib(t % 13), math.gcd(int(a[t]), int(b[t])), ack(t % 3, t % 4)]
save_exp("out.npy", np.array(out, np.int32))
