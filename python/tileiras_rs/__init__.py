"""Where the files of the tileiras-rs wheel are.

The wheel puts ``tileiras`` and ``tileirdisasm`` in the environment's ``bin``
folder (the one ``pip`` puts console scripts in) and carries the C library,
its header, a CMake package and a pkg-config file inside this package::

    import tileiras_rs
    tileiras_rs.get_cmake_dir()   # for CMake: -Dtileiras_DIR=...
    tileiras_rs.include_dir()     # holds tileiras.h
    tileiras_rs.library_path()    # libtileiras.so
    tileiras_rs.bin_dir()         # holds tileiras and tileirdisasm

``python -m tileiras_rs --help`` prints the same from the command line.
"""

from __future__ import annotations

import os
import sysconfig
from importlib import metadata
from typing import Optional

__all__ = [
    "__version__",
    "bin_dir",
    "cmake_prefix",
    "get_cmake_dir",
    "include_dir",
    "library_dir",
    "library_path",
    "pkgconfig_dir",
    "static_library_path",
    "tileiras_path",
    "tileirdisasm_path",
]

_HERE = os.path.dirname(os.path.abspath(__file__))
_DIST = "tileiras-rs"

try:
    __version__ = metadata.version(_DIST)
except metadata.PackageNotFoundError:  # run from a source tree
    __version__ = "0+unknown"


def _existing(path: str) -> str:
    if not os.path.exists(path):
        raise FileNotFoundError(
            f"{path} is missing: this tileiras_rs was not installed from a wheel "
            "built by scripts/wheel.sh"
        )
    return path


def include_dir() -> str:
    """The folder holding ``tileiras.h``."""
    return _existing(os.path.join(_HERE, "include"))


def library_dir() -> str:
    """The folder holding ``libtileiras.so`` and ``libtileiras.a``."""
    return _existing(os.path.join(_HERE, "lib"))


def library_path() -> str:
    """The shared library, ``libtileiras.so``."""
    return _existing(os.path.join(_HERE, "lib", "libtileiras.so"))


def static_library_path() -> str:
    """The static library, ``libtileiras.a``."""
    return _existing(os.path.join(_HERE, "lib", "libtileiras.a"))


def get_cmake_dir() -> str:
    """The folder holding ``tileirasConfig.cmake``: pass it as ``tileiras_DIR``
    (or its prefix, :func:`cmake_prefix`, in ``CMAKE_PREFIX_PATH``) and use
    ``find_package(tileiras CONFIG REQUIRED)``."""
    return _existing(os.path.join(_HERE, "lib", "cmake", "tileiras"))


def cmake_prefix() -> str:
    """An install prefix (``include/``, ``lib/``) for ``CMAKE_PREFIX_PATH``."""
    return _HERE


def pkgconfig_dir() -> str:
    """The folder holding ``tileiras.pc``, for ``PKG_CONFIG_PATH``."""
    return _existing(os.path.join(_HERE, "lib", "pkgconfig"))


def _installed_script(name: str) -> Optional[str]:
    """The path of an executable this distribution installed, from its
    RECORD (right for every install scheme: a venv, ``--user``, ``--prefix``)."""
    try:
        files = metadata.distribution(_DIST).files or []
    except metadata.PackageNotFoundError:
        return None
    for f in files:
        parts = f.parts
        if len(parts) >= 2 and parts[-1] == name and parts[-2] in ("bin", "Scripts"):
            path = os.path.normpath(str(f.locate()))
            if os.path.exists(path):
                return path
    return None


def tileiras_path() -> str:
    """The ``tileiras`` executable the wheel installed."""
    path = _installed_script("tileiras")
    if path is None:
        path = os.path.join(sysconfig.get_path("scripts"), "tileiras")
    return _existing(path)


def tileirdisasm_path() -> str:
    """The ``tileirdisasm`` executable the wheel installed."""
    path = _installed_script("tileirdisasm")
    if path is None:
        path = os.path.join(sysconfig.get_path("scripts"), "tileirdisasm")
    return _existing(path)


def bin_dir() -> str:
    """The folder holding ``tileiras`` and ``tileirdisasm`` (the environment's
    ``bin``): put it first on ``PATH`` for cuTile Python to find this
    compiler."""
    return os.path.dirname(tileiras_path())
