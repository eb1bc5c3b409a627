"""domains."""
