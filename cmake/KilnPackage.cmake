# `cpack -G DEB` in the build directory: Debian packages like Debian's own,
# one per install component (cmake/KilnInstall.cmake), all from one run:
#   kiln          runtime  /usr/bin/kiln
#   kiln-dev      dev      headers, static libraries, the CMake package
#   python3-kiln  python   the Python package in /usr/lib/python3/dist-packages
#   kiln-dbgsym, python3-kiln-dbgsym   the debug info of the binary and of the
#                 extension (.ddeb), split off by CPack
# The static libraries of kiln-dev lose their debug info (strip --strip-debug,
# as Debian's dh_strip does; kiln_strip_archives.cmake.in). Whatever prefix
# the build was configured with, the packages install under /usr.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME kiln)
set(CPACK_PACKAGE_VENDOR "kiln")
set(CPACK_PACKAGE_CONTACT "kiln developers <kiln@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "distributed worker pool for compiler reinforcement-learning sessions")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL runtime dev)
if(KILN_PYTHON_BUILT)
  list(APPEND CPACK_COMPONENTS_ALL python)
endif()
# The libraries a binary or the extension loads come from dpkg-shlibdeps.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# CPack splits the debug info of every unstripped ELF file (the binary, the
# extension) into <package>-dbgsym; so nothing is stripped at install.
set(CPACK_STRIP_FILES OFF)
set(CPACK_DEBIAN_DEBUGINFO_PACKAGE ON)
configure_file(${PROJECT_SOURCE_DIR}/cmake/kiln_strip_archives.cmake.in
               ${PROJECT_BINARY_DIR}/kiln_strip_archives.cmake @ONLY)
set(CPACK_PRE_BUILD_SCRIPTS ${PROJECT_BINARY_DIR}/kiln_strip_archives.cmake)

# The tools the session types run (opt-19, llc-19; clang-19 and csmith for
# some datasets): needed by the binary and by the Python package's embedded
# cluster alike.
if(KILN_WITH_LLVM)
  set(kiln_llvm_depends ", llvm-19")
  set(kiln_llvm_recommends "clang-19, csmith")
endif()

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME kiln)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION devel)
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION
    "kiln: the coordinator, workers, nesting hosts and the tools, in one binary")
if(KILN_WITH_LLVM)
  set(CPACK_DEBIAN_RUNTIME_PACKAGE_DEPENDS "llvm-19")
  set(CPACK_DEBIAN_RUNTIME_PACKAGE_RECOMMENDS "${kiln_llvm_recommends}")
endif()

# kiln-dev depends on the package of each find_dependency() of
# kilnConfig.cmake (tests/install/test_deb.py checks them against dpkg -S):
# CapnProto, cppzmq, spdlog, fmt, CLI11; libsodium and cpp-httplib through
# pkg-config (pkgconf).
set(CPACK_DEBIAN_DEV_PACKAGE_NAME kiln-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_COMPONENT_DEV_DESCRIPTION
    "kiln: headers, static libraries and the CMake package (find_package(kiln))")
string(CONCAT CPACK_DEBIAN_DEV_PACKAGE_DEPENDS
       "libcapnp-dev, cppzmq-dev, libspdlog-dev, libfmt-dev, libcli11-dev, libsodium-dev, "
       "libcpp-httplib-dev, pkgconf")

if(KILN_PYTHON_BUILT)
  # The extension is built for one Python (its suffix names it, e.g.
  # .cpython-311-x86_64-linux-gnu.so); the package imports numpy.
  get_target_property(kiln_python_suffix kiln_python_ext SUFFIX)
  string(REGEX MATCH "cpython-([0-9])([0-9]+)" kiln_python_tag "${kiln_python_suffix}")
  set(kiln_python_major ${CMAKE_MATCH_1})
  set(kiln_python_minor ${CMAKE_MATCH_2})
  math(EXPR kiln_python_next "${kiln_python_minor} + 1")
  set(CPACK_DEBIAN_PYTHON_PACKAGE_NAME python3-kiln)
  set(CPACK_DEBIAN_PYTHON_PACKAGE_SECTION python)
  set(CPACK_COMPONENT_PYTHON_DESCRIPTION
      "kiln: the Python package (kiln, its CompilerGym-compatible module and the embedded cluster)")
  string(CONCAT CPACK_DEBIAN_PYTHON_PACKAGE_DEPENDS
         "python3 (>= ${kiln_python_major}.${kiln_python_minor}), "
         "python3 (<< ${kiln_python_major}.${kiln_python_next}), python3-numpy${kiln_llvm_depends}")
  if(KILN_WITH_LLVM)
    set(CPACK_DEBIAN_PYTHON_PACKAGE_RECOMMENDS "${kiln_llvm_recommends}")
  endif()
endif()
include(CPack)
