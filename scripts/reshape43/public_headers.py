#!/usr/bin/env python3
"""Issue 43: public headers to include/kiln/, included as <kiln/...> everywhere."""
import json, os, re, subprocess, sys

PUBLIC = {
    "common/base/status.h": "status.h",
    "common/base/value.h": "value.h",
    "common/base/space.h": "space.h",
    "common/base/clock.h": "clock.h",
    "common/base/ids.h": "ids.h",
    "common/base/secret.h": "secret.h",
    "common/base/parameter_value.h": "parameter_value.h",
    "common/base/logging.h": "logging.h",
    "common/transport/frame_limits.h": "frame_limits.h",
    "common/security/curve_keys.h": "curve_keys.h",
    "common/security/file_access.h": "file_access.h",
    "common/types/underlying.h": "underlying.h",
    "programs/sandbox/sandbox_limits.h": "sandbox_limits.h",
    "programs/make/make_benchmark.h": "programs/make_benchmark.h",
    "client/client.h": "client/client.h",
    "client/datasets.h": "client/datasets.h",
    "client/work_pool.h": "client/work_pool.h",
    "client/env_state.h": "client/env_state.h",
    "client/state_replay.h": "client/state_replay.h",
    "worker/run_worker.h": "kit/run_worker.h",
    "worker/kit/benchmark_cache.h": "kit/benchmark_cache.h",
    "worker/kit/bounded_cache.h": "kit/bounded_cache.h",
    "worker/kit/cache_parameters.h": "kit/cache_parameters.h",
    "worker/kit/compilation_session.h": "kit/compilation_session.h",
    "worker/kit/operator_settings.h": "kit/operator_settings.h",
    "worker/kit/service_context.h": "kit/service_context.h",
    "worker/kit/session_types.h": "kit/session_types.h",
}
GENERATED = {"common/base/version.h": "version.h", "common/base/error_codes.h": "error_codes.h"}

def tracked():
    return subprocess.run(["git", "ls-files"], check=True, text=True, capture_output=True).stdout.split("\n")[:-1]

def main():
    rewrite_only = "--rewrite-only" in sys.argv
    if not rewrite_only:
        for old, new in PUBLIC.items():
            os.makedirs(os.path.dirname("include/kiln/" + new), exist_ok=True)
            subprocess.run(["git", "mv", old, "include/kiln/" + new], check=True)
    everything = {**PUBLIC, **GENERATED}
    keys = sorted(everything, key=len, reverse=True)
    alt = "|".join(re.escape(k) for k in keys)
    include_re = re.compile(r'#include "(' + alt + r')"')
    text_re = re.compile(r"(?<![A-Za-z0-9_./<-])(" + alt + r")(?![A-Za-z0-9_.-])")
    formatted = []
    changed = 0
    for f in tracked():
        if not os.path.isfile(f) or os.path.islink(f) or f.startswith("docs/data/"):
            continue
        if "--skip-docs" in sys.argv and (f.startswith("docs/") or f in ("README.md", "mkdocs.yml")):
            continue
        try:
            text = open(f, encoding="utf-8").read()
        except UnicodeDecodeError:
            continue
        new = include_re.sub(lambda m: f"#include <kiln/{everything[m.group(1)]}>", text)
        # Other mentions (comments, docs, CMake lists) name the file where it is.
        new = text_re.sub(lambda m: ("include/kiln/" if m.group(1) in PUBLIC else "kiln/")
                          + everything[m.group(1)], new)
        if new != text:
            open(f, "w", encoding="utf-8").write(new)
            changed += 1
            if f.endswith((".h", ".cpp")):
                formatted.append(f)
    for i in range(0, len(formatted), 100):
        subprocess.run(["clang-format", "-i", *formatted[i:i + 100]], check=True)
    print(f"rewrote {changed} files")

if __name__ == "__main__":
    main()
