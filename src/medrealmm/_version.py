"""The package version, in a module of its own so any module can read it without importing
the top-level API (which imports every area)."""

__version__ = "0.1.0"
