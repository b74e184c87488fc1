"""Compare each program with the PyTorch module it reproduces (TAP output).

Each file tests/pytorch/NAME.py names a PROGRAM and yields cases: a module
written for this book that mirrors the seed module (state_dict() keys
included, see ../shared/design/interface.md), its inputs, and extra flags.
For every case: save the module's state_dict() and the inputs with NumPy,
run `build/bin/PROGRAM --load DIR --dump OUT --quiet FLAGS`, and compare
OUT/out.npy and OUT/attn.npy with what the module returns, (out, weights).
A file may also yield examples(): (NAME, a function making the module, the
forward() argument names, extra flags) for each `--example NAME` the program
sets by hand; its dump is loaded into PyTorch and compared the same way.
A file that sets GRADIENTS = True (chapter 11's mha_backward) also runs autograd's
backward() on (out * dout).sum(), with dout from the case's or the dump's dout.npy
(an input of the program, not of forward()), and compares every KEY.grad.npy the
program wrote with .grad: the parameters', X's, and the module's retained scores'.
A file that checks more than one run of a program against each other, as chapter 12's
induction.py replays a training, defines replay(check, root) instead of (or beside)
cases(): check is this module (ok, diag, skip, run_program, max_error, BIN, WRAP),
root a directory for its files.

Run it through tests/pytorch_check.sh, which finds a python3 with NumPy and
torch, or reports the check as skipped; `tests/pytorch_check.sh NAME ...` runs
only tests/pytorch/NAME.py.
"""
import glob
import importlib.util
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.environ.get("ABH_BIN", "build/bin")
WRAP = os.environ.get("ABH_WRAP", "").split()   # make test-valgrind: valgrind ...
TOL = 1e-5

count = 0
failed = 0


def ok(cond, name, detail=""):
    global count, failed
    count += 1
    print(("ok" if cond else "not ok"), count, "-", name)
    if not cond:
        failed += 1
        if detail:
            print("  # " + detail)


def diag(message):
    print("  # " + message)


def skip(reason):
    global count
    count += 1
    print("ok", count, "# SKIP", reason)


def max_error(got, want):
    if got.shape != want.shape:
        return float("inf")
    # NaN where PyTorch has NaN counts as agreement
    both_nan = np.isnan(got) & np.isnan(want)
    diff = np.where(both_nan, 0.0, np.abs(got - want))
    return float(np.nan_to_num(diff, nan=np.inf).max(initial=0.0))


def run_program(command, what):
    """Run one program; None, after reporting why, unless it ran to the end."""
    r = subprocess.run([*WRAP, *command], capture_output=True, text=True)
    stub = re.findall(r"not implemented yet: (Exercise [\d.]*\d)", r.stderr)
    if r.returncode == 3 and stub:
        # a student handout: the program's exercise is not written yet
        skip(f"{what}: needs {stub[-1]}, not implemented yet")
        return None
    if r.returncode != 0:
        ok(False, f"{what}: the program runs", r.stderr.strip())
        return None
    return r


def forward_args(inputs):
    """The inputs forward() takes: dout.npy is the backward pass's."""
    return {k: v for k, v in inputs.items() if k != "dout"}


def check_gradients(what, net, args, out):
    """backward() of (out * dout).sum(); each .grad against OUT/KEY.grad.npy, within TOL of
    its largest entry (or of 1, for a gradient whose entries are all below 1)."""
    dout = torch.from_numpy(np.load(os.path.join(out, "dout.npy")))
    X = args["X"].detach().clone().requires_grad_(True)
    net.zero_grad()
    result, _ = net(**{**args, "X": X})
    (result * dout).sum().backward()
    grads = {key + ".grad": p.grad for key, p in net.named_parameters()}
    grads["X.grad"], grads["scores.grad"] = X.grad, net.scores.grad
    for name, want in grads.items():
        want = want.numpy()
        got = np.load(os.path.join(out, name + ".npy"))
        finite = np.abs(want[np.isfinite(want)])
        tol = TOL * max(1.0, float(finite.max(initial=0.0)))
        err = max_error(got, want)
        ok(err <= tol, f"{what}: {name}.npy agrees with autograd's .grad within {tol:.3g}",
           f"got shape {got.shape}, want {want.shape}, max abs error {err:.3g}")


