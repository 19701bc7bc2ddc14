// `kiln datasets install NAME`: builds a dataset of real C software from
// Debian's source packages (programs/datasets/debian/dataset_install.h) into a corpus
// that `--dataset NAME=DIR` serves, printing each project as it is done.
// `--list` shows the datasets and their projects.
#include <fmt/format.h>

#include <cstdlib>

#include "common/process/signals.h"
#include "common/process/subprocess.h"
#include "programs/datasets/debian/dataset_install.h"
#include "tools/cli/commands.h"

namespace kiln::cli {

namespace {

struct InstallCommandOptions {
  std::string dataset;
  std::string cacheDirectory;
  std::string root;
  unsigned jobs = 0;
  bool force = false;
  bool list = false;
};

// $XDG_<variable> or, when unset, $HOME/<fallback>, then `below`.
std::filesystem::path xdgDirectory(const char* variable, const char* fallback, const char* below) {
  const char* xdg = std::getenv(variable);
  if (xdg != nullptr && *xdg == '/') return std::filesystem::path(xdg) / below;
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home != nullptr && *home ? home : ".") / fallback / below;
}

void printDatasets() {
  for (const debian::DatasetSpec& dataset : debian::allDatasets()) {
    fmt::print("{}: {} ({} projects)\n", dataset.name, dataset.description,
               dataset.projects.size());
    for (const std::string& project : dataset.projects) {
      const debian::Recipe* recipe = debian::findRecipe(project);
      fmt::print("  {:<12} {:<14} {}\n", project, recipe ? recipe->sourcePackage : "?",
                 recipe ? recipe->description : "");
    }
  }
}

void printProject(const debian::ProjectReport& p) {
  if (!p.status.ok()) {
    fmt::print("{:<12} {:<26} FAILED after {:.1f} s: {}\n", p.project, p.version,
               p.elapsed.count() / 1000.0, p.status.toString());
    return;
  }
  std::string reasons;
  for (const auto& [reason, count] : p.skipReasons) {
    reasons += fmt::format("{}{} {}", reasons.empty() ? " (" : ", ", count, reason);
  }
  if (!reasons.empty()) reasons += ")";
  fmt::print("{:<12} {:<26} {:>6} modules {:>5} skipped {:>8.1f} s{}{}\n", p.project, p.version,
             p.extracted, p.skipped, p.elapsed.count() / 1000.0,
             p.keptFromEarlierInstall ? "  (kept from an earlier install)"
             : p.sourceFromCache      ? ""
                                      : "  (downloaded)",
             reasons);
  std::fflush(stdout);
}

void runInstall(const InstallCommandOptions& o) {
  if (o.list) {
    printDatasets();
    return;
  }
  if (o.dataset.empty()) {
    fmt::print(stderr, "kiln datasets install: name a dataset (see --list)\n");
    throw CLI::RuntimeError(2);
  }
  debian::InstallOptions options;
  options.dataset = o.dataset;
  options.cacheDirectory = o.cacheDirectory.empty()
                               ? xdgDirectory("XDG_CACHE_HOME", ".cache", "kiln")
                               : std::filesystem::path(o.cacheDirectory);
  options.root = o.root.empty() ? xdgDirectory("XDG_DATA_HOME", ".local/share", "kiln/datasets")
                                : std::filesystem::path(o.root);
  options.cacheDirectory = std::filesystem::absolute(options.cacheDirectory);
  options.root = std::filesystem::absolute(options.root);
  options.jobs = o.jobs;
  options.force = o.force;
  options.onStage = [](const std::string& project, const std::string& stage) {
    fmt::print(stderr, "{}: {}\n", project, stage);
  };
  options.onProject = printProject;
  // Each build step runs in a process group of its own (Subprocess): a
  // terminal's Ctrl-C would leave make and its compilers running on.
  StopOnSignal stopBuilds([] {
    const int children = killChildProcessGroups();
    fmt::print(stderr, "kiln datasets install: interrupted; killed {} running build step{}\n",
               children, children == 1 ? "" : "s");
    std::_Exit(130);
  });
  auto report = debian::installDataset(options);
  if (!report.ok()) {
    fmt::print(stderr, "kiln datasets install: {}\n", report.status().toString());
    throw CLI::RuntimeError(1);
  }
  if (report->alreadyInstalled) {
    fmt::print("{} is already installed in {} (--force builds it again)\n", report->dataset,
               report->corpus.string());
  } else {
    fmt::print("{}: {} modules from {} projects in {:.1f} s, in {}\n", report->dataset,
               report->modules, report->projects.size(), report->elapsed.count() / 1000.0,
               report->corpus.string());
  }
  if (!report->complete()) {
    fmt::print(stderr,
               "kiln datasets install: some projects failed (above; build logs under {}); "
               "installing again retries them\n",
               (options.cacheDirectory / "debian" / "logs" / report->dataset).string());
    throw CLI::RuntimeError(1);
  }
  fmt::print("serve it with: kiln local --dataset {}={}   (or kiln worker|nest ... --dataset)\n",
             report->dataset, report->corpus.string());
}

}  // namespace

void addDatasetsInstallCommand(CLI::App& datasets) {
  auto* command = datasets.add_subcommand(
      "install", "build a dataset of real C software from Debian's source packages");
  auto options = std::make_shared<InstallCommandOptions>();
  command->add_option("name", options->dataset, "the dataset (see --list)");
  command->add_flag("--list", options->list, "show the datasets and their projects");
  command->add_option("--cache-dir", options->cacheDirectory,
                      "downloads, sources and build logs (default $XDG_CACHE_HOME/kiln)");
  command->add_option("--root", options->root,
                      "install to ROOT/NAME (default $XDG_DATA_HOME/kiln/datasets)");
  command->add_option("--jobs", options->jobs, "parallel compiles (default: all cores)")
      ->check(CLI::Range(0u, 1024u));
  command->add_flag("--force", options->force, "build again even when installed");
  command->callback([options] { runInstall(*options); });
}

}  // namespace kiln::cli
