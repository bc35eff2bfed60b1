"""Peer timings for bench/gpu.R: torch on the same GPU, host arrays in and out.

    python3 bench/torch_cases.py CASE N P DTYPE REPS

Prints one line: the median seconds of REPS runs after one warm-up.  Each
run starts from a NumPy array on the host and ends with the full result as
a NumPy array on the host, which is what an R user would get.
"""
import sys, time
import numpy as np
import torch

case, n, p, dtype, reps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
dt = torch.float64 if dtype == "float64" else torch.float32
rng = np.random.default_rng(1)
x = rng.standard_normal((n, p)).astype(np.float64 if dtype == "float64" else np.float32)
dev = torch.device("cuda")


def spearman_rows(t):
    # ranks by double argsort (ties are not mid-ranked: torch has no rank)
    r = torch.argsort(torch.argsort(t, dim=1), dim=1).to(t.dtype)
    return torch.corrcoef(r)


def run():
    t = torch.from_numpy(x).to(dev)
    if case == "pearson":          # rows are variables, as torch.corrcoef wants
        out = torch.corrcoef(t)
    elif case == "spearman":
        out = 1 - spearman_rows(t)
    elif case == "euclidean":
        out = torch.cdist(t, t, p=2.0, compute_mode="donot_use_mm_for_euclid_dist")
    elif case == "manhattan":
        out = torch.cdist(t, t, p=1.0)
    else:
        raise SystemExit("unknown case " + case)
    res = out.cpu().numpy()
    torch.cuda.synchronize()
    return res


run()
times = []
for _ in range(reps):
    t0 = time.perf_counter()
    r = run()
    times.append(time.perf_counter() - t0)
    del r
print("%.4f" % float(np.median(times)))
