"""The version of tl-inspect, on its own so that every layer can read it without loading the package's face."""

__version__ = "0.1.0"
