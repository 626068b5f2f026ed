"""clparse: constituent parsing by classification (Turian & Melamed 2005), with all training state in
SQLite."""

__version__ = "0.1.0"
