#!/usr/bin/env python3
"""Issue 43's tree reshape: git mv folders, rewrite every path and target name."""
import os, re, subprocess, sys

DIRS = [  # old folder -> new folder (whole folders)
    ("llvmenv", "compilers/llvm_engine"),
    ("llvmsession", "compilers/llvm_session"),
    ("mlgo", "compilers/mlgo_channel"),
    ("mlgosession", "compilers/mlgo_session"),
    ("datasets", "programs/datasets"),
    ("benchmarks", "programs/bundled"),
    ("runtime", "programs/runs"),
    ("sandbox", "programs/sandbox"),
    ("cli", "tools/cli"),
    ("demo", "tools/demo"),
    ("eval", "tools/eval"),
    ("learn", "tools/learn"),
    ("local", "tools/local_cluster"),
    ("kit", "worker/kit"),
    ("metrics", "common/metrics"),
    ("testing", "tests/support"),
    ("fuzz", "tests/fuzz"),
    # tests mirror the library folders (flat: one level below tests/)
    ("tests/llvmenv", "tests/llvm_engine"),
    ("tests/llvmsession", "tests/llvm_session"),
    ("tests/mlgo", "tests/mlgo_channel"),
    ("tests/mlgosession", "tests/mlgo_session"),
    ("tests/runtime", "tests/runs"),
]
# programs/ itself (making benchmarks from sources) goes one level down.
PROGRAMS_SUB = "programs/make"
COMMON = {
    "base": "status clock ids value space near_names parameter_value logging utf8 json_text function_ref mailbox unique_fd unique_task cpu_time exit_codes sanitizers secret version wire_convert spin_before_sleep",
    "transport": "frame frame_limits frame_prefix router_io stream_frames tcp_stream abstract_socket local_transport readiness_poll zmtp_heartbeat listen_exposure",
    "security": "curve_keys zap_authenticator identity worker_token file_access file_reader file_confinement",
    "process": "subprocess child_setup signals working_directory",
    "types": "underlying underlying_wire program_graph cluster_layout",
}
TARGETS = [("kiln_llvmenv", "kiln_llvm_engine"), ("kiln_testing", "kiln_test_support"),
           ("kiln_local", "kiln_local_cluster"), ("kiln_benchmarks", "kiln_bundled_benchmarks"),
           ("llvmenv_microbench", "llvm_engine_microbench")]

# References the path rewrite cannot see (relative, or split into parts).
FIXUPS = {
    "tests/mlgo_session/CMakeLists.txt": [("../mlgo/", "../mlgo_channel/")],
    "tests/python/test_actions.py": [('"..", "llvmenv", "data"', '"..", "llvm_engine", "data"')],
    "tests/python/test_vector.py": [('"..", "llvmenv", "data"', '"..", "llvm_engine", "data"')],
    "tests/python/test_benchmarks.py": [('"benchmarks", "kiln-bench-v0"', '"programs", "bundled", "kiln-bench-v0"')],
    "tests/python/test_runtime.py": [('"benchmarks", "kiln-bench-v0"', '"programs", "bundled", "kiln-bench-v0"')],
    "tests/install/test_install.py": [('"kit", "compilation_session.h"', '"worker", "kit", "compilation_session.h"')],
}

PATHMAP = "/tmp/tools/pathmap.json"

def git(*args, capture=False):
    r = subprocess.run(["git", *args], check=True, text=True, capture_output=capture)
    return r.stdout

def tracked():
    return git("ls-files", capture=True).split("\n")[:-1]

def main():
    files = tracked()
    moves = {}  # old file -> new file
    # programs/ files first (before other folders move into programs/)
    for f in files:
        if f.startswith("programs/"):
            moves[f] = PROGRAMS_SUB + f[len("programs"):]
    for old, new in sorted(DIRS, key=lambda d: -len(d[0])):
        for f in files:
            if f in moves: continue
            if f.startswith(old + "/"):
                moves[f] = new + f[len(old):]
    for sub, units in COMMON.items():
        for u in units.split():
            for ext in (".h", ".cpp", ".h.in"):
                f = f"common/{u}{ext}"
                if f in files: moves[f] = f"common/{sub}/{u}{ext}"
    # generated header: common/version.h (from version.h.in)
    pathmap = dict(moves)
    pathmap["common/version.h"] = "common/base/version.h"
    dirmap = {}
    for old, new in DIRS: dirmap[old] = new
    rewrite_only = "--rewrite-only" in sys.argv
    import json
    if rewrite_only:
        pathmap = json.load(open(PATHMAP))
    else:
        json.dump(pathmap, open(PATHMAP, "w"), indent=0)
    # move
    for old, new in ({} if rewrite_only else moves).items():
        os.makedirs(os.path.dirname(new), exist_ok=True)
        git("mv", old, new)
    # rewrite text
    keys = sorted(pathmap, key=len, reverse=True)
    # Once moved, many new paths end with an old one (tests/fuzz/x, common/
    # metrics/x): a second pass rewrites only paths that stand alone.
    before = r"(?<![A-Za-z0-9_./<-])" if rewrite_only else r"(?<![A-Za-z0-9_.-])"
    file_re = re.compile(before + "(" + "|".join(re.escape(k) for k in keys) + r")(?![A-Za-z0-9_.-])")
    dkeys = sorted(dirmap, key=len, reverse=True)
    # a folder name followed by '/' then a non-name char or end (docs: "llvmenv/ (an engine")
    dir_re = re.compile(r"(?<![A-Za-z0-9_./-])(" + "|".join(re.escape(k) for k in dkeys) + r")/(?![A-Za-z0-9_])")
    tgt_re = re.compile(r"\b(" + "|".join(re.escape(a) for a, _ in TARGETS) + r")\b")
    tmap = dict(TARGETS)
    changed = 0
    formatted = []
    for f in tracked():
        if not os.path.isfile(f) or os.path.islink(f): continue
        try:
            text = open(f, encoding="utf-8").read()
        except (UnicodeDecodeError, IsADirectoryError):
            continue
        new = file_re.sub(lambda m: pathmap[m.group(1)], text)
        if not rewrite_only:
            new = dir_re.sub(lambda m: dirmap[m.group(1)] + "/", new)
        new = tgt_re.sub(lambda m: tmap[m.group(1)], new)
        if new != text:
            open(f, "w", encoding="utf-8").write(new)
            changed += 1
            if f.endswith((".h", ".cpp")):
                formatted.append(f)
    for f, pairs in ({} if rewrite_only else FIXUPS).items():
        text = open(f).read()
        for a, b in pairs:
            if a not in text: sys.exit(f"fixup: {a!r} not in {f}")
            text = text.replace(a, b)
        open(f, "w").write(text)
    for _ in range(5):
        subprocess.run("find . -depth -type d -empty -not -path './.git*' -not -path './build*' -delete", shell=True)
    # Rewritten include lines sort elsewhere in their block.
    for i in range(0, len(formatted), 100):
        subprocess.run(["clang-format", "-i", *formatted[i:i + 100]], check=True)
    print(f"moved {len(moves)} files, rewrote {changed} files")

if __name__ == "__main__":
    main()
