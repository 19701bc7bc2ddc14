// Which version of a Debian source package to fetch: the versions apt knows
// (`apt-cache showsrc`), newest first by Debian's ordering, so a version a
// mirror does not serve (e.g. a security update missing from its pool) can be
// passed over for the next one. Pure.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kiln::debian {

// Debian's version order (deb-version(7): epoch, upstream version, revision;
// "~" sorts before everything, even the end). <0, 0, >0 like strcmp.
int compareDebianVersions(std::string_view a, std::string_view b);

// The "Version:" of every stanza of `apt-cache showsrc` output whose
// "Package:" is `package` (showsrc also lists packages that merely build a
// binary of that name), newest first, without duplicates.
std::vector<std::string> sourceVersionsNewestFirst(std::string_view showsrcOutput,
                                                   std::string_view package);

}  // namespace kiln::debian
