"""kiln's Debian packages (docs/install.md) as a user takes them: one
`cpack -G DEB` of the build directory, every package unpacked with dpkg -x
into one scratch root (no system change), then:
- the packages are kiln, kiln-dev, python3-kiln and the -dbgsym of the
  binary and of the extension; no file is in two of them; libraries and the
  CMake package are in the multiarch directory;
- their control data: kiln-dev depends on exactly the packages that hold
  what its kilnConfig.cmake finds (asked of dpkg -S), kiln and python3-kiln
  on LLVM 19 and what dpkg-shlibdeps found, python3-kiln on python3-numpy;
- no debug info in the packages but in the -dbgsym ones;
- every installed header compiles alone, with only <root>/usr/include added;
- the packaged `kiln --version` names the package's version and LLVM 19;
- examples/cpp_client builds with find_package(kiln COMPONENTS client)
  where finding CLI11 is disabled, examples/cpp_session with find_package(kiln),
  and both run in a cluster of the packaged kiln;
- /usr/bin/python3 imports kiln from the unpacked dist-packages, has its
  error classes and steps an env on the embedded cluster.

Usage: test_deb.py BUILD_DIR SOURCE_DIR CMAKE_GENERATOR PYTHON_BUILT(ON|OFF)
"""

import concurrent.futures
import glob
import os
import re
import subprocess
import sys
import tempfile

from install_checks import build_example, check_public_headers, run, run_counter_cluster

BUILD, SOURCE, GENERATOR = sys.argv[1:4]
PYTHON_BUILT = sys.argv[4] == "ON"


def make_packages(out):
    """{package name: file} of one cpack run."""
    run(["cpack", "-G", "DEB", "-B", out, "--config", os.path.join(BUILD, "CPackConfig.cmake")],
        stdout=subprocess.DEVNULL)
    packages = {}
    for path in glob.glob(os.path.join(out, "*.deb")) + glob.glob(os.path.join(out, "*.ddeb")):
        packages[field(path, "Package")] = path
    expected = {"kiln", "kiln-dev", "kiln-dbgsym"}
    if PYTHON_BUILT:
        expected |= {"python3-kiln", "python3-kiln-dbgsym"}
    assert set(packages) == expected, sorted(packages)
    for name, path in sorted(packages.items()):
        print(f"{name}: {os.path.getsize(path) / 1e6:.1f} MB", flush=True)
    return packages


def field(package, name):
    return run(["dpkg-deb", "--field", package, name], capture_output=True,
               text=True).stdout.strip()


def depends_names(text):
    """The package names of a Depends/Recommends field, alternatives included."""
    names = set()
    for entry in filter(None, (part.strip() for part in re.split(r"[,|]", text))):
        names.add(entry.split()[0])
    return names


def files_of(package):
    listing = run(["dpkg-deb", "--fsys-tarfile", package], capture_output=True).stdout
    members = run(["tar", "-t"], input=listing, capture_output=True).stdout.decode()
    return {line[2:] for line in members.splitlines() if not line.endswith("/")}


def check_contents(packages, multiarch):
    """Each package's files where Debian puts them; none in two packages."""
    allowed = {
        "kiln": (r"usr/bin/kiln$",),
        "kiln-dev": (r"usr/include/kiln/.+\.h$", rf"usr/lib/{multiarch}/libkiln_\w+\.a$",
                     rf"usr/lib/{multiarch}/cmake/kiln/kiln[\w-]+\.cmake$"),
        "python3-kiln": (r"usr/lib/python3/dist-packages/kiln/[\w.-]+\.(py|pyi|so)$",
                         r"usr/lib/python3/dist-packages/kiln/py\.typed$"),
        "kiln-dbgsym": (r"usr/lib/debug/\.build-id/",),
        "python3-kiln-dbgsym": (r"usr/lib/debug/\.build-id/",),
    }
    owner = {}
    for name, path in packages.items():
        files = files_of(path)
        assert files, f"{name} is empty"
        for file in files:
            assert any(re.match(pattern, file) for pattern in allowed[name]), \
                f"{file} of {name} is not where it belongs"
            assert file not in owner, f"{file} is in {owner[file]} and {name}"
            owner[file] = name


def check_runtime_fields(packages):
    depends = depends_names(field(packages["kiln"], "Depends"))
    for needed in ("llvm-19", "libzmq5", "libsodium23"):
        assert needed in depends, f"{needed} missing from kiln's Depends: {depends}"
    assert any(name.startswith("libcapnp") for name in depends), depends
    recommends = depends_names(field(packages["kiln"], "Recommends"))
    assert {"clang-19", "csmith"} <= recommends, recommends
    if PYTHON_BUILT:
        depends = depends_names(field(packages["python3-kiln"], "Depends"))
        for needed in ("python3", "python3-numpy", "llvm-19", "libzmq5"):
            assert needed in depends, f"{needed} missing from python3-kiln's Depends: {depends}"


