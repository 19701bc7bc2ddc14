// What outsiders name and the coordinator's HTTP endpoint shows: a worker's
// registration carries its endpoint and hostname, a client's experiment its
// name, all of them any bytes (up to 1 KiB, 128 for names). They reach
// GET /api/status (coordinator/dashboard.h renderDashboardJson) and
// GET /metrics as label values of the coordinator's own families
// (CoordinatorMetrics, common/metrics/exposition.h). Input lines:
//   h<endpoint>\t<hostname>   a host (nesting host if the line has a second tab)
//   e<name>                    an experiment, sampled on every host
// Properties checked: /api/status is JSON that a strict parser (llvm::json)
// accepts, with every name read back as sent when it was UTF-8; /metrics is
// the text format line by line, label values UTF-8 (Prometheus refuses a
// scrape otherwise) and, when they were UTF-8, unescaped back to what was sent.
#include <llvm/Support/JSON.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "common/metrics/exposition.h"
#include "common/metrics/registry.h"
#include "coordinator/coordinator_metrics.h"
#include "coordinator/dashboard.h"

namespace {

void require(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "fuzz_dashboard_status: property violated: %s\n", what);
    std::abort();
  }
}

struct Names {
  std::vector<kiln::DashboardHost> hosts;
  std::vector<std::string> experiments;
};

Names parse(std::string_view text) {
  Names names;
  for (int lines = 0; lines < 16 && !text.empty(); ++lines) {
    std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (line.empty()) continue;
    std::string_view rest = line.substr(1);
    if (line[0] == 'h') {
      kiln::DashboardHost host;
      host.id = names.hosts.size() + 1;
      std::size_t tab = rest.find('\t');
      host.endpoint = std::string(rest.substr(0, tab));
      if (tab != std::string_view::npos) {
        std::string_view after = rest.substr(tab + 1);
        std::size_t second = after.find('\t');
        host.hostname = std::string(after.substr(0, second));
        host.nesting = second != std::string_view::npos;
      }
      host.slots = 4;
      host.busy = static_cast<std::uint32_t>(host.endpoint.size() % 5);
      names.hosts.push_back(std::move(host));
    } else if (line[0] == 'e') {
      names.experiments.emplace_back(rest);
    }
  }
  return names;
}

bool utf8(const std::string& text) { return llvm::json::isUTF8(text); }

// A name as the strict parser read it back: as sent, when it was UTF-8.
void requireReadBack(const llvm::json::Object& object, llvm::StringRef field,
                     const std::string& sent) {
  auto read = object.getString(field);
  require(read.has_value(), "a name is missing from /api/status");
  if (utf8(sent)) require(*read == sent, "a UTF-8 name does not read back as sent");
}

void checkStatus(const Names& names) {
  kiln::DashboardModel model;
  model.hosts = names.hosts;
  for (const std::string& name : names.experiments) {
    model.experiments.push_back(kiln::DashboardExperiment{name, 1, 1, 1, 0, 0.5});
    for (const kiln::DashboardHost& host : names.hosts) {
      model.timeline.push_back(kiln::DashboardSeries{name, host.id, {0.25f, 1.0f}});
    }
  }
  std::string json = kiln::renderDashboardJson(model);
  auto parsed = llvm::json::parse(json);
  if (!parsed) {
    llvm::consumeError(parsed.takeError());
    require(false, "/api/status is not JSON a strict parser accepts");
  }
  const llvm::json::Object* root = parsed->getAsObject();
  require(root != nullptr, "/api/status is not an object");
  const llvm::json::Array* hosts = root->getArray("hosts");
  const llvm::json::Array* experiments = root->getArray("experiments");
  const llvm::json::Array* timeline = root->getArray("timeline");
  require(hosts && experiments && timeline && hosts->size() == model.hosts.size() &&
              experiments->size() == model.experiments.size() &&
              timeline->size() == model.timeline.size(),
          "/api/status lists another number of hosts, experiments or series");
  for (std::size_t i = 0; i < hosts->size(); ++i) {
    const llvm::json::Object* host = (*hosts)[i].getAsObject();
    require(host != nullptr, "a host is not an object");
    requireReadBack(*host, "endpoint", model.hosts[i].endpoint);
    requireReadBack(*host, "host", model.hosts[i].hostname);
  }
  for (std::size_t i = 0; i < experiments->size(); ++i) {
    const llvm::json::Object* experiment = (*experiments)[i].getAsObject();
    require(experiment != nullptr, "an experiment is not an object");
    requireReadBack(*experiment, "name", model.experiments[i].name);
  }
}

