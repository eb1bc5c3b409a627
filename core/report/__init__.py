"""Static HTML reports of flywheel runs (inline SVG, no network)."""
