"""SelfAttV1 (the SelfAttV1-V4 notebook), written for this book: three projections, no mask."""
import math

import torch
import torch.nn as nn

PROGRAM = "selfatt_v1"


class SelfAttV1(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim
        self.query_proj = nn.Linear(dim, dim)
        self.key_proj = nn.Linear(dim, dim)
        self.value_proj = nn.Linear(dim, dim)

    def forward(self, X):
        Q, K, V = self.query_proj(X), self.key_proj(X), self.value_proj(X)
        weights = torch.softmax(Q @ K.transpose(-1, -2) / math.sqrt(self.dim), dim=-1)
        return weights @ V, weights


def cases():
    """(description, module, inputs by file name, extra flags) for each check."""
    for B, T, D in [(3, 2, 4), (1, 1, 1), (2, 7, 5), (4, 16, 32)]:
        yield f"X {(B, T, D)}", SelfAttV1(D), {"X": torch.rand(B, T, D)}, []


def examples():
    """(name, module maker, forward argument names, extra flags) for each --example."""
    yield "same-word", lambda: SelfAttV1(16), ["X"], []
