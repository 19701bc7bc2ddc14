#include "programs/datasets/debian/source_fetch.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "common/process/subprocess.h"
#include "programs/datasets/debian/apt_sources.h"
#include "programs/datasets/debian/source_versions.h"

namespace kiln::debian {

namespace fs = std::filesystem;

namespace {

Result<std::string> readText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return notFound("cannot read " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

Status writeText(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return permissionDenied("cannot write " + path.string());
  return okStatus();
}

Status makeDirectory(const fs::path& directory) {
  std::error_code error;
  fs::create_directories(directory, error);
  if (error) {
    return permissionDenied("cannot create the cache directory " + directory.string() + ": " +
                            error.message() + " (give a writable one with --cache-dir)");
  }
  if (::access(directory.c_str(), W_OK | X_OK) != 0) {
    return permissionDenied("the cache directory " + directory.string() +
                            " is not writable (give a writable one with --cache-dir)");
  }
  return okStatus();
}

// The last lines of a tool's output, for an error message.
std::string lastLines(const std::string& text, std::size_t count) {
  std::size_t end = text.find_last_not_of('\n');
  if (end == std::string::npos) return {};
  std::size_t start = end + 1;
  for (std::size_t n = 0; n < count && start > 0; ++n) {
    std::size_t newline = text.rfind('\n', start - 1);
    start = newline == std::string::npos ? 0 : newline;
    if (newline == std::string::npos) break;
  }
  std::string tail = text.substr(start, end + 1 - start);
  if (!tail.empty() && tail.front() == '\n') tail.erase(0, 1);
  return tail;
}

Result<ProcessOutput> runTool(const std::vector<std::string>& argv, std::chrono::seconds timeout,
                              const fs::path& workingDirectory = {}) {
  SubprocessOptions options;
  options.workingDirectory = workingDirectory;
  options.dieWithParent = true;
  return runSubprocess(argv, timeout, options);
}

// "zlib_1:1.2.13.dfsg-1" -> the .dsc dpkg-source reads: the epoch is not in file names.
fs::path dscFile(const fs::path& downloadDirectory, const std::string& package,
                 const std::string& version) {
  std::size_t colon = version.find(':');
  std::string withoutEpoch = colon == std::string::npos ? version : version.substr(colon + 1);
  return downloadDirectory / (package + "_" + withoutEpoch + ".dsc");
}

bool validPackageName(const std::string& package) {
  // Debian policy 5.6.1: lower-case letters, digits, + - . ; at least two, alphanumeric first.
  if (package.size() < 2 || package.size() > 100 ||
      !std::isalnum(static_cast<unsigned char>(package[0]))) {
    return false;
  }
  return std::all_of(package.begin(), package.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.';
  });
}

}  // namespace

Result<std::string> systemDebSrcList(const fs::path& aptConfiguration) {
  std::vector<AptRepository> repositories;
  auto take = [&](const fs::path& file, bool deb822) -> Status {
    KILN_ASSIGN_OR_RETURN(std::string text, readText(file));
    auto parsed = deb822 ? parseDeb822Sources(text) : parseOneLineSources(text);
    if (!parsed.ok()) return invalidArgument(file.string() + ": " + parsed.status().message());
    repositories.insert(repositories.end(), parsed->begin(), parsed->end());
    return okStatus();
  };
  std::error_code error;
  if (fs::path main = aptConfiguration / "sources.list"; fs::is_regular_file(main, error)) {
    KILN_RETURN_IF_ERROR(take(main, false));
  }
  std::vector<fs::path> parts;
  for (const auto& entry : fs::directory_iterator(aptConfiguration / "sources.list.d", error)) {
    parts.push_back(entry.path());
  }
  std::sort(parts.begin(), parts.end());  // apt reads them in this order
  for (const fs::path& part : parts) {
    if (part.extension() == ".list") KILN_RETURN_IF_ERROR(take(part, false));
    if (part.extension() == ".sources") KILN_RETURN_IF_ERROR(take(part, true));
  }
  if (repositories.empty()) {
    return notFound("the apt configuration in " + aptConfiguration.string() +
                    " names no deb repository to fetch Debian sources from");
  }
  return debSrcList(repositories);
}

SourceFetcher::SourceFetcher(FetchOptions options) : options_(std::move(options)) {}

Result<SourceFetcher> SourceFetcher::create(FetchOptions options) {
  if (options.cacheDirectory.empty()) return invalidArgument("no cache directory given");
  SourceFetcher fetcher(std::move(options));
  fs::path apt = fetcher.aptDirectory();
  for (const fs::path& directory :
       {apt / "lists" / "partial", apt / "cache" / "archives" / "partial",
        fetcher.options_.cacheDirectory / "debian" / "sources"}) {
    KILN_RETURN_IF_ERROR(makeDirectory(directory));
  }
  return fetcher;
}

fs::path SourceFetcher::aptDirectory() const { return options_.cacheDirectory / "debian" / "apt"; }

std::vector<std::string> SourceFetcher::aptOptions() const {
  fs::path apt = aptDirectory();
  return {"-o", "Dir::Etc::SourceList=" + (apt / "sources.list").string(),
          "-o", "Dir::Etc::SourceParts=/dev/null",
          "-o", "Dir::State::Lists=" + (apt / "lists").string(),
          "-o", "Dir::Cache=" + (apt / "cache").string(),
          "-o", "Debug::NoLocking=1"};
}

Status SourceFetcher::updateLists() {
  if (listsUpdated_) return okStatus();
  KILN_ASSIGN_OR_RETURN(std::string sources, systemDebSrcList(options_.aptConfiguration));
  KILN_RETURN_IF_ERROR(writeText(aptDirectory() / "sources.list", sources));
  std::vector<std::string> argv = {"apt-get", "-q"};
  for (std::string& option : aptOptions()) argv.push_back(std::move(option));
  argv.push_back("update");
  KILN_ASSIGN_OR_RETURN(ProcessOutput output, runTool(argv, options_.toolTimeout));
  if (!output.status.success()) {
    return disconnected("apt-get update of kiln's deb-src lists " + output.status.describe() +
                        ":\n" + lastLines(output.stderrText + output.stdoutText, 6));
  }
  listsUpdated_ = true;
  return okStatus();
}

Result<std::string> SourceFetcher::download(const std::string& package,
                                            const fs::path& downloadDirectory) {
  KILN_RETURN_IF_ERROR(updateLists());
  std::vector<std::string> showsrc = {"apt-cache"};
  for (std::string& option : aptOptions()) showsrc.push_back(std::move(option));
  showsrc.insert(showsrc.end(), {"showsrc", package});
  KILN_ASSIGN_OR_RETURN(ProcessOutput listed, runTool(showsrc, options_.toolTimeout));
  std::vector<std::string> versions = sourceVersionsNewestFirst(listed.stdoutText, package);
  if (versions.empty()) {
    return notFound("the Debian archive has no source package " + package +
                    " (in the suites of the system's apt sources)");
  }
  std::string lastError;
  for (const std::string& version : versions) {
    std::vector<std::string> argv = {"apt-get", "-q"};
    for (std::string& option : aptOptions()) argv.push_back(std::move(option));
    argv.insert(argv.end(), {"source", "--download-only", package + "=" + version});
    KILN_ASSIGN_OR_RETURN(ProcessOutput output,
                          runTool(argv, options_.toolTimeout, downloadDirectory));
    if (output.status.success() && fs::exists(dscFile(downloadDirectory, package, version))) {
      return version;
    }
    lastError = lastLines(output.stderrText, 3);
  }
  return disconnected("no version of " + package + " could be downloaded (tried " +
                      std::to_string(versions.size()) + "); the last error:\n" + lastError);
}

Status SourceFetcher::unpack(const fs::path& dsc, bool debianPatches, const fs::path& target) {
  fs::path partial = target;
  partial += ".partial";
  std::error_code error;
  fs::remove_all(partial, error);
  std::vector<std::string> argv = {"dpkg-source", "-x"};
  if (!debianPatches) argv.push_back("--skip-patches");
  argv.insert(argv.end(), {dsc.string(), partial.string()});
  KILN_ASSIGN_OR_RETURN(ProcessOutput output,
                        runTool(argv, options_.toolTimeout, dsc.parent_path()));
  if (!output.status.success()) {
    fs::remove_all(partial, error);
    return invalidArgument("dpkg-source -x " + dsc.filename().string() + " " +
                           output.status.describe() + ":\n" +
                           lastLines(output.stderrText + output.stdoutText, 6));
  }
  // Renamed only when complete, so an interrupted unpack is never taken for a tree.
  fs::rename(partial, target, error);
  if (error) return internalError("cannot rename " + partial.string() + ": " + error.message());
  return okStatus();
}

Result<FetchedSource> SourceFetcher::fetch(const std::string& package, bool debianPatches) {
  if (!validPackageName(package)) {
    return invalidArgument("\"" + package + "\" is not a Debian source package name");
  }
  fs::path packageDirectory = options_.cacheDirectory / "debian" / "sources" / package;
  fs::path tree = packageDirectory / (debianPatches ? "patched" : "upstream");
  fs::path versionFile = packageDirectory / "version";
  FetchedSource fetched{package, "", tree, true};
  std::error_code error;
  if (fs::is_directory(tree, error) && fs::exists(versionFile, error)) {
    KILN_ASSIGN_OR_RETURN(std::string version, readText(versionFile));
    fetched.version = version.substr(0, version.find('\n'));
    return fetched;
  }
  fs::path downloadDirectory = packageDirectory / "download";
  KILN_RETURN_IF_ERROR(makeDirectory(downloadDirectory));
  // A version downloaded before (for the other tree) is reused without the network.
  auto cached = readText(versionFile);
  if (cached.ok()) {
    fetched.version = cached->substr(0, cached->find('\n'));
  } else {
    fetched.fromCache = false;
    KILN_ASSIGN_OR_RETURN(fetched.version, download(package, downloadDirectory));
    KILN_RETURN_IF_ERROR(writeText(versionFile, fetched.version + "\n"));
  }
  KILN_RETURN_IF_ERROR(
      unpack(dscFile(downloadDirectory, package, fetched.version), debianPatches, tree));
  return fetched;
}

}  // namespace kiln::debian
