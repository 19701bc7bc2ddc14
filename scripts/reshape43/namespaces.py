#!/usr/bin/env python3
"""Issue 43: each library folder's namespace is the folder's name (rerunnable)."""
import re, subprocess
files = subprocess.run(["git", "ls-files", "*.cpp", "*.h", "*.cmake", "*.in", "*.md"],
                       capture_output=True, text=True).stdout.split()
ren = [("llvmenv", "llvm_engine"), ("llvmsession", "llvm_session"), ("mlgosession", "mlgo_session"),
       ("mlgo", "mlgo_channel"), ("benchmarks", "bundled"), ("runtime", "runs")]
changed = []
for f in files:
    if f.startswith("docs/data/"):
        continue
    s = open(f, encoding="utf-8", errors="surrogateescape").read()
    t = s
    for a, b in ren:
        t = re.sub(r'(?<![\w.:/-])' + a + r'::', b + '::', t)
        t = re.sub(r'kiln::' + a + r'::', 'kiln::' + b + '::', t)
        t = re.sub(r'namespace kiln::' + a + r'\b', 'namespace kiln::' + b, t)
        t = re.sub(r'kiln::' + a + r'\b(?!-)', 'kiln::' + b, t)
        t = re.sub(r'using namespace ' + a + r';', 'using namespace ' + b + ';', t)
    if t != s:
        open(f, "w", encoding="utf-8", errors="surrogateescape").write(t)
        changed.append(f)
cpp = [f for f in changed if f.endswith((".h", ".cpp"))]
if cpp:
    subprocess.run(["clang-format", "-i", *cpp], check=True)
print(f"namespaces: {len(changed)} files")
