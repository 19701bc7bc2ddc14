// The Debian archives a machine already uses, read from its apt sources
// (one-line sources.list and deb822 .sources), turned into the deb-src lines of
// kiln's private apt state. Pure text in, text out: the files are read and
// apt is run elsewhere (programs/datasets/debian/source_fetch.h).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <kiln/status.h>

namespace kiln::debian {

// One archive suite the system installs binaries from ("deb" lines only).
struct AptRepository {
  std::string options;  // the one-line form's "[...]" contents, e.g. "signed-by=/usr/share/..."
  std::string uri;      // http://deb.debian.org/debian
  std::string suite;    // bookworm, bookworm-security, or a flat repository's "./"
  std::vector<std::string> components;  // main contrib ...; empty for a flat repository

  bool operator==(const AptRepository&) const = default;
};

// `deb [options] uri suite [component...]` lines; deb-src lines, comments and
// blank lines are ignored. invalid-argument naming the line for a deb line
// without a suite, an unclosed "[", or a suite without components that is not
// flat (does not end in "/").
Result<std::vector<AptRepository>> parseOneLineSources(std::string_view text);

// deb822 stanzas (Types/URIs/Suites/Components/Signed-By/Enabled); one
// repository per URI and suite of each enabled stanza whose Types include
// "deb". An embedded (multi-line) Signed-By key is dropped: apt then checks
// against its default keyrings. invalid-argument naming the stanza for one
// without URIs or Suites.
Result<std::vector<AptRepository>> parseDeb822Sources(std::string_view text);

// The deb-src lines for these repositories, one per repository in order,
// duplicates left out: "deb-src [options] uri suite components\n".
std::string debSrcList(const std::vector<AptRepository>& repositories);

}  // namespace kiln::debian
