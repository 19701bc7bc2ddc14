#include "common/metrics/registry.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "common/metrics/exposition.h"

namespace kiln::metrics {

namespace {

// Series names a family puts on the wire; two families must not share one.
std::vector<std::string> exposedNames(const std::string& name, MetricType type) {
  if (type != MetricType::kHistogram) return {name};
  return {name, name + "_bucket", name + "_sum", name + "_count"};
}

Status checkLabelNames(const std::string& metric, MetricType type,
                       const std::vector<std::string>& labelNames) {
  std::set<std::string> seen;
  for (const auto& label : labelNames) {
    if (!isValidLabelName(label)) {
      return invalidArgument(
          fmt::format("metric {}: label name '{}' is not [a-zA-Z_][a-zA-Z0-9_]* or starts with the "
                      "reserved '__'",
                      metric, label));
    }
    if (type == MetricType::kHistogram && label == "le") {
      return invalidArgument(
          fmt::format("histogram {}: the label name 'le' is reserved for bucket bounds", metric));
    }
    if (!seen.insert(label).second) {
      return invalidArgument(fmt::format("metric {}: label '{}' given twice", metric, label));
    }
  }
  return okStatus();
}

Status checkBounds(const std::string& metric, const std::vector<double>& bounds) {
  for (std::size_t i = 0; i < bounds.size(); ++i) {
    if (!std::isfinite(bounds[i])) {
      return invalidArgument(fmt::format(
          "histogram {}: bucket bound {} is not finite (+Inf is always added)", metric, i));
    }
    if (i > 0 && !(bounds[i] > bounds[i - 1])) {
      return invalidArgument(
          fmt::format("histogram {}: bucket bounds must increase strictly ({} after {})", metric,
                      bounds[i], bounds[i - 1]));
    }
  }
  return okStatus();
}

}  // namespace

void Counter::increment(double amount) {
  if (!(amount >= 0)) return;  // negative or NaN
  value_.fetch_add(amount, std::memory_order_relaxed);
}

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)),
      counts_(std::make_unique<std::atomic<std::uint64_t>[]>(bounds_.size() + 1)) {}

void Histogram::observe(double value) {
  if (std::isnan(value)) return;
  auto bucket = std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin();
  counts_[bucket].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(value, std::memory_order_relaxed);
}

void Histogram::read(std::vector<std::uint64_t>& cumulative, double& sum) const {
  cumulative.resize(bounds_.size() + 1);
  std::uint64_t running = 0;
  for (std::size_t i = 0; i <= bounds_.size(); ++i) {
    running += counts_[i].load(std::memory_order_relaxed);
    cumulative[i] = running;
  }
  sum = sum_.load(std::memory_order_relaxed);
}

std::uint64_t Histogram::count() const {
  std::uint64_t total = 0;
  for (std::size_t i = 0; i <= bounds_.size(); ++i) {
    total += counts_[i].load(std::memory_order_relaxed);
  }
  return total;
}

Result<std::vector<double>> exponentialBuckets(double start, double factor, std::size_t count) {
  if (!(start > 0) || !(factor > 1) || count == 0 || count > 1000) {
    return invalidArgument(fmt::format(
        "exponential buckets need start > 0, factor > 1 and 1..1000 buckets (got {}, {}, {})",
        start, factor, count));
  }
  std::vector<double> bounds;
  for (double bound = start; bounds.size() < count; bound *= factor) bounds.push_back(bound);
  if (!std::isfinite(bounds.back())) {
    return invalidArgument("exponential buckets overflow to infinity: use fewer buckets");
  }
  return bounds;
}

Result<std::vector<double>> linearBuckets(double start, double width, std::size_t count) {
  if (!std::isfinite(start) || !(width > 0) || !std::isfinite(width) || count == 0 ||
      count > 1000) {
    return invalidArgument(fmt::format(
        "linear buckets need a finite start, width > 0 and 1..1000 buckets (got {}, {}, {})", start,
        width, count));
  }
  std::vector<double> bounds;
  for (std::size_t i = 0; i < count; ++i) bounds.push_back(start + width * static_cast<double>(i));
  return bounds;
}

FamilyBase::FamilyBase(std::string name, std::string help, MetricType type,
                       std::vector<std::string> labelNames, std::vector<double> bounds,
                       std::size_t maxSeries)
    : name_(std::move(name)),
      help_(std::move(help)),
      type_(type),
      labelNames_(std::move(labelNames)),
      bounds_(std::move(bounds)),
      maxSeries_(maxSeries) {}

