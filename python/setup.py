"""Builds kiln's Python package: the pure-Python modules in kiln/ and the
extension kiln._kiln, compiled by kiln's own CMake build of the repository
this folder belongs to (target kiln_python_ext).

KILN_BUILD_DIR=<a configured kiln build directory> reuses that build (the
extension is then only brought up to date); otherwise a Release build is
configured in a directory of its own under the temporary directory, which
takes as long as building kiln. Nothing is written into the source tree.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SCRATCH = Path(tempfile.gettempdir()) / f"kiln-python-{os.getuid()}"


def kiln_version():
    text = (ROOT / "CMakeLists.txt").read_text()
    found = re.search(r"project\(kiln VERSION ([0-9.]+)", text)
    if found is None:
        sys.exit(f"kiln: no project(kiln VERSION ...) in {ROOT / 'CMakeLists.txt'}")
    return found.group(1)


class BuildWithCMake(build_ext):
    def build_extension(self, ext):
        given = os.environ.get("KILN_BUILD_DIR")
        build = Path(given).resolve() if given else SCRATCH / "cmake"
        interpreter = os.path.realpath(sys.executable)
        if not (build / "CMakeCache.txt").exists():
            if given:
                sys.exit(f"kiln: KILN_BUILD_DIR={given} is not a configured build directory")
            generator = ["-G", "Ninja"] if shutil.which("ninja") else []
            subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build), *generator,
                            "-DCMAKE_BUILD_TYPE=Release",
                            f"-DKILN_PYTHON_EXECUTABLE={interpreter}"], check=True)
        subprocess.run(["cmake", "--build", str(build), "--target", "kiln_python_ext",
                        "--parallel", str(os.cpu_count() or 1)], check=True)
        built = sorted((build / "python" / "kiln").glob("_kiln*.so"))
        if not built:
            sys.exit(f"kiln: the build in {build} made no kiln/_kiln*.so "
                     "(is python3-dev / python3-pybind11 installed?)")
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built[-1], target)
        # The error classes' table, generated from schema/error_codes.txt.
        shutil.copy2(build / "generated" / "python" / "error_codes.py", target.parent / "error_codes.py")


setup(
    version=kiln_version(),
    packages=["kiln"],
    package_dir={"kiln": "kiln"},
    # PEP 561: the package is typed, the extension by its stub.
    package_data={"kiln": ["py.typed", "_kiln.pyi"]},
    ext_modules=[Extension("kiln._kiln", sources=[])],
    cmdclass={"build_ext": BuildWithCMake},
    # setuptools' own scratch space stays out of the source tree too.
    options={"build": {"build_base": str(SCRATCH / "setuptools")},
             "egg_info": {"egg_base": str(SCRATCH)}},
)