def owning_package(path):
    # "libcapnp-dev:amd64: /usr/lib/..." -> libcapnp-dev
    owner = run(["dpkg", "-S", path], capture_output=True, text=True).stdout
    return owner.split(": ")[0].split(":")[0]


def cache_entries():
    entries = {}
    with open(os.path.join(BUILD, "CMakeCache.txt")) as cache:
        for line in cache:
            match = re.match(r"([\w-]+):\w+=(.*)", line)
            if match:
                entries[match[1]] = match[2]
    return entries


def config_needs(config):
    """The Debian package of each find_dependency() and pkg_check_modules()
    of kilnConfig.cmake: the package holding the file kiln's build found."""
    cache = cache_entries()
    needs = {}
    for name in re.findall(r"find_dependency\((\w+)", config):
        if name == "Threads":
            continue  # libc6-dev: part of every C++ toolchain
        if name == "PkgConfig":
            needs[name] = owning_package(cache["PKG_CONFIG_EXECUTABLE"])
            continue
        directory = cache[f"{name}_DIR"]
        candidates = [os.path.join(directory, f"{name}Config.cmake"),
                      os.path.join(directory, f"{name.lower()}-config.cmake")]
        found = [path for path in candidates if os.path.exists(path)]
        assert found, f"no config file of {name} in {directory}"
        needs[name] = owning_package(found[0])
    for module in re.findall(r"pkg_check_modules\(\w+ REQUIRED IMPORTED_TARGET ([\w.+-]+)\)",
                             config):
        pcdir = run(["pkg-config", "--variable=pcfiledir", module], capture_output=True,
                    text=True).stdout.strip()
        needs[module] = owning_package(os.path.join(pcdir, f"{module}.pc"))
    return needs


def check_dev_depends(packages, root, multiarch):
    with open(os.path.join(root, "usr", "lib", multiarch, "cmake", "kiln",
                           "kilnConfig.cmake")) as config:
        needs = config_needs(config.read())
    print("kilnConfig.cmake needs", needs, flush=True)
    assert len(needs) >= 7, needs  # CapnProto, cppzmq, spdlog, fmt, CLI11, libsodium, httplib
    depends = depends_names(field(packages["kiln-dev"], "Depends"))
    assert depends == set(needs.values()), \
        f"kiln-dev Depends {sorted(depends)}, its CMake config needs {sorted(needs.values())}"


def sections(path):
    return run(["readelf", "-S", "--wide", path], capture_output=True, text=True).stdout


def build_id(path):
    notes = run(["readelf", "-n", path], capture_output=True, text=True).stdout
    return re.search(r"Build ID: ([0-9a-f]+)", notes)[1]


def check_debug_info_apart(root, multiarch):
    archives = glob.glob(os.path.join(root, "usr", "lib", multiarch, "libkiln_*.a"))
    assert archives
    for archive in archives:
        assert ".debug_info" not in sections(archive), f"{archive} has debug info"
        # Stripped of debug info only: its index and global symbols stay.
        symbols = run(["nm", "--print-armap", "--defined-only", archive], capture_output=True,
                      text=True).stdout
        assert "Archive index:" in symbols, f"{archive} lost its index"
        assert re.search(r"^[0-9a-f]+ [BDGRSTVWu] ", symbols, re.MULTILINE), \
            f"{archive} has no global symbols left to link"
    binaries = [os.path.join(root, "usr", "bin", "kiln")]
    binaries += glob.glob(os.path.join(root, "usr", "lib", "python3", "dist-packages", "kiln",
                                       "_kiln.*.so"))
    for binary in binaries:
        assert ".debug_info" not in sections(binary), f"{binary} has debug info"
        identity = build_id(binary)
        debug = os.path.join(root, "usr", "lib", "debug", ".build-id", identity[:2],
                             identity[2:] + ".debug")
        assert ".debug_info" in sections(debug), f"no debug info of {binary} in {debug}"


def compile_alone(root, header):
    result = subprocess.run(["c++", "-std=c++20", "-fsyntax-only", "-I",
                             os.path.join(root, "usr", "include"), "-x", "c++", header],
                            capture_output=True, text=True)
    return header, result


def check_headers_compile(root):
    headers = glob.glob(os.path.join(root, "usr", "include", "kiln", "**", "*.h"), recursive=True)
    assert len(headers) > 10, headers
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        failed = [(header, result.stderr) for header, result in
                  pool.map(lambda header: compile_alone(root, header), headers)
                  if result.returncode != 0]
    assert not failed, "headers that do not compile alone:\n" + "\n".join(
        f"{header}:\n{errors}" for header, errors in failed)
    print(f"{len(headers)} installed headers compile alone", flush=True)


