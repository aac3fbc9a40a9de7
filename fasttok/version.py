"""fasttok's version, in a module of its own so the table cache can key on it
without importing the package.

>>> __version__.count(".") >= 1
True
"""

__version__ = "0.1.0"
