"""The timing side of chapter 11's "How fast": PyTorch's autograd on mha.py's
MultiHeadAttention (chapter 5's module), forward plus backward, at GPT-2 small's shape.
No cases to check here (mha_backward.py checks mha_backward's gradients against autograd, and
tests/test_mha_backward_fast.c the fast pass against mha_backward's). Run as a script, it times:

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python3 tests/pytorch/backward_fast.py --time 1 1024

(threads, T; B = 1, D = 768, H = 12). It prints the median of 7 warm runs of
out = net(X)[0]; out.backward(dout), in milliseconds. Set the threads of OpenMP and of the
BLAS to the same number, as backward_bench does.
"""
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mha import MultiHeadAttention  # noqa: E402

PROGRAM = "backward_bench"


def cases():
    """Nothing for pytorch_check.py: this file only times."""
    return iter(())


def time_backward(threads, T, runs=7):
    """Median milliseconds of `runs` warm forward-plus-backward passes, grads set to None."""
    torch.set_num_threads(threads)
    net = MultiHeadAttention(768, 12).eval()
    X = torch.rand(1, T, 768, requires_grad=True)
    dout = torch.randn(1, T, 768)
    times = []
    for i in range(runs + 1):                  # the first run pays for page faults and set-up
        net.zero_grad(set_to_none=True)
        X.grad = None
        start = time.perf_counter()
        net(X)[0].backward(dout)             # out, weights: the loss is (out * dout).sum()
        if i > 0:
            times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] != "--time":
        sys.exit(__doc__)
    threads, T = int(sys.argv[2]), int(sys.argv[3])
    print(f"{time_backward(threads, T):.1f}")
