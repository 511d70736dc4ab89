"""casework: agents that decide with evidence."""

__version__ = "0.1.0"
