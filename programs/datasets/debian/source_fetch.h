// Debian source packages fetched without touching the system's apt: a
// private apt state under kiln's cache directory (a sources.list of deb-src
// lines for the archives the system's deb lines name, its own lists and
// cache), `apt-get update` and `apt-get source --download-only`, then
// `dpkg-source -x` to unpack with Debian's patches (or without). Downloads
// and unpacked trees stay in the cache: a package unpacked once is served
// from there with no network. Mechanism; the text handling is in
// programs/datasets/debian/apt_sources.h and source_versions.h.
//
// Cache layout, below <cache>/debian:
//   apt/sources.list, apt/lists/, apt/cache/   the private apt state
//   sources/<package>/download/                .dsc, tarballs
//   sources/<package>/version                  the version unpacked
//   sources/<package>/patched|upstream/        the unpacked trees
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include <kiln/status.h>

namespace kiln::debian {

struct FetchOptions {
  std::filesystem::path cacheDirectory;  // kiln's cache (the layout goes below debian/)
  std::filesystem::path aptConfiguration = "/etc/apt";  // read only: sources.list(.d)
  std::chrono::seconds toolTimeout{600};                // each apt-get and dpkg-source run
};

struct FetchedSource {
  std::string package;
  std::string version;
  std::filesystem::path tree;  // the unpacked source
  bool fromCache = false;      // no network was used
};

// The deb-src lines for the deb repositories the system's apt configuration
// names (sources.list and sources.list.d/*.list, *.sources). not-found when
// it names none; invalid-argument naming the file for one apt would reject.
Result<std::string> systemDebSrcList(const std::filesystem::path& aptConfiguration);

class SourceFetcher {
 public:
  // Creates the cache layout. permission-denied or invalid-argument naming the
  // directory when it cannot be created or written.
  static Result<SourceFetcher> create(FetchOptions options);

  // The unpacked tree of `package`, from the cache when it was unpacked
  // before. Otherwise the private lists are updated (once per fetcher) and
  // the newest version the archive serves is downloaded: a version whose
  // files a mirror lacks is passed over for the next older one. not-found
  // when the archive has no such source package; disconnected when no
  // version could be downloaded (the last apt error is in the message).
  Result<FetchedSource> fetch(const std::string& package, bool debianPatches);

 private:
  explicit SourceFetcher(FetchOptions options);
  std::filesystem::path aptDirectory() const;
  std::vector<std::string> aptOptions() const;
  Status updateLists();
  Result<std::string> download(const std::string& package,
                               const std::filesystem::path& downloadDirectory);
  Status unpack(const std::filesystem::path& dsc, bool debianPatches,
                const std::filesystem::path& target);

  FetchOptions options_;
  bool listsUpdated_ = false;
};

}  // namespace kiln::debian
