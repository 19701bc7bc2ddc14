#!/usr/bin/env python3
"""A target includes only headers of what it links.

Every internal kiln header is included relative to the repository root
("worker/session_host.h"), every public one as <kiln/...> (include/kiln/),
so the compiler would find any of them from any target. This check reads the target graph CMake wrote (kiln_targets.json:
each target's folder, sources and direct links), follows the quoted includes
of each target's sources through the tree, and fails for every header that
lives in the folder of a target it does not link, directly or through what
it links. Test helpers under tests/ may be shared between tests.

Usage: check_includes.py <source dir> <build dir>
"""
import json
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+(?:"([^"]+)"|<(kiln/[^>]+)>)', re.MULTILINE)

# The library folder each public header (include/kiln/) belongs to; a public
# header missing here fails the check, so that each has an owner.
PUBLIC_HOME = {
    "kiln/clock.h": "common/base", "kiln/ids.h": "common/base", "kiln/secret.h": "common/base",
    "kiln/status.h": "common/base", "kiln/value.h": "common/base", "kiln/space.h": "common/base",
    "kiln/parameter_value.h": "common/base", "kiln/logging.h": "common/base",
    "kiln/version.h": "common/base", "kiln/error_codes.h": "common/base",
    "kiln/frame_limits.h": "common/transport", "kiln/curve_keys.h": "common/security",
    "kiln/file_access.h": "common/security", "kiln/underlying.h": "common/types",
    "kiln/sandbox_limits.h": "programs/sandbox",
    "kiln/programs/make_benchmark.h": "programs/make", "kiln/programs/tool_limits.h": "programs/make",
    "kiln/kit/run_worker.h": "worker",
}
PUBLIC_FOLDER_HOME = {"kiln/client/": "client", "kiln/kit/": "worker/kit"}


def public_home(include):
    if include in PUBLIC_HOME:
        return PUBLIC_HOME[include]
    for prefix, home in PUBLIC_FOLDER_HOME.items():
        if include.startswith(prefix):
            return home
    return None
GENEX = re.compile(r"^\$<[A-Z_]+:(.*)>$")


def main(source_dir, build_dir):
    with open(os.path.join(build_dir, "kiln_targets.json")) as f:
        targets = json.load(f)

    def rel(path):
        return os.path.relpath(path, source_dir)

    folders = {name: rel(t["folder"]) for name, t in targets.items()}
    links = {}
    for name, t in targets.items():
        names = set()
        for link in t["links"]:
            match = GENEX.match(link)
            link = match.group(1) if match else link
            if link in targets:
                names.add(link)
        links[name] = names

    def closure(name):
        seen, todo = set(), [name]
        while todo:
            current = todo.pop()
            if current in seen:
                continue
            seen.add(current)
            todo.extend(links[current])
        return seen

    # The folder a header belongs to: the deepest target folder above it.
    all_folders = sorted(set(folders.values()), key=len, reverse=True)

    def owner(header):
        for folder in all_folders:
            if folder != "." and (header == folder or header.startswith(folder + "/")):
                return folder
        return None

    def resolve(include, including_dir):
        if include.startswith("kiln/"):
            for base in (os.path.join(source_dir, "include"), os.path.join(build_dir, "include")):
                path = os.path.normpath(os.path.join(base, include))
                if os.path.isfile(path):
                    return path
            return None
        for base in (source_dir, build_dir, including_dir):
            path = os.path.normpath(os.path.join(base, include))
            if os.path.isfile(path):
                return path
        return None

    def is_generated(path):
        return os.path.commonpath([path, build_dir]) == build_dir

    def tree_path(path):
        # A generated header stands for the folder it is generated into.
        return os.path.relpath(path, build_dir if is_generated(path) else source_dir)

    def home_of(where):
        # A public header (include/kiln/..., in the tree or generated) belongs
        # to the library that implements it.
        if where.startswith("include/kiln/"):
            include = where[len("include/"):]
            home = public_home(include)
            if home is None:
                problems.append(f"{where} is a public header with no library in PUBLIC_HOME")
            return home
        return owner(where)

    include_cache = {}

    def includes_of(path):
        if path not in include_cache:
            try:
                with open(path, errors="replace") as f:
                    text = f.read()
            except OSError:
                text = ""
            found = []
            for quoted, public in INCLUDE.findall(text):
                include = quoted or public
                resolved = resolve(include, os.path.dirname(path))
                if resolved:
                    found.append(resolved)
            include_cache[path] = found
        return include_cache[path]

    problems = []
    for name, t in sorted(targets.items()):
        folder = folders[name]
        if folder.startswith(".."):
            continue  # not ours
        allowed = {folders[u] for u in closure(name)}
        in_tests = folder == "tests" or folder.startswith("tests/")
        sources = []
        for source in t["sources"]:
            if source.startswith("$<"):
                continue
            path = source if os.path.isabs(source) else os.path.join(t["folder"], source)
            if os.path.isfile(path) and not path.endswith((".capnp", ".txt")):
                sources.append(os.path.normpath(path))
        seen = set()
        todo = [(s, None) for s in sources]
        while todo:
            path, via = todo.pop()
            if path in seen:
                continue
            seen.add(path)
            for header in includes_of(path):
                where = tree_path(header)
                home = home_of(where)
                if home is None or home.startswith(".."):
                    continue
                if home not in allowed and not (in_tests and home.startswith("tests")):
                    problems.append(
                        f"{name} ({folder}) includes {where} from {tree_path(path)}, "
                        f"but links no target of {home}/")
                    continue
                todo.append((header, path))
    for problem in sorted(set(problems)):
        print(problem)
    if problems:
        print(f"{len(set(problems))} includes of headers from targets not linked", file=sys.stderr)
        return 1
    print(f"{len(targets)} targets include only what they link")
    return 0


if __name__ == "__main__":
    sys.exit(main(os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])))
