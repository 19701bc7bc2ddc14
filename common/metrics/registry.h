// Counters, gauges and histograms with labels, owned by a Registry that its
// creator owns (no global registry: two servers in one process keep apart).
// Updates are lock-free atomics; a labelled series is created once under a
// lock and its pointer kept by the caller for the hot path.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include <kiln/status.h>
#include "common/metrics/snapshot.h"

namespace kiln::metrics {

// Only goes up. Negative or NaN amounts are ignored: a counter that went down
// would read as a process restart to every Prometheus rate().
class Counter {
 public:
  void increment(double amount = 1.0);
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

class Gauge {
 public:
  void set(double value) { value_.store(value, std::memory_order_relaxed); }
  void increment(double amount = 1.0) { value_.fetch_add(amount, std::memory_order_relaxed); }
  void decrement(double amount = 1.0) { value_.fetch_sub(amount, std::memory_order_relaxed); }
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

// Observations counted per bucket (upper bound inclusive, as `le` says), one
// atomic per bucket so concurrent observers never contend on a lock. NaN
// observations are ignored so that one bad sample cannot poison the sum.
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void observe(double value);
  // Cumulative counts (one per bound, then +Inf) and the sum.
  void read(std::vector<std::uint64_t>& cumulative, double& sum) const;
  std::uint64_t count() const;

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<std::uint64_t>[]> counts_;  // bounds_.size() + 1
  std::atomic<double> sum_{0.0};
};

// Bucket bounds: `count` bounds start, start*factor, ... (start > 0, factor > 1).
Result<std::vector<double>> exponentialBuckets(double start, double factor, std::size_t count);
// `count` bounds start, start+width, ... (width > 0).
Result<std::vector<double>> linearBuckets(double start, double width, std::size_t count);

class FamilyBase {
 public:
  FamilyBase(std::string name, std::string help, MetricType type,
             std::vector<std::string> labelNames, std::vector<double> bounds,
             std::size_t maxSeries);
  virtual ~FamilyBase() = default;
  const std::string& name() const { return name_; }
  MetricType type() const { return type_; }
  const std::vector<std::string>& labelNames() const { return labelNames_; }
  const std::vector<double>& bounds() const { return bounds_; }
  const std::string& help() const { return help_; }
  FamilySnapshot snapshot() const;

 protected:
  // Checks the label values against the label names and the series bound.
  Status checkNewSeries(const std::vector<std::string>& values, std::size_t existing) const;
  virtual void snapshotSeries(FamilySnapshot& out) const = 0;
  mutable std::mutex mutex_;  // guards the series map of the derived family

 private:
  std::string name_;
  std::string help_;
  MetricType type_;
  std::vector<std::string> labelNames_;
  std::vector<double> bounds_;
  std::size_t maxSeries_;
};

// All series of one metric name, one per distinct tuple of label values.
template <class Metric>
class Family final : public FamilyBase {
 public:
  using FamilyBase::FamilyBase;

  // The series for these label values (in labelNames() order), created on
  // first use. The pointer stays valid for the Registry's lifetime. Fails
  // with invalid-argument on a wrong number of values and overloaded when the
  // family already holds its maximum number of series (label values taken
  // from requests must not grow memory without bound).
  Result<Metric*> withLabels(const std::vector<std::string>& values) {
    std::lock_guard lock(mutex_);
    auto found = series_.find(values);
    if (found != series_.end()) return found->second.get();
    KILN_RETURN_IF_ERROR(checkNewSeries(values, series_.size()));
    auto metric = makeMetric();
    Metric* raw = metric.get();
    series_.emplace(values, std::move(metric));
    return raw;
  }

 private:
  std::unique_ptr<Metric> makeMetric() const {
    if constexpr (std::is_same_v<Metric, Histogram>) {
      return std::make_unique<Histogram>(bounds());
    } else {
      return std::make_unique<Metric>();
    }
  }
  void snapshotSeries(FamilySnapshot& out) const override {
    for (const auto& [values, metric] : series_) {
      SeriesSnapshot series;
      series.labelValues = values;
      if constexpr (std::is_same_v<Metric, Histogram>) {
        metric->read(series.cumulativeCounts, series.sum);
      } else {
        series.value = metric->value();
      }
      out.series.push_back(std::move(series));
    }
  }

  // Ordered so that every scrape lists series in the same order.
  std::map<std::vector<std::string>, std::unique_ptr<Metric>> series_;
};

struct RegistryOptions {
  std::size_t maxSeriesPerFamily = 10000;
};

class Registry {
 public:
  explicit Registry(RegistryOptions options = {}) : options_(options) {}
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // Registers a family, or returns the existing one when name, type, label
  // names (and bounds) are the same, so independent components may ask for the
  // same metric. Invalid names, duplicate or reserved label names, bad bounds
  // and clashes with another family's series names fail with invalid-argument.
  // The family is owned by the Registry.
  Result<Family<Counter>*> counter(const std::string& name, const std::string& help,
                                   std::vector<std::string> labelNames = {});
  Result<Family<Gauge>*> gauge(const std::string& name, const std::string& help,
                               std::vector<std::string> labelNames = {});
  // Bounds must be finite and strictly increasing; +Inf is always added.
  Result<Family<Histogram>*> histogram(const std::string& name, const std::string& help,
                                       std::vector<double> bounds,
                                       std::vector<std::string> labelNames = {});

  // Families in name order, series in label-value order.
  std::vector<FamilySnapshot> snapshot() const;
  // snapshot() in the Prometheus text format 0.0.4.
  std::string renderText() const;

 private:
  Result<FamilyBase*> add(const std::string& name, const std::string& help, MetricType type,
                          std::vector<std::string> labelNames, std::vector<double> bounds);

  RegistryOptions options_;
  mutable std::mutex mutex_;
  std::map<std::string, std::unique_ptr<FamilyBase>> families_;
};

}  // namespace kiln::metrics
