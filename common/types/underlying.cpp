#include "common/types/underlying_wire.h"

#include <algorithm>

namespace kiln {
namespace {

template <class Builder>
void setNames(const std::vector<std::string>& names, Builder&& list) {
  for (unsigned i = 0; i < names.size(); ++i) list.set(i, names[i]);
}

std::vector<std::string> getNames(capnp::List<capnp::Text>::Reader list) {
  std::vector<std::string> names;
  names.reserve(list.size());
  for (auto name : list) names.emplace_back(name.cStr());
  return names;
}

}  // namespace

void toWire(const UnderlyingSpec& spec, wire::UnderlyingSpec::Builder out) {
  out.setWorkerId(spec.workerId);
  out.setExperiment(spec.experiment);
  out.setWeight(spec.weight);
  out.setMaxSessions(spec.maxSessions);
  setNames(spec.sessionTypes, out.initSessionTypes(spec.sessionTypes.size()));
  out.setExperimentPass(capnp::Data::Reader(
      reinterpret_cast<const kj::byte*>(spec.experimentPass.data()), spec.experimentPass.size()));
}

UnderlyingSpec fromWire(wire::UnderlyingSpec::Reader in) {
  auto pass = in.getExperimentPass();
  return UnderlyingSpec{in.getWorkerId(),
                        in.getExperiment().cStr(),
                        std::max<std::uint32_t>(in.getWeight(), 1),
                        in.getMaxSessions(),
                        getNames(in.getSessionTypes()),
                        std::string(reinterpret_cast<const char*>(pass.begin()), pass.size())};
}

void toWire(const LoadFigures& load, wire::Load::Builder out) {
  out.setLiveSessions(load.liveSessions);
  out.setBusySlots(load.busySlots);
  out.setQueuedRequests(load.queuedRequests);
  out.setStepsTotal(load.stepsTotal);
}

LoadFigures fromWire(wire::Load::Reader in) {
  return LoadFigures{in.getLiveSessions(), in.getBusySlots(), in.getQueuedRequests(),
                     in.getStepsTotal()};
}

void toWire(const UnderlyingStatus& status, wire::UnderlyingStatus::Builder out) {
  toWire(status.spec, out.initSpec());
  toWire(status.load, out.initLoad());
}

UnderlyingStatus fromWire(wire::UnderlyingStatus::Reader in) {
  return UnderlyingStatus{fromWire(in.getSpec()), fromWire(in.getLoad())};
}

void toWire(const ExperimentSpec& spec, wire::ExperimentSpec::Builder out) {
  out.setName(spec.name);
  out.setWorkers(spec.workers);
  out.setWeight(spec.weight);
  out.setMaxSessions(spec.maxSessions);
  setNames(spec.sessionTypes, out.initSessionTypes(spec.sessionTypes.size()));
  out.setPack(spec.pack);
}

ExperimentSpec fromWire(wire::ExperimentSpec::Reader in) {
  return ExperimentSpec{in.getName().cStr(),
                        in.getWorkers(),
                        std::max<std::uint32_t>(in.getWeight(), 1),
                        in.getMaxSessions(),
                        getNames(in.getSessionTypes()),
                        in.getPack()};
}

}  // namespace kiln
