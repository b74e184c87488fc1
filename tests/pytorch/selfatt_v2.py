"""SelfAttV2 (the SelfAttV1-V4 notebook), written for this book: one fused projection split
into Q, K, V in that order, and an output projection."""
import math

import torch
import torch.nn as nn

PROGRAM = "selfatt_v2"


class SelfAttV2(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim
        self.proj = nn.Linear(dim, 3 * dim)
        self.output_proj = nn.Linear(dim, dim)

    def forward(self, X):
        Q, K, V = torch.split(self.proj(X), self.dim, dim=-1)
        weights = torch.softmax(Q @ K.transpose(-1, -2) / math.sqrt(self.dim), dim=-1)
        return self.output_proj(weights @ V), weights


def cases():
    """(description, module, inputs by file name, extra flags) for each check."""
    for B, T, D in [(3, 2, 4), (1, 1, 1), (2, 7, 5), (4, 16, 32)]:
        yield f"X {(B, T, D)}", SelfAttV2(D), {"X": torch.rand(B, T, D)}, []


def examples():
    """(name, module maker, forward argument names, extra flags) for each --example."""
    yield "same-word", lambda: SelfAttV2(16), ["X"], []
