#!/bin/bash
# Reference solution: the fix as a patch.
set -euo pipefail
cd /app
git apply --whitespace=nowarn <<'AUTOENVSCALING_PATCH'
diff --git a/src/unitconv/registry.py b/src/unitconv/registry.py
--- a/src/unitconv/registry.py
+++ b/src/unitconv/registry.py
@@ -201,6 +201,7 @@
 
         Raises UnitError if no unit has that dimension.
         """
+        units = [unit for unit in self._units.values() if unit.dimension == dimension]
         if not units:
             raise UnitError(f"unknown dimension {dimension!r}")
         return sorted(units, key=lambda unit: (unit.factor, unit.symbol))
AUTOENVSCALING_PATCH
