# `cpack -G DEB` in the build directory: one Debian package with what
# `cmake --install` puts under /usr (cmake/KilnInstall.cmake). The libraries'
# dependencies come from dpkg-shlibdeps; the tools the session types run
# (opt-19, llc-19, clang-19, csmith) are named here.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME kiln)
set(CPACK_PACKAGE_VENDOR "kiln")
set(CPACK_PACKAGE_CONTACT "kiln developers <kiln@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "distributed worker pool for compiler reinforcement-learning sessions")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)  # the binary; static libraries keep their symbols
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
if(KILN_WITH_LLVM)
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "llvm-19")
  set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "clang-19, csmith")
endif()
include(CPack)