# examples/cpp_client as it would be with find_package(kiln COMPONENTS
# client): finding CLI11 (kiln::session's) is disabled, and nothing of the
# session component, of cpp-httplib or LLVM may be defined.
CLIENT_ONLY = """cmake_minimum_required(VERSION 3.25)
project(kiln_client_only LANGUAGES CXX)
set(CMAKE_CXX_STANDARD 20)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_DISABLE_FIND_PACKAGE_CLI11 ON)
find_package(kiln 0.1 REQUIRED COMPONENTS client)
if(NOT kiln_DIR STREQUAL "{kiln_dir}")
  message(FATAL_ERROR "found kiln in ${{kiln_DIR}}, not in the unpacked packages")
endif()
foreach(target kiln::session kiln::worker CLI11::CLI11 PkgConfig::KILN_HTTPLIB LLVMSupport)
  if(TARGET ${{target}})
    message(FATAL_ERROR "find_package(kiln COMPONENTS client) defined ${{target}}")
  endif()
endforeach()
add_subdirectory({example} example)
"""


def check_version(root, packages):
    version = run([os.path.join(root, "usr", "bin", "kiln"), "--version"], capture_output=True,
                  text=True, timeout=60).stdout.splitlines()
    assert version[0] == "kiln " + field(packages["kiln"], "Version"), version
    assert version[1].startswith("protocol ") and version[2].startswith("LLVM 19."), version


def check_examples(root, multiarch, scratch):
    prefix = os.path.join(root, "usr")
    wrapper = os.path.join(scratch, "client-only")
    os.makedirs(wrapper)
    with open(os.path.join(wrapper, "CMakeLists.txt"), "w") as lists:
        lists.write(CLIENT_ONLY.format(
            kiln_dir=os.path.join(prefix, "lib", multiarch, "cmake", "kiln"),
            example=os.path.join(SOURCE, "examples", "cpp_client")))
    client_build = os.path.join(scratch, "client")
    build_example(wrapper, client_build, GENERATOR, prefix)
    worker_build = os.path.join(scratch, "session")
    build_example(os.path.join(SOURCE, "examples", "cpp_session"), worker_build, GENERATOR,
                  prefix)
    run_counter_cluster(os.path.join(prefix, "bin", "kiln"),
                        os.path.join(worker_build, "kiln-counter-worker"),
                        os.path.join(client_build, "example", "kiln-counter-client"))


PYTHON_CHECK = """
import os, sys
import kiln
import kiln.error_codes
assert kiln.__file__.startswith(sys.argv[1]), kiln.__file__
expected = sys.argv[2].split(",")
classes = [row[0] for row in kiln.error_codes.CODES if row[0]]
assert classes == expected, (classes, expected)
for name in classes:
    assert issubclass(getattr(kiln.errors, name), kiln.KilnError), name
with kiln.make("noop-v0") as env:
    env.reset()
    env.step(3)
    observation, reward, terminated, truncated, info = env.step(4)
assert observation == 7, observation
print("kiln", kiln.__version__, "from", os.path.dirname(kiln.__file__))
"""


def error_classes():
    """The Python classes of schema/error_codes.txt, in order."""
    classes = []
    with open(os.path.join(SOURCE, "schema", "error_codes.txt")) as table:
        for line in table:
            if line.strip() and not line.startswith("#"):
                python_class = line.split(";")[4]
                if python_class:
                    classes.append(python_class)
    return classes


def check_python(root, scratch):
    packages = os.path.join(root, "usr", "lib", "python3", "dist-packages")
    env = dict(os.environ, PYTHONPATH=packages, TMPDIR=scratch)
    result = subprocess.run(["/usr/bin/python3", "-c", PYTHON_CHECK, packages,
                             ",".join(error_classes())],
                            capture_output=True, text=True, env=env, cwd=scratch, timeout=300)
    print(result.stdout, result.stderr, flush=True)
    assert result.returncode == 0, result.stderr


def main():
    multiarch = run(["dpkg-architecture", "-qDEB_HOST_MULTIARCH"], capture_output=True,
                    text=True).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="kiln-deb-") as scratch:
        packages = make_packages(os.path.join(scratch, "out"))
        check_contents(packages, multiarch)
        root = os.path.join(scratch, "root")
        for path in packages.values():
            run(["dpkg", "-x", path, root])
        check_runtime_fields(packages)
        check_dev_depends(packages, root, multiarch)
        check_debug_info_apart(root, multiarch)
        check_public_headers(os.path.join(root, "usr", "include"))
        check_headers_compile(root)
        check_version(root, packages)
        check_examples(root, multiarch, scratch)
        if PYTHON_BUILT:
            check_python(root, scratch)
    print("cpack -G DEB, the packages unpacked side by side, built on and run: ok")


if __name__ == "__main__":
    main()
