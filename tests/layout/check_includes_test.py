#!/usr/bin/env python3
"""check_includes.py on small made-up trees: it passes a tree whose targets
include only what they link, and names each include that breaks the rule."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check_includes.py")


def make_tree(root, files, targets):
    source, build = os.path.join(root, "src"), os.path.join(root, "build")
    for path, text in files.items():
        full = os.path.join(source, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(text)
    os.makedirs(build)
    graph = {name: {"type": "STATIC_LIBRARY", "folder": os.path.join(source, folder),
                    "sources": sources, "links": links}
             for name, (folder, sources, links) in targets.items()}
    with open(os.path.join(build, "kiln_targets.json"), "w") as f:
        json.dump(graph, f)
    return source, build


def run(source, build):
    done = subprocess.run([sys.executable, CHECK, source, build], capture_output=True, text=True)
    return done.returncode, done.stdout


FILES = {
    "base/base.h": "#pragma once\n",
    "base/base.cpp": '#include "base/base.h"\n',
    "mid/mid.h": '#pragma once\n#include "base/base.h"\n',
    "mid/mid.cpp": '#include "mid/mid.h"\n',
    "other/other.h": "#pragma once\n",
    "other/other.cpp": '#include "other/other.h"\n',
    "top/top.cpp": '#include "mid/mid.h"\n',
}


class CheckIncludesTest(unittest.TestCase):
    def test_a_tree_that_includes_what_it_links_passes(self):
        with tempfile.TemporaryDirectory() as root:
            code, out = run(*make_tree(root, FILES, {
                "base": ("base", ["base.cpp"], []),
                "mid": ("mid", ["mid.cpp"], ["base"]),
                "other": ("other", ["other.cpp"], []),
                "top": ("top", ["top.cpp"], ["$<LINK_ONLY:mid>"]),  # base comes through mid
            }))
            self.assertEqual(code, 0, out)

    def test_a_header_of_an_unlinked_target_is_named(self):
        files = dict(FILES)
        files["top/top.cpp"] = '#include "mid/mid.h"\n#include "other/other.h"\n'
        with tempfile.TemporaryDirectory() as root:
            code, out = run(*make_tree(root, files, {
                "base": ("base", ["base.cpp"], []),
                "mid": ("mid", ["mid.cpp"], ["base"]),
                "other": ("other", ["other.cpp"], []),
                "top": ("top", ["top.cpp"], ["mid"]),
            }))
            self.assertEqual(code, 1, out)
            self.assertIn("top (top) includes other/other.h from top/top.cpp", out)

    def test_an_include_reached_through_a_header_counts_too(self):
        with tempfile.TemporaryDirectory() as root:
            code, out = run(*make_tree(root, FILES, {
                "base": ("base", ["base.cpp"], []),
                "mid": ("mid", ["mid.cpp"], []),  # mid.h includes base without linking it
                "other": ("other", ["other.cpp"], []),
                "top": ("top", ["top.cpp"], ["mid"]),
            }))
            self.assertEqual(code, 1, out)
            self.assertIn("mid (mid) includes base/base.h from mid/mid.h", out)
            self.assertIn("top (top) includes base/base.h from mid/mid.h", out)


if __name__ == "__main__":
    unittest.main()
