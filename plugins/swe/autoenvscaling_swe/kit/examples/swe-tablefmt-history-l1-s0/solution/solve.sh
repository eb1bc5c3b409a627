#!/bin/bash
# Reference solution: the fix as a patch.
set -euo pipefail
cd /app
git apply --whitespace=nowarn <<'AUTOENVSCALING_PATCH'
diff --git a/src/tablefmt/width.py b/src/tablefmt/width.py
--- a/src/tablefmt/width.py
+++ b/src/tablefmt/width.py
@@ -110,7 +110,7 @@
             for piece in split_word(word, width):
                 if not current:
                     current = piece
-                elif text_width(current) + 1 + text_width(piece) < width:
+                elif text_width(current) + 1 + text_width(piece) <= width:
                     current += " " + piece
                 else:
                     lines.append(current)
AUTOENVSCALING_PATCH