def run_case(program, index, description, net, inputs, flags, root, gradients=False):
    net.eval()
    case = os.path.join(root, f"{program}-{index}-in")
    out = os.path.join(root, f"{program}-{index}-out")
    os.makedirs(case)
    for key, t in net.state_dict().items():
        np.save(os.path.join(case, key + ".npy"), t.numpy())
    for name, t in inputs.items():
        np.save(os.path.join(case, name + ".npy"), t.numpy())
    what = " ".join([program, *flags]) + ": " + description
    if not run_program([os.path.join(BIN, program), "--load", case, "--dump", out, "--quiet", *flags], what):
        return
    with torch.no_grad():
        want_out, want_att = net(**forward_args(inputs))
    for name, want in (("out", want_out), ("attn", want_att)):
        got = np.load(os.path.join(out, name + ".npy"))
        err = max_error(got, want.numpy())
        ok(err <= TOL, f"{what}: {name}.npy agrees with PyTorch within {TOL}",
           f"got shape {got.shape}, want {tuple(want.shape)}, max abs error {err:.3g}")
    for key, t in net.state_dict().items():
        same = np.array_equal(np.load(os.path.join(out, key + ".npy")), t.numpy())
        ok(same, f"{what}: the dumped {key} is the loaded one, exactly")
    if gradients:
        check_gradients(what, net, forward_args(inputs), out)


def run_example(program, name, make_net, inputs, flags, root, gradients=False):
    """--example NAME: the program sets every number by hand and dumps them; PyTorch
    loads the dumped weights and inputs and must give the dumped out and attn."""
    out = os.path.join(root, f"{program}-example-{name}")
    what = " ".join([program, "--example", name, *flags])
    if not run_program([os.path.join(BIN, program), "--example", name, "--dump", out, "--quiet", *flags], what):
        return
    net = make_net()
    net.eval()
    net.load_state_dict({k: torch.from_numpy(np.load(os.path.join(out, k + ".npy"))) for k in net.state_dict()})
    args = {}
    for key in inputs:
        path = os.path.join(out, key + ".npy")
        if key == "dout":
            continue
        if os.path.exists(path):
            args[key] = torch.from_numpy(np.load(path))
    with torch.no_grad():
        want_out, want_att = net(**args)
    for part, want in (("out", want_out), ("attn", want_att)):
        got = np.load(os.path.join(out, part + ".npy"))
        err = max_error(got, want.numpy())
        ok(err <= TOL, f"{what}: {part}.npy agrees with PyTorch on the dumped weights within {TOL}",
           f"got shape {got.shape}, want {tuple(want.shape)}, max abs error {err:.3g}")
    if gradients:
        check_gradients(what, net, args, out)


def load(path):
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(names):
    print("TAP version 13")
    torch.manual_seed(0)
    paths = sorted(glob.glob(os.path.join(HERE, "pytorch", "*.py")))
    if names:
        paths = [os.path.join(HERE, "pytorch", name + ".py") for name in names]
    with tempfile.TemporaryDirectory() as root:
        for path in paths:
            cases = load(path)
            gradients = getattr(cases, "GRADIENTS", False)
            for i, (description, net, inputs, flags) in enumerate(getattr(cases, "cases", lambda: [])()):
                run_case(cases.PROGRAM, i, description, net, inputs, flags, root, gradients)
            for name, make_net, inputs, flags in getattr(cases, "examples", lambda: [])():
                run_example(cases.PROGRAM, name, make_net, inputs, flags, root, gradients)
            if hasattr(cases, "replay"):
                cases.replay(sys.modules[__name__], root)
    print(f"1..{count}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
