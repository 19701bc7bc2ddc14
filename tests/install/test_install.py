"""kiln installed with `cmake --install` into a scratch prefix (not /usr):
the layout the packages have (test_deb.py), under any prefix: bin/kiln,
include/kiln/ with only the public headers, the static libraries and the
CMake package in lib/<multiarch>/, the Python package in
lib/python3/dist-packages/kiln; and the installed `kiln --version` runs.
The examples are built and run against the packages' root (test_deb.py).

Usage: test_install.py BUILD_DIR PYTHON_BUILT(ON|OFF)
"""

import glob
import os
import subprocess
import sys
import tempfile

from install_checks import check_public_headers, run

BUILD, PYTHON_BUILT = sys.argv[1], sys.argv[2] == "ON"


def main():
    multiarch = run(["dpkg-architecture", "-qDEB_HOST_MULTIARCH"], capture_output=True,
                    text=True).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="kiln-install-") as scratch:
        prefix = os.path.join(scratch, "prefix")
        run(["cmake", "--install", BUILD, "--prefix", prefix], stdout=subprocess.DEVNULL)
        kiln = os.path.join(prefix, "bin", "kiln")
        version = run([kiln, "--version"], capture_output=True, text=True).stdout.split("\n")
        assert version[0].startswith("kiln "), version
        assert version[1].startswith("protocol "), version
        assert version[2].startswith("LLVM "), version

        check_public_headers(os.path.join(prefix, "include"))
        libdir = os.path.join(prefix, "lib", multiarch)
        assert glob.glob(os.path.join(libdir, "libkiln_*.a")), f"no libkiln_*.a in {libdir}"
        for name in ("kilnConfig.cmake", "kilnCoreTargets.cmake", "kilnClientTargets.cmake",
                     "kilnSessionTargets.cmake"):
            path = os.path.join(libdir, "cmake", "kiln", name)
            assert os.path.exists(path), f"{path} is not installed"
        loose = [name for name in os.listdir(os.path.join(prefix, "lib"))
                 if name not in (multiarch, "python3")]
        assert not loose, f"in lib/ rather than lib/{multiarch}: {loose}"
        if PYTHON_BUILT:
            package = os.path.join(prefix, "lib", "python3", "dist-packages", "kiln")
            for pattern in ("__init__.py", "error_codes.py", "_kiln.*.so"):
                assert glob.glob(os.path.join(package, pattern)), f"no {pattern} in {package}"
    print("cmake --install into a scratch prefix: the packages' layout: ok")


if __name__ == "__main__":
    main()
