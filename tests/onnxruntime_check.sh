#!/bin/sh
# onnxruntime_check.sh: ONNX Runtime's fused MultiHeadAttention and its plain-operator
# graph of chapter 5's module give mha_fast's output within 1e-5, with and without
# --causal (TAP; see tools/onnxruntime.mjs). Skipped with one line naming what to
# install when node or the pinned onnxruntime-node are missing.
cd "$(dirname "$0")/.." || exit 1
skip() { echo "1..0 # SKIP $*"; exit 0; }
command -v node >/dev/null 2>&1 || skip "no node: apt-get install nodejs npm"
[ -d node_modules/onnxruntime-node ] && [ -d node_modules/onnx-proto ] ||
  skip "no onnxruntime-node: npm ci (it installs package-lock.json's, and nothing from outside the registry)"
[ -x "${ABH_BIN:-build/bin}/mha_bench" ] || skip "no ${ABH_BIN:-build/bin}/mha_bench: make"
exec node tools/onnxruntime.mjs check
