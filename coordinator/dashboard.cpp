#include "coordinator/dashboard.h"

#include <fmt/format.h>

#include <numeric>
#include <set>

#include "common/base/json_text.h"

namespace kiln {

namespace {

double mean(const std::deque<float>& samples) {
  if (samples.empty()) return 0;
  return std::accumulate(samples.begin(), samples.end(), 0.0) / samples.size();
}

}  // namespace

void UtilizationTimeline::sample(const HostTable& hosts, const ExperimentBook& experiments) {
  std::map<Key, float> now;
  for (const auto& [id, host] : hosts) {
    if (!host.nesting) continue;
    float slots = static_cast<float>(std::max<std::uint32_t>(host.snapshot.slots, 1));
    for (const UnderlyingStatus& status : host.underlying) {
      if (experiments.find(status.spec.experiment) == nullptr) continue;
      now[{status.spec.experiment, id.value}] += status.load.busySlots / slots;
    }
  }
  for (auto it = series_.begin(); it != series_.end();) {
    if (now.count(it->first) == 0) {
      it = series_.erase(it);  // the worker was released or its host lost
    } else {
      ++it;
    }
  }
  for (const auto& [key, share] : now) {
    series_.try_emplace(key, window_).first->second.push(share);
  }
}

DashboardModel buildDashboardModel(const HostTable& hosts, const ExperimentBook& experiments,
                                   const UtilizationTimeline& timeline, double sampleSeconds) {
  DashboardModel model;
  model.sampleSeconds = sampleSeconds;
  for (const auto& [id, host] : hosts) {
    DashboardHost h;
    h.id = id.value;
    h.nesting = host.nesting;
    h.endpoint = host.endpoint;
    h.hostname = host.hostname;
    h.slots = host.snapshot.slots;
    h.busy = host.snapshot.busySlots;
    h.sessions = host.snapshot.liveSessions;
    h.utilization1m = mean(host.utilization.samples());
    model.hosts.push_back(std::move(h));
  }
  for (const auto& [name, record] : experiments.experiments()) {
    DashboardExperiment e;
    e.name = name;
    e.requested = record.spec.workers;
    e.weight = record.spec.weight;
    for (const auto& [workerId, worker] : record.workers) {
      if (worker.ready) ++e.ready;
      e.sessions += worker.load.liveSessions;
    }
    e.utilization1m = mean(record.utilization.samples());
    model.experiments.push_back(std::move(e));
  }
  for (const auto& [key, ring] : timeline.series()) {
    model.timeline.push_back(
        {key.first, key.second, std::vector<float>(ring.samples().begin(), ring.samples().end())});
  }
  return model;
}

std::string renderDashboardJson(const DashboardModel& model) {
  std::uint64_t slots = 0, busy = 0, sessions = 0;
  for (const DashboardHost& h : model.hosts) {
    slots += h.slots;
    busy += h.busy;
    sessions += h.sessions;
  }
  std::string out = fmt::format(
      "{{\"totals\": {{\"hosts\": {}, \"experiments\": {}, \"slots\": {}, \"busy\": {}, "
      "\"sessions\": {}}}, \"sample_seconds\": {}, \"hosts\": [",
      model.hosts.size(), model.experiments.size(), slots, busy, sessions, model.sampleSeconds);
  for (std::size_t i = 0; i < model.hosts.size(); ++i) {
    const DashboardHost& h = model.hosts[i];
    out += fmt::format(
        "{}{{\"id\": {}, \"kind\": \"{}\", \"endpoint\": \"{}\", \"host\": \"{}\", \"slots\": {}, "
        "\"busy\": {}, \"sessions\": {}, \"utilization_1m\": {:.4f}}}",
        i ? ", " : "", h.id, h.nesting ? "nest" : "worker", jsonEscape(h.endpoint),
        jsonEscape(h.hostname), h.slots, h.busy, h.sessions, h.utilization1m);
  }
  out += "], \"experiments\": [";
  for (std::size_t i = 0; i < model.experiments.size(); ++i) {
    const DashboardExperiment& e = model.experiments[i];
    out += fmt::format(
        "{}{{\"name\": \"{}\", \"workers\": {}, \"ready\": {}, \"weight\": {}, \"sessions\": {}, "
        "\"utilization_1m\": {:.4f}}}",
        i ? ", " : "", jsonEscape(e.name), e.requested, e.ready, e.weight, e.sessions,
        e.utilization1m);
  }
  out += "], \"timeline\": [";
  for (std::size_t i = 0; i < model.timeline.size(); ++i) {
    const DashboardSeries& s = model.timeline[i];
    out += fmt::format("{}{{\"experiment\": \"{}\", \"host\": {}, \"samples\": [", i ? ", " : "",
                       jsonEscape(s.experiment), s.host);
    for (std::size_t k = 0; k < s.samples.size(); ++k) {
      out += fmt::format("{}{:.3f}", k ? "," : "", s.samples[k]);
    }
    out += "]}";
  }
  out += "]}";
  return out;
}

void DashboardPublisher::publish(std::string json) {
  auto next = std::make_shared<const std::string>(std::move(json));
  std::lock_guard lock(mutex_);
  latest_ = std::move(next);
}

std::shared_ptr<const std::string> DashboardPublisher::latest() const {
  std::lock_guard lock(mutex_);
  return latest_;
}

}  // namespace kiln
