#!/bin/sh
# Runs tests/pytorch_check.py with a python3 that has NumPy and PyTorch
# (Debian: apt-get install python3-numpy python3-torch), or skips it.
here=$(dirname "$0")
for py in /usr/bin/python3 python3; do
  if "$py" -c 'import numpy, torch' >/dev/null 2>&1; then
    exec "$py" "$here/pytorch_check.py" "$@"
  fi
done
echo "1..0 # SKIP no python3 with NumPy and PyTorch: apt-get install python3-numpy python3-torch"
