"""Integrations with training frameworks; each module imports its framework, this package does not."""
