"""The Python child runtime behind bootstrap-python/process.py (see README.md)."""