// One label value of an exposition line, unescaped; `at` moves past it.
std::string labelValue(std::string_view line, std::size_t& at) {
  std::string value;
  while (true) {
    require(at < line.size(), "a label value is not closed");
    char c = line[at++];
    if (c == '"') return value;
    if (c != '\\') {
      value += c;
      continue;
    }
    require(at < line.size(), "a label value ends in a backslash");
    char escaped = line[at++];
    require(escaped == '\\' || escaped == '"' || escaped == 'n', "a label value has a bad escape");
    value += escaped == 'n' ? '\n' : escaped;
  }
}

// The label values of every sample line, in order.
std::vector<std::string> sampleLabels(const std::string& text) {
  std::vector<std::string> values;
  require(text.empty() || text.back() == '\n', "the exposition does not end in a newline");
  std::string_view rest = text;
  while (!rest.empty()) {
    std::string_view line = rest.substr(0, rest.find('\n'));
    rest.remove_prefix(line.size() + 1);
    if (line.starts_with("# HELP ") || line.starts_with("# TYPE ")) continue;
    std::size_t at = line.find_first_of("{ ");
    require(at != std::string_view::npos && at > 0, "a sample line has no metric name");
    require(kiln::metrics::isValidMetricName(line.substr(0, at)), "a sample's name is invalid");
    if (line[at] == '{') {
      ++at;
      while (true) {
        require(at < line.size(), "a label set is not closed");
        if (line[at] == '}') break;
        std::size_t equals = line.find("=\"", at);
        require(equals != std::string_view::npos, "a label has no value");
        require(kiln::metrics::isValidLabelName(line.substr(at, equals - at)) ||
                    line.substr(at, equals - at) == "le",
                "a label name is invalid");
        at = equals + 2;
        std::string value = labelValue(line, at);
        require(utf8(value), "a label value is not UTF-8");
        values.push_back(std::move(value));
        require(at < line.size() && (line[at] == ',' || line[at] == '}'),
                "labels are not separated by commas");
        if (line[at] == ',') ++at;
      }
      ++at;
    }
    require(at < line.size() && line[at] == ' ' && line.find(' ', at + 1) == std::string::npos,
            "a sample line is not `name{labels} value`");
  }
  return values;
}

void checkMetrics(const Names& names) {
  kiln::metrics::Registry registry;
  auto metrics = kiln::CoordinatorMetrics::create(registry);
  require(metrics.ok(), "the coordinator's metrics do not register");
  // The coordinator's own families, asked for again by name: the same ones.
  auto hosts = registry.gauge("kiln_coordinator_host_utilization",
                              "Busy slots / slots of a worker or host at its last report",
                              {"worker", "endpoint", "kind"});
  auto experiments =
      registry.gauge("kiln_coordinator_experiment_utilization",
                     "Busy share of an experiment's hosts' slots, last sample", {"experiment"});
  require(hosts.ok() && experiments.ok(), "the coordinator's families are not found again");
  for (const kiln::DashboardHost& host : names.hosts) {
    std::vector<std::string> labels{std::to_string(host.id), host.endpoint,
                                    host.nesting ? "nest" : "worker"};
    auto gauge = (*hosts)->withLabels(labels);
    if (!gauge.ok()) continue;  // the same endpoint twice is one series
    (*gauge)->set(0.5);
  }
  for (const std::string& name : names.experiments) {
    if (auto gauge = (*experiments)->withLabels({name}); gauge.ok()) (*gauge)->set(1);
  }
  std::vector<std::string> values = sampleLabels(registry.renderText());
  // Every UTF-8 name sent shows up, unescaped, among the label values.
  auto shown = [&](const std::string& name) {
    for (const std::string& value : values) {
      if (value == name) return true;
    }
    return false;
  };
  for (const kiln::DashboardHost& host : names.hosts) {
    if (utf8(host.endpoint)) require(shown(host.endpoint), "an endpoint label is not read back");
  }
  for (const std::string& name : names.experiments) {
    if (utf8(name)) require(shown(name), "an experiment label is not read back");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Names names = parse(std::string_view(reinterpret_cast<const char*>(data), size));
  checkStatus(names);
  checkMetrics(names);
  return 0;
}
