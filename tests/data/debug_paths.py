"""Shared by the bytecode generators under tests/data: rewrites the absolute
folders that cuTile writes into a module's debug locations."""
import os


def relative_paths(path, dirs):
    """Rewrites the absolute folders `dirs` that the debug locations of the
    bytecode at `path` name as relative ones of the same length
    (`./././`), so the string table stays valid and the committed file
    names no folder of the machine that wrote it."""
    data = open(path, "rb").read()
    for d in dirs:
        d = os.path.abspath(d).encode()
        data = data.replace(d, b"./" * (len(d) // 2) + b"/" * (len(d) % 2))
    open(path, "wb").write(data)
