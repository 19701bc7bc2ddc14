// `kiln datasets install NAME`: a dataset of real C software built from
// Debian's source packages into one corpus in ml-compiler-opt's layout that
// `--dataset NAME=DIR` serves. For each project of the dataset: fetch its
// source (programs/datasets/debian/source_fetch.h), build it with its own build
// (project_build.h), extract its compiles into <project>/ of the corpus
// (programs/make/corpus_extract.h). A project that fails is reported and the
// others go on; installing again builds only what is missing (each
// finished project keeps a record). Installed once: a corpus with its
// kiln-install.json is left alone unless forced (which rebuilds it all).
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <kiln/status.h>
#include "programs/datasets/debian/project_build.h"
#include "programs/datasets/debian/recipes.h"

namespace kiln::debian {

// The file that marks a complete install, in the corpus directory.
inline constexpr const char* kInstallRecord = "kiln-install.json";

struct ProjectReport {
  std::string project;
  std::string package;
  std::string version;
  bool sourceFromCache = false;
  bool keptFromEarlierInstall = false;  // an earlier, unfinished install built it
  std::size_t extracted = 0;
  std::size_t skipped = 0;
  std::vector<std::pair<std::string, std::size_t>> skipReasons;  // most frequent first
  std::chrono::milliseconds elapsed{0};                          // fetch, build and extraction
  Status status;  // why the project is missing from the corpus
};

struct InstallReport {
  std::string dataset;
  std::filesystem::path corpus;
  bool alreadyInstalled = false;  // nothing was done
  std::vector<ProjectReport> projects;
  std::size_t modules = 0;  // in the corpus
  std::chrono::milliseconds elapsed{0};
  bool complete() const;  // every project is in the corpus
};

struct InstallOptions {
  std::string dataset;
  std::filesystem::path cacheDirectory;  // sources, builds and logs (kiln's cache)
  std::filesystem::path root;            // the corpus goes to <root>/<dataset>
  unsigned jobs = 0;                     // 0: the machine's cores
  bool force = false;                    // rebuild an installed dataset
  std::filesystem::path aptConfiguration = "/etc/apt";
  Toolchain toolchain;
  BuildLimits buildLimits;
  std::chrono::milliseconds timeoutPerModule{120'000};
  // Called on the caller's thread: before each project's stages, and after it.
  std::function<void(const std::string& project, const std::string& stage)> onStage;
  std::function<void(const ProjectReport&)> onProject;
};

// invalid-argument for an unknown dataset (naming the known ones);
// permission-denied for a cache or root that cannot be written; otherwise
// the report, with each failed project's status (the install is then not
// recorded, so the next install tries again).
Result<InstallReport> installDataset(const InstallOptions& options);

// For an install after one that failed part-way: keeps the projects of
// `corpus` that have their record (written when a project's extraction
// finished) and all their modules in the description; removes everything
// else (directories, description entries). The kept projects' reports, in
// the dataset's order; invalid-argument when the description is unreadable.
Result<std::vector<ProjectReport>> keepFinishedProjects(const DatasetSpec& spec,
                                                        const std::filesystem::path& corpus);
// The record keepFinishedProjects() looks for (what the install writes).
Status writeProjectRecord(const std::filesystem::path& corpus, const ProjectReport& project);

// Where the log of a project's build goes.
std::filesystem::path buildLogPath(const std::filesystem::path& cacheDirectory,
                                   const std::string& dataset, const std::string& project);

}  // namespace kiln::debian
