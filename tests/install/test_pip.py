"""kiln's Python package installed the way README.md's "Install" says, in a
fresh venv of Debian's python3, offline: `pip install --no-build-isolation
./python` (setuptools, wheel and numpy from Debian's packages, seen through
--system-site-packages; --no-index: nothing may be downloaded), the extension
taken from the configured build directory (KILN_BUILD_DIR). Then `import kiln`
works from another directory with no PYTHONPATH, and an env steps on the
embedded single-node cluster.

Usage: test_pip.py PYTHON BUILD_DIR SOURCE_DIR
"""

import os
import subprocess
import sys
import tempfile

PYTHON, BUILD, SOURCE = sys.argv[1:4]

CHECK = """
import os, sys
import kiln
assert kiln.__file__.startswith(sys.prefix), (kiln.__file__, sys.prefix)
with kiln.make("noop-v0") as env:
    env.reset()
    observation, reward, terminated, truncated, info = env.step(3)
    observation, reward, terminated, truncated, info = env.step(4)
print("kiln", kiln.__version__, "from", os.path.dirname(kiln.__file__), "sum", observation)
assert observation == 7, observation
"""


def main():
    with tempfile.TemporaryDirectory(prefix="kiln-pip-") as scratch:
        venv = os.path.join(scratch, "venv")
        subprocess.run([PYTHON, "-m", "venv", "--system-site-packages", venv], check=True)
        pip = os.path.join(venv, "bin", "pip")
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        env["KILN_BUILD_DIR"] = BUILD
        # setup.py's scratch (kiln-python-<uid>, a cache kept on purpose for
        # builds without KILN_BUILD_DIR) and the embedded cluster's files go
        # in here, removed with it: the suite leaves TMPDIR as it found it.
        env["TMPDIR"] = scratch
        env["PIP_NO_CACHE_DIR"] = "1"
        env["PIP_CONFIG_FILE"] = os.devnull  # this machine's pip settings are not a fresh one's
        env.pop("PIP_FIND_LINKS", None)
        subprocess.run([pip, "install", "--no-build-isolation", "--no-index",
                        os.path.join(SOURCE, "python")], check=True, env=env, cwd=scratch)
        env.pop("KILN_BUILD_DIR")
        result = subprocess.run([os.path.join(venv, "bin", "python"), "-c", CHECK],
                                capture_output=True, text=True, env=env, cwd=scratch,
                                timeout=300)
        print(result.stdout, result.stderr)
        assert result.returncode == 0, result.stderr
    print("pip install into a venv, import from anywhere, a step: ok")


if __name__ == "__main__":
    main()
