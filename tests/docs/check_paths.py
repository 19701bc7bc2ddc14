#!/usr/bin/env python3
"""Every repository path that README.md and the guide (docs/*.md, mkdocs.yml)
name must exist: a folder move that leaves the docs behind fails the suite.
mkdocs --strict checks links between pages only; paths to source files are
written as plain code (`worker/worker_server.h`), which nothing else checks.

A path is a word that starts with a top-level folder of the repository
(`client/`, `include/kiln/status.h`) and names a folder (a trailing slash) or
a file (an extension), up to the first character that cannot be in a path;
before a placeholder (`<name>`, `{1,2}`, `*`, `$VAR`) only its folder is
checked.

Usage: check_paths.py SOURCE_DIR   (exit 1 and a line per missing path)"""

import pathlib
import re
import sys


def top_level_folders(root):
    # The build directory and hidden folders are not part of the tree.
    return sorted(p.name for p in root.iterdir()
                  if p.is_dir() and not p.name.startswith(".") and p.name != "build"
                  and not p.name.startswith("build-") and p.name != "site")


def documents(root):
    yield root / "README.md"
    yield root / "mkdocs.yml"
    yield from sorted((root / "docs").glob("*.md"))


def checked_part(path, next_char):
    """The part of `path` to look for, or None for words that only look like
    paths ("worker/nest", an error message's "include/incbin file"): a file
    has an extension, a folder a trailing slash. Before a placeholder
    (`tests/bench/test_<name>_smoke.py`) only its folder is checked."""
    if next_char in PLACEHOLDER_STARTS:
        return path[: path.rfind("/") + 1]
    path = path.rstrip(".-")
    last = path.rsplit("/", 1)[1]
    if path.endswith("/") or "." in last:
        return path
    return None


PLACEHOLDER_STARTS = set("<{*$")


def missing_paths(root, text, folders):
    pattern = re.compile(r"(?<![\w./@-])((?:%s)/[\w./+-]*)" % "|".join(map(re.escape, folders)))
    for match in pattern.finditer(text):
        next_char = text[match.end(): match.end() + 1]
        path = checked_part(match.group(1), next_char)
        if path and not (root / path).exists():
            yield text.count("\n", 0, match.start()) + 1, path


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = pathlib.Path(sys.argv[1]).resolve()
    folders = top_level_folders(root)
    bad = 0
    for document in documents(root):
        text = document.read_text(encoding="utf-8")
        for line, path in missing_paths(root, text, folders):
            print(f"{document.relative_to(root)}:{line}: no such path in the repository: {path}")
            bad += 1
    if bad:
        print(f"{bad} path(s) named in the docs do not exist: fix the docs (or the move)")
        return 1
    print("every repository path the docs name exists")
    return 0


if __name__ == "__main__":
    sys.exit(main())
