"""``python -m tileiras_rs --cmake-dir`` and friends: print one path."""

from __future__ import annotations

import argparse
import sys

import tileiras_rs


def main(argv: "list[str] | None" = None) -> int:
    queries = {
        "--cmake-dir": tileiras_rs.get_cmake_dir,
        "--cmake-prefix": tileiras_rs.cmake_prefix,
        "--include-dir": tileiras_rs.include_dir,
        "--library-dir": tileiras_rs.library_dir,
        "--library": tileiras_rs.library_path,
        "--static-library": tileiras_rs.static_library_path,
        "--pkgconfig-dir": tileiras_rs.pkgconfig_dir,
        "--bin-dir": tileiras_rs.bin_dir,
        "--tileiras": tileiras_rs.tileiras_path,
        "--tileirdisasm": tileiras_rs.tileirdisasm_path,
    }
    parser = argparse.ArgumentParser(
        prog="python -m tileiras_rs",
        description="Print where the files of the tileiras-rs wheel are.",
    )
    group = parser.add_mutually_exclusive_group(required=True)
    for flag, fn in queries.items():
        group.add_argument(flag, action="store_const", const=fn, dest="query",
                           help=(fn.__doc__ or "").strip().split("\n")[0])
    group.add_argument("--version", action="version",
                       version=f"tileiras-rs {tileiras_rs.__version__}")
    args = parser.parse_args(argv)
    try:
        print(args.query())
    except FileNotFoundError as e:
        print(f"python -m tileiras_rs: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
