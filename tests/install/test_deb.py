"""kiln as a Debian package: `cpack -G DEB` from the build directory, the
package unpacked with dpkg into a scratch root (dpkg -x: no system change),
and `kiln --version` run from there; the package's control data names the
libraries it needs (from dpkg-shlibdeps) and the LLVM 19 tools.

Usage: test_deb.py BUILD_DIR
"""

import glob
import os
import subprocess
import sys
import tempfile

BUILD = sys.argv[1]


def main():
    with tempfile.TemporaryDirectory(prefix="kiln-deb-") as scratch:
        out = os.path.join(scratch, "out")
        subprocess.run(["cpack", "-G", "DEB", "-B", out, "--config",
                        os.path.join(BUILD, "CPackConfig.cmake")], check=True,
                       stdout=subprocess.DEVNULL)
        packages = glob.glob(os.path.join(out, "kiln_*.deb"))
        assert len(packages) == 1, packages
        control = subprocess.run(["dpkg-deb", "--field", packages[0], "Package", "Version",
                                  "Depends"], capture_output=True, text=True, check=True).stdout
        print(control)
        assert "Package: kiln" in control, control
        for needed in ("llvm-19", "libzmq5", "libcapnp", "libsodium23"):
            assert needed in control, f"{needed} missing from the package's Depends: {control}"

        root = os.path.join(scratch, "root")
        subprocess.run(["dpkg", "-x", packages[0], root], check=True)
        for path in ("usr/bin/kiln", "usr/include/kiln/kit/run_worker.h",
                     "usr/lib/cmake/kiln/kilnConfig.cmake"):
            assert os.path.exists(os.path.join(root, path)), f"{path} is not in the package"
        version = subprocess.run([os.path.join(root, "usr", "bin", "kiln"), "--version"],
                                 capture_output=True, text=True, check=True, timeout=60)
        print(version.stdout)
        lines = version.stdout.splitlines()
        assert lines[0].startswith("kiln ") and lines[0].split()[1] in control, lines
        assert lines[1].startswith("protocol ") and lines[2].startswith("LLVM 19."), lines
    print("cpack -G DEB, dpkg -x into a scratch root, kiln --version: ok")


if __name__ == "__main__":
    main()
