"""The flywheel: rounds of propose, validate, calibrate and review, with their metrics."""
