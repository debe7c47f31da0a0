"""Kernel languages: one file each, the only place a language's fields and suffix are named."""
