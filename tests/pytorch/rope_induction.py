"""rope_induction (chapter 13) against PyTorch, one training step at a time: chapter 12's
replay (induction.py) of a model with no pos_emb whose layers are rope.py's RopeAttention,
causal, every sequence at position_ids = torch.arange(T). `rope_induction --steps 0 --dump
INIT` writes the weights its seed draws, `--steps 20 --dump AFTER` trains them and writes
the batches, each step's loss and the final weights; PyTorch loads INIT, replays the same
batches with torch.optim.Adam, and must give every step's loss within 1e-4 and every final
weight within 1e-4 of max(1, its largest entry). Unlike chapter 12's, k_proj.bias is
compared like any weight: turned by its key's position, it no longer adds the same q . b to
every score of a row, so it has a gradient and trains.

No cases(): pytorch_check.py calls replay(), which runs the program twice per case.
"""
import os
import sys

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import induction as chapter12  # noqa: E402
from rope import RopeAttention  # noqa: E402

PROGRAM = "rope_induction"
STEPS = 20
TOL = 1e-4
CASES = [   # (description, flags): sizes and lr not given are the trainer's defaults
    ("the defaults: B = 16, T = 32, D = 32, H = 2, L = 2, lr 0.01", []),
    ("D = 16, H = 2, T = 12, B = 4, three layers, from seed 9", ["--dim", "16", "--seq", "12", "--batch", "4",
                                                                 "--layers", "3", "--seed", "9"]),
]


class AttentionOnlyRope(nn.Module):
    """Chapter 12's model with RoPE instead of pos_emb, as chapter 13 writes it."""
    def __init__(self, V, D, H, L):
        super().__init__()
        self.tok_emb = nn.Embedding(V, D)
        self.layers = nn.ModuleList(RopeAttention(D, H, H, causal=True) for _ in range(L))
        self.unembed = nn.Linear(D, V)

    def forward(self, tokens):                      # (B, T) -> logits (B, T, V)
        x = self.tok_emb(tokens)                    # no pos_emb
        for layer in self.layers:
            x = x + layer(x)[0]                     # q and k turned at positions 0 .. T-1
        return self.unembed(x)


def load_model(directory, H):
    L = sum(1 for f in os.listdir(directory) if f.endswith(".q_proj.weight.npy"))
    V, D = np.load(os.path.join(directory, "tok_emb.weight.npy")).shape
    model = AttentionOnlyRope(V, D, H, L)
    with torch.no_grad():
        for key, p in model.named_parameters():
            p.copy_(torch.from_numpy(np.load(os.path.join(directory, key + ".npy"))))
    return model


def replay_case(check, index, description, flags, root):
    H, lr = chapter12.flag(flags, "--heads", 2), chapter12.flag(flags, "--lr", 0.01)
    program = os.path.join(check.BIN, PROGRAM)
    init, after = (os.path.join(root, f"rope-induction-{index}-{w}") for w in ("init", "after"))
    what = " ".join([PROGRAM, *flags]) + ": " + description
    if not check.run_program([program, "--steps", "0", "--dump", init, "--quiet", *flags], what):
        return
    if not check.run_program([program, "--steps", str(STEPS), "--every", "5", "--dump", after,
                              "--quiet", *flags], what):
        return
    check.ok(not os.path.exists(os.path.join(init, "pos_emb.weight.npy")),
             f"{what}: the model it draws has no pos_emb")
    model = load_model(init, H)
    start = {key: p.detach().clone() for key, p in model.named_parameters()}
    tokens = torch.from_numpy(np.load(os.path.join(after, "tokens.npy"))).long()
    counted = torch.from_numpy(np.load(os.path.join(after, "counted.npy")))
    losses, _ = chapter12.train(model, tokens, counted, lr)
    got = np.load(os.path.join(after, "losses.npy"))
    err = np.abs(got - losses) if got.shape == losses.shape else np.full(1, np.inf)
    check.ok(bool(err.max() <= TOL), f"{what}: each step's loss agrees with PyTorch's within {TOL}",
             chapter12.shape(got, losses))
    check.diag(f"worst loss difference {err.max():.3g}")
    least_moved, worst = np.inf, 0.0
    for key, p in model.named_parameters():
        want = p.detach().numpy()
        got = np.load(os.path.join(after, key + ".npy"))
        err = check.max_error(got, want)
        tol = TOL * max(1.0, float(np.abs(want).max()))
        check.ok(err <= tol, f"{what}: {key} after {STEPS} steps agrees with PyTorch's within {tol:.3g}",
                 chapter12.shape(got, want))
        worst = max(worst, err)
        least_moved = min(least_moved, float(np.abs(want - start[key].numpy()).max()))
    check.diag(f"worst weight difference {worst:.3g}")
    check.ok(least_moved > 100 * TOL, f"{what}: {STEPS} steps moved every weight, k_proj.bias included, by "
             f"more than {100 * TOL:g}", f"one weight moved by at most {least_moved:.3g}")
    check.diag(f"the weight that moved least moved by {least_moved:.3g}")


def replay(check, root):
    for index, (description, flags) in enumerate(CASES):
        try:
            replay_case(check, index, description, flags, root)
        except Exception as e:      # a missing or unreadable file: one failure, not a crash
            check.ok(False, " ".join([PROGRAM, *flags]) + f": {description}: the replay runs",
                     f"{type(e).__name__}: {e}")
