"""Fixtures of the gpu_kernels plugin's tests. No GPU here: Triton runs in its interpreter, which
must be switched on before anything imports triton."""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("TRITON_INTERPRET", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).parent))  # gk_helpers
# The cache every test suite of this project shares: the image is built once for all of them.
os.environ.setdefault("AUTOENVSCALING_CACHE", "/tmp/autoenvscaling-test-cache")
