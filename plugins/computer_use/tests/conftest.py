"""Fixtures of the computer_use plugin's tests: tasks generated per family, attempted in real
bubblewrap sandboxes with real Chromium (the domain's image is built once and cached)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))  # cu_helpers
# The cache every test suite of this project shares: the image is built once for all of them.
os.environ.setdefault("AUTOENVSCALING_CACHE", "/tmp/autoenvscaling-test-cache")
