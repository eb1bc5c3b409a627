"""sandbox."""
