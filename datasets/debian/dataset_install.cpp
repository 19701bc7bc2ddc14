#include "datasets/debian/dataset_install.h"

#include <fstream>
#include <thread>

#include "common/json_text.h"
#include "datasets/debian/source_fetch.h"
#include "programs/corpus_extract.h"

namespace kiln::debian {

namespace fs = std::filesystem;

namespace {

std::chrono::milliseconds since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               start);
}

std::string knownDatasets() {
  std::string out;
  for (const DatasetSpec& d : allDatasets()) out += (out.empty() ? "" : ", ") + d.name;
  return out;
}

Status writeInstallRecord(const InstallReport& report) {
  std::string json = "{\n  \"dataset\": \"" + jsonEscape(report.dataset) + "\",\n";
  json += "  \"modules\": " + std::to_string(report.modules) + ",\n  \"projects\": [\n";
  for (std::size_t i = 0; i < report.projects.size(); ++i) {
    const ProjectReport& p = report.projects[i];
    json += "    {\"project\": \"" + jsonEscape(p.project) + "\", \"package\": \"" +
            jsonEscape(p.package) + "\", \"version\": \"" + jsonEscape(p.version) +
            "\", \"modules\": " + std::to_string(p.extracted) +
            ", \"skipped\": " + std::to_string(p.skipped) + "}" +
            (i + 1 < report.projects.size() ? ",\n" : "\n");
  }
  json += "  ]\n}\n";
  fs::path file = report.corpus / kInstallRecord;
  std::ofstream out(file, std::ios::trunc);
  out << json;
  out.close();
  if (!out) return permissionDenied("cannot write " + file.string());
  return okStatus();
}

struct Stages {
  const InstallOptions& options;
  SourceFetcher& fetcher;
  const fs::path& corpus;
  unsigned jobs;
  bool corpusStarted = false;  // a project's modules are in it: the next ones append

  void stage(const std::string& project, const std::string& what) const {
    if (options.onStage) options.onStage(project, what);
  }

  void run(const Recipe& recipe, ProjectReport& report) {
    auto fetched = fetcher.fetch(recipe.sourcePackage, recipe.debianPatches);
    if (!fetched.ok()) {
      report.status = fetched.status();
      return;
    }
    report.version = fetched->version;
    report.sourceFromCache = fetched->fromCache;
    stage(recipe.project, "build");
    fs::path scratch = options.cacheDirectory / "debian" / "builds" / recipe.project;
    fs::path log = buildLogPath(options.cacheDirectory, options.dataset, recipe.project);
    auto built = buildProject(recipe, fetched->tree, scratch, log, options.toolchain, jobs,
                              options.buildLimits);
    if (!built.ok()) {
      report.status = built.status();
      return;
    }
    stage(recipe.project, "extract");
    programs::ExtractOptions extract;
    extract.compileCommands = built->compileCommands;
    extract.output = corpus;
    extract.sourceRoot = scratch;
    extract.prefix = recipe.project;
    extract.append = corpusStarted;
    extract.jobs = jobs;
    extract.clang = options.toolchain.cc;
    extract.clangxx = options.toolchain.cxx;
    extract.timeoutPerModule = options.timeoutPerModule;
    auto extracted = programs::extractCorpus(extract);
    if (!extracted.ok()) {
      report.status = extracted.status();
      return;
    }
    report.extracted = extracted->extracted.size();
    report.skipped = extracted->skipped.size();
    report.skipReasons = programs::skippedByReason(*extracted);
    if (report.extracted > 0) corpusStarted = true;
    // The modules are in the corpus; the build tree is only disk now (its log stays).
    std::error_code ignored;
    fs::remove_all(scratch, ignored);
  }
};

}  // namespace

bool InstallReport::complete() const {
  for (const ProjectReport& p : projects) {
    if (!p.status.ok()) return false;
  }
  return true;
}

fs::path buildLogPath(const fs::path& cacheDirectory, const std::string& dataset,
                      const std::string& project) {
  return cacheDirectory / "debian" / "logs" / dataset / (project + ".log");
}

Result<InstallReport> installDataset(const InstallOptions& options) {
  const DatasetSpec* spec = findDataset(options.dataset);
  if (spec == nullptr) {
    return invalidArgument("no dataset named \"" + options.dataset +
                           "\" (known: " + knownDatasets() + ")");
  }
  if (options.root.empty()) return invalidArgument("no dataset root directory given");
  auto started = std::chrono::steady_clock::now();
  InstallReport report;
  report.dataset = spec->name;
  report.corpus = options.root / spec->name;
  std::error_code error;
  if (!options.force && fs::exists(report.corpus / kInstallRecord, error)) {
    report.alreadyInstalled = true;
    return report;
  }
  KILN_ASSIGN_OR_RETURN(SourceFetcher fetcher,
                        SourceFetcher::create({options.cacheDirectory, options.aptConfiguration}));
  // A partial corpus from an earlier failed or forced install is rebuilt whole;
  // a directory that holds something else is the operator's, not ours to remove.
  if (fs::exists(report.corpus, error) && !fs::is_empty(report.corpus, error) &&
      !fs::exists(report.corpus / "corpus_description.json", error)) {
    return invalidArgument(report.corpus.string() +
                           " exists and holds no kiln corpus; give another --root");
  }
  fs::remove_all(report.corpus, error);
  fs::create_directories(report.corpus, error);
  if (error) {
    return permissionDenied("cannot create the dataset directory " + report.corpus.string() + ": " +
                            error.message() + " (give another with --root)");
  }
  unsigned jobs = options.jobs ? options.jobs : std::max(1u, std::thread::hardware_concurrency());
  Stages stages{options, fetcher, report.corpus, jobs};
  for (const std::string& project : spec->projects) {
    const Recipe* recipe = findRecipe(project);
    ProjectReport projectReport;
    projectReport.project = project;
    if (recipe == nullptr) {
      projectReport.status = internalError("dataset " + spec->name + " names no recipe " + project);
    } else {
      projectReport.package = recipe->sourcePackage;
      auto projectStarted = std::chrono::steady_clock::now();
      stages.stage(project, "fetch");
      stages.run(*recipe, projectReport);
      projectReport.elapsed = since(projectStarted);
    }
    report.modules += projectReport.extracted;
    if (options.onProject) options.onProject(projectReport);
    report.projects.push_back(std::move(projectReport));
  }
  report.elapsed = since(started);
  if (report.complete()) KILN_RETURN_IF_ERROR(writeInstallRecord(report));
  return report;
}

}  // namespace kiln::debian
