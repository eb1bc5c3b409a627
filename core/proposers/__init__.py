"""Proposers: procedural, prompt, prompt+feedback and agentic builders of new environments."""
