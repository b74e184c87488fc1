"""mha_backward (chapter 11) against PyTorch's autograd on gqa.py's GroupedQueryAttention:
the same files as gqa, plus dout.npy, the gradient of the loss (out * dout).sum() with
respect to out. Besides out and attn, every KEY.grad.npy the program writes (each
parameter's, X's, and scores.grad, the gradient of the scaled scores before the mask)
must agree with .grad within 1e-5 of the largest entry of that gradient. MHA (G = H),
GQA and MQA (G = 1) shapes, with padding, causal and random masks, a fully hidden row
(NaN where PyTorch has NaN), and the notebook's random int64 (B, H, T, T) masks.
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gqa import GroupedQueryAttention, padding  # noqa: E402

PROGRAM = "mha_backward"
GRADIENTS = True     # pytorch_check.py: compare KEY.grad.npy with autograd's .grad


def cases():
    """(description, module, inputs by file name, extra flags) for each check."""
    def flags(H, G, *more):
        return ["--heads", str(H), "--kv-heads", str(G), *more]
    for G in (1, 2, 4):
        yield f"G = {G} of H = 4 (MQA, GQA, MHA), a (T, T) causal int64 mask", GroupedQueryAttention(16, 4, G), \
            {"X": torch.rand(2, 6, 16), "attention_mask": torch.tril(torch.ones(6, 6, dtype=torch.long)),
             "dout": torch.randn(2, 6, 16)}, flags(4, G)
    yield "H = 8, G = 2, no mask", GroupedQueryAttention(32, 8, 2), \
        {"X": torch.rand(2, 9, 32), "dout": torch.randn(2, 9, 32)}, flags(8, 2)
    yield "H = 4, G = 2, a (B, 1, 1, T) padding mask", GroupedQueryAttention(8, 4, 2), \
        {"X": torch.rand(3, 5, 8), "attention_mask": padding(3, 5)[:, None, None, :],
         "dout": torch.randn(3, 5, 8)}, flags(4, 2)
    yield "the notebook's random int64 (B, H, T, T) mask, a key always visible", GroupedQueryAttention(16, 4, 4), \
        {"X": torch.rand(3, 4, 16), "attention_mask": torch.randint(0, 2, (3, 4, 4, 4)) | torch.eye(4, dtype=torch.long),
         "dout": torch.randn(3, 4, 16)}, flags(4, 4)
    full = torch.rand(2, 4, 5, 5) > 0.4
    full[1, 2, 4, :] = False                                   # a query that sees nothing: NaN
    yield "H = 4, G = 2, a (B, H, T, T) mask with a fully hidden row", GroupedQueryAttention(8, 4, 2), \
        {"X": torch.rand(2, 5, 8), "attention_mask": full, "dout": torch.randn(2, 5, 8)}, flags(4, 2)
    yield "H = 8, G = 4, --causal on padding", GroupedQueryAttention(32, 8, 4, causal=True), \
        {"X": torch.rand(2, 7, 32), "attention_mask": padding(2, 7)[:, None, None, :],
         "dout": torch.randn(2, 7, 32)}, flags(8, 4, "--causal")
    yield "Llama-like heads: H = 8, G = 1, D = 64, --causal", GroupedQueryAttention(64, 8, 1, causal=True), \
        {"X": torch.randn(1, 12, 64), "dout": torch.randn(1, 12, 64)}, flags(8, 1, "--causal")


def examples():
    """(name, module maker, forward argument names, extra flags) for each --example."""
    yield "four-heads", lambda: GroupedQueryAttention(16, 4, 4), ["X", "attention_mask", "dout"], []
