#include "programs/datasets/debian/dataset_install.h"

#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "common/base/json_text.h"
#include "programs/datasets/debian/source_fetch.h"
#include "programs/make/corpus_extract.h"
#include "programs/make/corpus_layout.h"
#include "programs/make/json_tree.h"

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

// Each project that made it into the corpus leaves a record here, so that
// an install that failed part-way keeps it and builds only the rest.
fs::path projectRecordPath(const fs::path& corpus, const std::string& project) {
  return corpus / ".kiln-projects" / (project + ".json");
}

std::string readText(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

Status writeText(const fs::path& file, const std::string& text) {
  std::error_code error;
  fs::create_directories(file.parent_path(), error);
  std::ofstream out(file, std::ios::trunc | std::ios::binary);
  out << text;
  out.close();
  if (!out) return permissionDenied("cannot write " + file.string());
  return okStatus();
}

}  // namespace

Status writeProjectRecord(const fs::path& corpus, const ProjectReport& p) {
  return writeText(projectRecordPath(corpus, p.project),
                   "{\"project\": \"" + jsonEscape(p.project) + "\", \"package\": \"" +
                       jsonEscape(p.package) + "\", \"version\": \"" + jsonEscape(p.version) +
                       "\", \"modules\": " + std::to_string(p.extracted) +
                       ", \"skipped\": " + std::to_string(p.skipped) + "}\n");
}

namespace {

// The report of a project an earlier install put into the corpus; nullopt
// when it has no readable record (it is built again).
std::optional<ProjectReport> readProjectRecord(const fs::path& corpus, const std::string& project) {
  std::error_code error;
  const fs::path file = projectRecordPath(corpus, project);
  if (!fs::is_regular_file(file, error)) return std::nullopt;
  auto record = programs::parseJson(readText(file), file.string());
  if (!record.ok()) return std::nullopt;
  const auto* package = record->member("package");
  const auto* version = record->member("version");
  const auto* modules = record->member("modules");
  const auto* skipped = record->member("skipped");
  if (!package || !version || !modules || !skipped) return std::nullopt;
  ProjectReport report;
  report.project = project;
  report.package = package->string;
  report.version = version->string;
  report.extracted = static_cast<std::size_t>(modules->number);
  report.skipped = static_cast<std::size_t>(skipped->number);
  report.keptFromEarlierInstall = true;
  report.sourceFromCache = true;
  return report;
}

}  // namespace

Result<std::vector<ProjectReport>> keepFinishedProjects(const DatasetSpec& spec,
                                                        const fs::path& corpus) {
  const fs::path descriptionFile = corpus / programs::kCorpusDescriptionFile;
  KILN_ASSIGN_OR_RETURN(std::vector<std::string> modules,
                        programs::parseCorpusDescription(readText(descriptionFile)));
  std::vector<ProjectReport> kept;
  std::set<std::string> keptNames;
  for (const std::string& project : spec.projects) {
    auto record = readProjectRecord(corpus, project);
    std::size_t listed = 0;
    for (const std::string& module : modules) {
      if (module.starts_with(project + "/")) ++listed;
    }
    if (record && listed == record->extracted) {
      keptNames.insert(project);
      kept.push_back(std::move(*record));
    }
  }
  std::erase_if(modules, [&](const std::string& module) {
    return !keptNames.contains(module.substr(0, module.find('/')));
  });
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(corpus, error)) {
    const std::string name = entry.path().filename().string();
    if (name == programs::kCorpusDescriptionFile || keptNames.contains(name)) continue;
    fs::remove_all(entry.path(), error);  // an unfinished project, or a dropped one
  }
  for (const ProjectReport& p : kept) KILN_RETURN_IF_ERROR(writeProjectRecord(corpus, p));
  if (modules.empty()) {
    fs::remove(descriptionFile, error);
    return kept;
  }
  KILN_RETURN_IF_ERROR(writeText(descriptionFile, programs::corpusDescriptionText(modules)));
  return kept;
}

namespace {

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
    report.status = writeProjectRecord(corpus, report);
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
  // What an earlier install that failed part-way finished is kept (unless
  // forced); a directory that holds something else is the operator's, not
  // ours to remove.
  const bool earlierCorpus = fs::exists(report.corpus / programs::kCorpusDescriptionFile, error) ||
                             fs::exists(report.corpus / ".kiln-projects", error);
  if (fs::exists(report.corpus, error) && !fs::is_empty(report.corpus, error) && !earlierCorpus) {
    return invalidArgument(report.corpus.string() +
                           " exists and holds no kiln corpus; give another --root");
  }
  std::map<std::string, ProjectReport> kept;
  if (earlierCorpus && !options.force) {
    auto finished = keepFinishedProjects(*spec, report.corpus);
    if (finished.ok()) {
      for (ProjectReport& p : *finished) kept.emplace(p.project, std::move(p));
    } else {
      kept.clear();  // a description kiln cannot read: start over
    }
  }
  if (kept.empty()) fs::remove_all(report.corpus, error);
  fs::create_directories(report.corpus, error);
  if (error) {
    return permissionDenied("cannot create the dataset directory " + report.corpus.string() + ": " +
                            error.message() + " (give another with --root)");
  }
  unsigned jobs = options.jobs ? options.jobs : std::max(1u, std::thread::hardware_concurrency());
  Stages stages{options, fetcher, report.corpus, jobs};
  for (const auto& [name, p] : kept) stages.corpusStarted = stages.corpusStarted || p.extracted > 0;
  for (const std::string& project : spec->projects) {
    const Recipe* recipe = findRecipe(project);
    ProjectReport projectReport;
    projectReport.project = project;
    if (auto earlier = kept.find(project); earlier != kept.end()) {
      projectReport = std::move(earlier->second);
    } else if (recipe == nullptr) {
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
