"""The package's version: the one source that pyproject.toml (``[tool.setuptools.dynamic]``)
and ``softcontact.__version__`` read."""

__version__ = "0.1.0"