Status FamilyBase::checkNewSeries(const std::vector<std::string>& values,
                                  std::size_t existing) const {
  if (values.size() != labelNames_.size()) {
    return invalidArgument(fmt::format("metric {} has {} label(s) ({}) but {} value(s) were given",
                                       name_, labelNames_.size(), fmt::join(labelNames_, ", "),
                                       values.size()));
  }
  if (existing >= maxSeries_) {
    return overloaded(fmt::format(
        "metric {} already has {} series (the maximum): a label value probably comes from "
        "unbounded input",
        name_, existing));
  }
  return okStatus();
}

FamilySnapshot FamilyBase::snapshot() const {
  FamilySnapshot out;
  out.name = name_;
  out.help = help_;
  out.type = type_;
  out.labelNames = labelNames_;
  out.bounds = bounds_;
  std::lock_guard lock(mutex_);
  snapshotSeries(out);
  return out;
}

Result<FamilyBase*> Registry::add(const std::string& name, const std::string& help, MetricType type,
                                  std::vector<std::string> labelNames, std::vector<double> bounds) {
  if (!isValidMetricName(name)) {
    return invalidArgument(fmt::format("metric name '{}' is not [a-zA-Z_:][a-zA-Z0-9_:]*", name));
  }
  KILN_RETURN_IF_ERROR(checkLabelNames(name, type, labelNames));
  if (type == MetricType::kHistogram) KILN_RETURN_IF_ERROR(checkBounds(name, bounds));

  std::lock_guard lock(mutex_);
  auto found = families_.find(name);
  if (found != families_.end()) {
    FamilyBase& existing = *found->second;
    if (existing.type() != type || existing.labelNames() != labelNames ||
        existing.bounds() != bounds) {
      return invalidArgument(fmt::format(
          "metric {} is already registered with another type, labels or buckets", name));
    }
    return &existing;
  }
  auto mine = exposedNames(name, type);
  for (const auto& [otherName, other] : families_) {
    for (const auto& theirs : exposedNames(otherName, other->type())) {
      if (std::find(mine.begin(), mine.end(), theirs) != mine.end()) {
        return invalidArgument(
            fmt::format("metric {} would expose series '{}' that metric {} already exposes", name,
                        theirs, otherName));
      }
    }
  }
  std::unique_ptr<FamilyBase> family;
  std::size_t max = options_.maxSeriesPerFamily;
  switch (type) {
    case MetricType::kCounter:
      family = std::make_unique<Family<Counter>>(name, help, type, std::move(labelNames),
                                                 std::move(bounds), max);
      break;
    case MetricType::kGauge:
      family = std::make_unique<Family<Gauge>>(name, help, type, std::move(labelNames),
                                               std::move(bounds), max);
      break;
    case MetricType::kHistogram:
      family = std::make_unique<Family<Histogram>>(name, help, type, std::move(labelNames),
                                                   std::move(bounds), max);
      break;
  }
  FamilyBase* raw = family.get();
  families_.emplace(name, std::move(family));
  return raw;
}

Result<Family<Counter>*> Registry::counter(const std::string& name, const std::string& help,
                                           std::vector<std::string> labelNames) {
  KILN_ASSIGN_OR_RETURN(FamilyBase * family,
                        add(name, help, MetricType::kCounter, std::move(labelNames), {}));
  return static_cast<Family<Counter>*>(family);
}

Result<Family<Gauge>*> Registry::gauge(const std::string& name, const std::string& help,
                                       std::vector<std::string> labelNames) {
  KILN_ASSIGN_OR_RETURN(FamilyBase * family,
                        add(name, help, MetricType::kGauge, std::move(labelNames), {}));
  return static_cast<Family<Gauge>*>(family);
}

Result<Family<Histogram>*> Registry::histogram(const std::string& name, const std::string& help,
                                               std::vector<double> bounds,
                                               std::vector<std::string> labelNames) {
  KILN_ASSIGN_OR_RETURN(FamilyBase * family, add(name, help, MetricType::kHistogram,
                                                 std::move(labelNames), std::move(bounds)));
  return static_cast<Family<Histogram>*>(family);
}

std::vector<FamilySnapshot> Registry::snapshot() const {
  std::vector<FamilySnapshot> out;
  std::lock_guard lock(mutex_);
  out.reserve(families_.size());
  for (const auto& [name, family] : families_) out.push_back(family->snapshot());
  return out;
}

std::string Registry::renderText() const { return metrics::renderText(snapshot()); }

}  // namespace kiln::metrics
