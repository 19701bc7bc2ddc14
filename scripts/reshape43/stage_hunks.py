#!/usr/bin/env python3
"""stage_hunks.py FILE PATTERN...: stage only the hunks of `git diff FILE` containing a pattern."""
import subprocess, sys
f, pats = sys.argv[1], sys.argv[2:]
diff = subprocess.run(["git", "diff", "-U1", f], capture_output=True, text=True, check=True).stdout
head, *hunks = diff.split("\n@@")
keep = [h for h in hunks if any(p in h for p in pats)]
if not keep:
    sys.exit("no hunk matches")
patch = head + "".join("\n@@" + h for h in keep)
if not patch.endswith("\n"):
    patch += "\n"
subprocess.run(["git", "apply", "--cached", "--recount", "-"], input=patch, text=True, check=True)
print(f"staged {len(keep)} of {len(hunks)} hunks")
