"""mha_fast (chapter 10) against the SelfAttV1-V4 notebook's MultiHeadAttention, as tests/pytorch/mha.py
writes it: the same files as mha, the same masks, --causal; eval mode only (mha_fast
refuses --train). attn.npy comes from mha_fast's separate pass for --dump.

Run as a script, it times that module instead, the way chapter 10 compares with it:

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python3 tests/pytorch/mha_fast.py --time 1 1024

(threads, T; B = 1, D = 768, H = 12: GPT-2 small). It prints the median of 7 warm
runs in milliseconds and the BLAS PyTorch uses. Set the threads of both OpenMP and
the BLAS to the same number, and see the chapter for the BLAS.
"""
import os
import sys

import torch

PROGRAM = "mha_fast"


# Seed 004's module and the padding masks, exactly as mha.py writes them: the module
# mha_fast must agree with is chapter 5's, and the chapter times that same module.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mha import MultiHeadAttention, padding  # noqa: E402


def cases():
    """(description, module, inputs by file name, extra flags) for each check."""
    yield "the notebook's example: 8 heads, a random int64 (B, H, T, T) mask", MultiHeadAttention(128, 8), \
        {"X": torch.rand(3, 2, 128), "attention_mask": torch.randint(0, 2, (3, 8, 2, 2))}, ["--heads", "8"]
    yield "a bool (B, 1, 1, T) padding mask, T over one block", MultiHeadAttention(32, 2), \
        {"X": torch.rand(3, 70, 32), "attention_mask": padding(3, 70)[:, None, None, :].bool()}, ["--heads", "2"]
    yield "an int64 (T, T) causal mask, heads of 3", MultiHeadAttention(24, 8), \
        {"X": torch.rand(2, 9, 24), "attention_mask": torch.tril(torch.ones(9, 9, dtype=torch.long))}, ["--heads", "8"]
    yield "no mask, GPT-2's heads of 64", MultiHeadAttention(128, 2), {"X": torch.rand(1, 130, 128)}, ["--heads", "2"]
    yield "padding, --causal", MultiHeadAttention(12, 4, causal=True), \
        {"X": torch.rand(3, 6, 12), "attention_mask": padding(3, 6)[:, None, None, :]}, ["--heads", "4", "--causal"]
    yield "--causal alone, two key blocks", MultiHeadAttention(64, 4, causal=True), {"X": torch.rand(2, 100, 64)}, \
        ["--heads", "4", "--causal"]


def time_module(threads, T, runs=7):
    """Median milliseconds of `runs` warm forwards of the module at GPT-2 small's shape."""
    import statistics
    import time
    torch.set_num_threads(threads)
    net = MultiHeadAttention(768, 12).eval()
    X = torch.rand(1, T, 768)
    times = []
    with torch.no_grad():
        net(X)                                 # the first run pays for page faults and set-up
        for _ in range(runs):
            start = time.perf_counter()
            net(X)
            times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] != "--time":
        sys.exit(__doc__)
    threads, T = int(sys.argv[2]), int(sys.argv[3])
    blas = [line for line in open("/proc/self/maps") if "blas" in line]
    print(f"PyTorch {torch.__version__}, {threads} thread(s), T = {T}: {time_module(threads, T):.1f} ms "
          f"(BLAS: {blas[0].split()[-1] if blas else 'unknown'}, "
          f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', 'unset')})")
