// kiln._kiln: the bindings. Arguments are converted to kiln values while the
// GIL is held, the handles run the blocking calls without it, and the answers
// are converted back to Python objects (numpy arrays for tensors).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <fmt/format.h>

#include <kiln/client/env_state.h>
#include <kiln/curve_keys.h>
#include <kiln/version.h>
#include "python/src/agent_tools.h"
#include "python/src/convert.h"
#include "python/src/handles.h"
#include "python/src/programs.h"
#include "python/src/status_error.h"
#include "python/src/vector_core.h"

namespace py = pybind11;

namespace kiln::python {
namespace {

py::object optionalInt(const std::optional<std::int64_t>& v) {
  return v ? py::object(py::int_(*v)) : py::object(py::none());
}
py::object optionalFloat(const std::optional<double>& v) {
  return v ? py::object(py::float_(*v)) : py::object(py::none());
}

py::list valuesToPython(const std::vector<Value>& values) {
  py::list list;
  for (const Value& value : values) list.append(toPython(value));
  return list;
}

std::vector<Value> actionsFromPython(const py::sequence& actions) {
  std::vector<Value> values;
  values.reserve(actions.size());
  for (py::handle action : actions) values.push_back(toValue(action));
  return values;
}

py::dict workerToPython(const client::WorkerStatus& w) {
  py::dict d;
  d["worker_id"] = w.workerId;
  d["endpoint"] = w.endpoint;
  d["hostname"] = w.hostname;
  d["pid"] = w.pid;
  d["slots"] = w.slots;
  d["max_sessions"] = w.maxSessions;
  d["session_types"] = w.sessionTypes;
  d["version"] = w.version;
  d["live_sessions"] = w.liveSessions;
  d["busy_slots"] = w.busySlots;
  d["queued_requests"] = w.queuedRequests;
  d["steps_total"] = w.stepsTotal;
  d["ms_since_heard"] = w.msSinceHeard;
  d["placed_sessions"] = w.placedSessions;
  d["nesting"] = w.nesting;
  return d;
}

py::dict experimentToPython(const client::ExperimentStatus& e) {
  py::dict d;
  d["name"] = e.spec.name;
  if (!e.key.empty()) d["key"] = e.key;
  d["workers"] = e.spec.workers;
  d["weight"] = e.spec.weight;
  d["ready"] = e.readyWorkers();
  d["utilization"] = e.utilization;
  py::list workers;
  for (const auto& w : e.workers) {
    py::dict worker;
    worker["worker_id"] = w.workerId;
    worker["host_id"] = w.hostId;
    worker["endpoint"] = w.endpoint;
    worker["ready"] = w.ready;
    worker["live_sessions"] = w.load.liveSessions;
    worker["busy_slots"] = w.load.busySlots;
    worker["steps_total"] = w.load.stepsTotal;
    workers.append(worker);
  }
  d["worker_list"] = workers;
  return d;
}

// What start_session and VectorCore.start take from Python.
client::SessionOptions sessionOptions(const std::string& type, const std::string& benchmark,
                                      const std::string& actionSpace,
                                      const std::vector<std::string>& observations,
                                      const std::optional<py::bytes>& program) {
  client::SessionOptions options;
  options.sessionType = type;
  options.benchmark = benchmark;
  options.actionSpace = actionSpace;
  options.observations = observations;
  if (program) options.program = program->cast<std::string>();
  return options;
}

py::tuple stepToPython(const client::StepResult& r) {
  py::object newSpace = r.newActionSpace ? py::cast(*r.newActionSpace) : py::none();
  return py::make_tuple(valuesToPython(r.observations), r.endOfEpisode, r.actionHadNoEffect,
                        newSpace, r.actionsApplied, r.restored);
}

void bindSpace(py::module_& m) {
  py::class_<Space>(m, "Space", "A kiln space (read-only), as the worker describes it.")
      .def_property_readonly("name", [](const Space& s) { return s.name; })
      .def_property_readonly("kind", [](const Space& s) { return spaceKindName(s.kind); })
      .def_property_readonly("deterministic", [](const Space& s) { return s.deterministic; })
      .def_property_readonly("platform_dependent",
                             [](const Space& s) { return s.platformDependent; })
      .def_property_readonly("since_last_observed",
                             [](const Space& s) { return s.sinceLastObserved; })
      .def_property_readonly("default", [](const Space& s) { return toPython(s.defaultValue); })
      .def_property_readonly("n", [](const Space& s) { return s.choiceCount(); })
      .def_property_readonly("names", [](const Space& s) { return s.names; })
      .def_property_readonly("aliases", [](const Space& s) { return s.aliases; })
      .def_property_readonly("metadata", [](const Space& s) { return toPython(s.metadata); })
      .def(
          "find_choice",
          [](const Space& s, const std::string& name) { return unwrap(s.findChoice(name)); },
          py::arg("name"),
          "The index of the choice called (or aliased) `name`; kiln.NotFound naming the "
          "nearest names otherwise.")
      .def_property_readonly("int_range",
                             [](const Space& s) {
                               return py::make_tuple(optionalInt(s.int64Range.min),
                                                     optionalInt(s.int64Range.max));
                             })
      .def_property_readonly("double_range",
                             [](const Space& s) {
                               return py::make_tuple(optionalFloat(s.doubleRange.min),
                                                     optionalFloat(s.doubleRange.max));
                             })
      .def_property_readonly("shape", [](const Space& s) { return s.shape; })
      .def_property_readonly("members", [](const Space& s) { return s.members; })
      .def(
          "check", [](const Space& s, py::handle value) { throwIfError(s.check(toValue(value))); },
          py::arg("value"), "Raises kiln.InvalidArgument naming what is wrong with `value`.")
      .def("__eq__", [](const Space& a, const Space& b) { return a == b; })
      .def("__repr__", [](const Space& s) {
        return fmt::format("<kiln._kiln.Space '{}' {}>", s.name, spaceKindName(s.kind));
      });
}

// The C++ states reader and writer (include/kiln/client/env_state.h), bound so that tests
// hold kiln.state, the pure-Python twin, to the very same format.
void bindEnvState(py::module_& m) {
  m.def(
      "parse_states_csv",
      [](const std::string& text, const Space* actions) {
        std::vector<client::EnvState> states = unwrap(client::parseStatesCsv(text, actions));
        py::list out;
        for (const client::EnvState& s : states) {
          out.append(py::make_tuple(s.benchmark, optionalFloat(s.reward), s.walltime,
                                    s.commandline(), s.validity));
        }
        return out;
      },
      py::arg("text"), py::arg("action_space") = nullptr,
      "The states of a CSV text as (benchmark, reward, walltime, commandline, validity) tuples "
      "(validity '' when the file has none).");
  m.def(
      "states_to_csv",
      [](const std::vector<
          std::tuple<std::string, std::optional<double>, double, std::string, std::string>>& rows) {
        std::vector<client::EnvState> states;
        for (const auto& [benchmark, reward, walltime, commandline, validity] : rows) {
          states.push_back({benchmark, unwrap(client::parseCommandline(commandline)), walltime,
                            reward, validity});
        }
        return client::toCsv(states);
      },
      py::arg("rows"),
      "The CSV text of (benchmark, reward, walltime, commandline, validity) tuples.");
}

void bindClient(py::module_& m) {
  py::class_<ClientHandle, std::shared_ptr<ClientHandle>>(m, "Client")
      .def(py::init(&ClientHandle::connect), py::arg("endpoint"), py::arg("timeout") = 60.0,
           py::arg("experiment") = "", py::arg("key_file") = "", py::arg("experiment_key") = "")
      .def(
          "open_experiment",
          [](ClientHandle& c, const std::string& name, unsigned workers, unsigned weight,
             const std::vector<std::string>& sessionTypes, unsigned maxSessions, bool pack) {
            ExperimentSpec spec{name, workers, weight, maxSessions, sessionTypes, pack};
            return experimentToPython(c.openExperiment(spec));
          },
          py::arg("name"), py::arg("workers") = 1, py::arg("weight") = 1,
          py::arg("session_types") = std::vector<std::string>{}, py::arg("max_sessions") = 0,
          py::arg("pack") = false)
      .def(
          "wait_for_experiment",
          [](ClientHandle& c, const std::string& name, unsigned workers, double timeout) {
            return experimentToPython(c.waitForExperiment(name, workers, timeout));
          },
          py::arg("name"), py::arg("workers"), py::arg("timeout") = 30.0)
      .def("close_experiment", &ClientHandle::closeExperiment, py::arg("name"))
      .def("experiments",
           [](ClientHandle& c) {
             py::list list;
             for (const auto& e : c.experiments()) list.append(experimentToPython(e));
             return list;
           })
      .def_property_readonly("endpoint", &ClientHandle::endpoint)
      .def("list_cluster",
           [](ClientHandle& c) {
             py::list workers;
             for (const auto& w : c.listCluster()) workers.append(workerToPython(w));
             return workers;
           })
      .def(
          "get_spaces",
          [](ClientHandle& c, const std::string& type) {
            auto spaces = c.getSpaces(type);
            return py::make_tuple(spaces.actionSpaces, spaces.observationSpaces);
          },
          py::arg("session_type"))
      .def(
          "start_session",
          [](const std::shared_ptr<ClientHandle>& c, const std::string& type,
             const std::string& benchmark, const std::string& actionSpace,
             const std::vector<std::string>& observations, std::optional<py::bytes> program) {
            return std::make_shared<SessionHandle>(
                c, c->startSession(
                       sessionOptions(type, benchmark, actionSpace, observations, program)));
          },
          py::arg("session_type"), py::arg("benchmark"), py::arg("action_space") = "",
          py::arg("observations") = std::vector<std::string>{}, py::arg("program") = py::none())
      .def("worker_parameter", &ClientHandle::workerParameter, py::arg("endpoint"), py::arg("key"),
           py::arg("value"));
}

void bindSession(py::module_& m) {
  py::class_<SessionHandle, std::shared_ptr<SessionHandle>>(m, "Session")
      .def_property_readonly("id", &SessionHandle::id)
      .def_property_readonly("endpoint", &SessionHandle::endpoint)
      .def_property_readonly("ended", &SessionHandle::ended)
      .def_property_readonly(
          "initial_observations",
          [](const SessionHandle& s) { return valuesToPython(s.session().initialObservations()); })
      .def_property_readonly(
          "action_spaces", [](const SessionHandle& s) { return s.session().spaces().actionSpaces; })
      .def_property_readonly(
          "observation_spaces",
          [](const SessionHandle& s) { return s.session().spaces().observationSpaces; })
      .def(
          "observation_index",
          [](const SessionHandle& s, const std::string& name) {
            return unwrap(s.session().observationIndex(name));
          },
          py::arg("name"))
      .def(
          "step",
          [](SessionHandle& s, const py::sequence& actions,
             const std::vector<std::uint32_t>& observations, const Space* actionSpace) {
            auto values = actionsFromPython(actions);
            return stepToPython(s.step(values, observations, actionSpace));
          },
          py::arg("actions"), py::arg("observations"), py::arg("action_space") = nullptr,
          "Applies `actions` in one round trip and returns (observations, end_of_episode, "
          "action_had_no_effect, new_action_space, actions_applied, restored).")
      .def("fork", &SessionHandle::fork)
      .def(
          "compiler_version", &SessionHandle::compilerVersion,
          "The compiler the session's worker runs for its type (\"LLVM 19.1.7 (pass table ...)\").")
      .def("end", &SessionHandle::end)
      .def("set_parameter", &SessionHandle::setParameter, py::arg("key"), py::arg("value"));
}

// One env's actions from Python: a list or tuple is a multistep, anything
// else a single action.
std::vector<Value> envActionsFromPython(py::handle actions) {
  if (PyList_Check(actions.ptr()) || PyTuple_Check(actions.ptr())) {
    return actionsFromPython(py::reinterpret_borrow<py::sequence>(actions));
  }
  return {toValue(actions)};
}

py::tuple answerToPython(const VectorCore::Answer& a) {
  if (!a.status.ok()) {
    return py::make_tuple(a.env, py::none(), false, false, a.actionsApplied, py::none(), false,
                          std::string(errorClassName(a.status.code())), a.status.message(), 0,
                          a.start);
  }
  const client::StepResult& r = a.result;
  py::object newSpace = r.newActionSpace ? py::cast(*r.newActionSpace) : py::none();
  const auto micros = r.workerTime.count();
  return py::make_tuple(a.env, valuesToPython(r.observations), r.endOfEpisode, r.actionHadNoEffect,
                        r.actionsApplied, newSpace, r.restored, py::none(), py::none(), micros,
                        a.start);
}

// begin_starts' (benchmark uri, program) pairs as options.
std::vector<client::SessionOptions> startOptions(
    const std::string& type,
    const std::vector<std::pair<std::string, std::optional<py::bytes>>>& benchmarks,
    const std::string& actionSpace, const std::vector<std::string>& observations) {
  std::vector<client::SessionOptions> options;
  options.reserve(benchmarks.size());
  for (const auto& [uri, program] : benchmarks) {
    options.push_back(sessionOptions(type, uri, actionSpace, observations, program));
  }
  return options;
}

void bindVectorCore(py::module_& m) {
  py::class_<VectorCore>(m, "VectorCore")
      .def(py::init<std::shared_ptr<ClientHandle>, std::size_t>(), py::arg("client"),
           py::arg("envs"))
      .def_property_readonly("size", &VectorCore::size)
      .def(
          "start",
          [](VectorCore& v, std::size_t env, const std::string& type, const std::string& benchmark,
             const std::string& actionSpace, const std::vector<std::string>& observations,
             std::optional<py::bytes> program) {
            return valuesToPython(
                v.start(env, sessionOptions(type, benchmark, actionSpace, observations, program)));
          },
          py::arg("env"), py::arg("session_type"), py::arg("benchmark"),
          py::arg("action_space") = "", py::arg("observations") = std::vector<std::string>{},
          py::arg("program") = py::none(),
          "Starts env's next episode (ending its last); returns its initial observations.")
      .def(
          "begin_starts",
          [](VectorCore& v, const std::vector<std::size_t>& envs, const std::string& type,
             const std::vector<std::pair<std::string, std::optional<py::bytes>>>& benchmarks,
             const std::string& actionSpace, const std::vector<std::string>& observations) {
            v.beginStarts(envs, startOptions(type, benchmarks, actionSpace, observations));
          },
          py::arg("envs"), py::arg("session_type"), py::arg("benchmarks"),
          py::arg("action_space") = "", py::arg("observations") = std::vector<std::string>{},
          "Starts the next episode of each env without waiting: recv() answers each start "
          "(its last field True, its observations the initial ones).")
      .def(
          "send",
          [](VectorCore& v, const std::vector<std::size_t>& envs, const py::sequence& actions,
             const std::vector<std::uint32_t>& observations, const Space* actionSpace) {
            std::vector<std::vector<Value>> values;
            values.reserve(actions.size());
            for (py::handle action : actions) values.push_back(envActionsFromPython(action));
            v.send(envs, values, observations, actionSpace);
          },
          py::arg("envs"), py::arg("actions"), py::arg("observations"),
          py::arg("action_space") = nullptr,
          "Sends a step to each env (an action, or a list of actions for a multistep).")
      .def(
          "recv",
          [](VectorCore& v, std::size_t count, double timeoutSeconds) {
            auto answers = v.recv(count, secondsToDuration(timeoutSeconds, "timeout"));
            py::list list;
            for (const VectorCore::Answer& answer : answers) list.append(answerToPython(answer));
            return list;
          },
          py::arg("count"), py::arg("timeout"),
          "Waits for `count` answers (at most all in flight) or `timeout` seconds; returns at "
          "most `count` answers: (env, observations, end_of_episode, action_had_no_effect, "
          "actions_applied, new_action_space, restored: whether the session was rebuilt on another "
          "worker before the step, error_class, error_message, worker_us: the "
          "worker's time on the step or start, start: whether this answers a start).")
      .def("end", &VectorCore::end, py::arg("env"))
      .def("in_flight", &VectorCore::inFlight, py::arg("env"))
      .def("has_session", &VectorCore::hasSession, py::arg("env"))
      .def("endpoint", &VectorCore::endpoint, py::arg("env"))
      .def_property_readonly("in_flight_count", &VectorCore::inFlightCount);
}

void bindLocalCluster(py::module_& m) {
  py::class_<LocalClusterHandle>(m, "LocalCluster")
      .def(py::init(&LocalClusterHandle::start), py::arg("workers") = 1, py::arg("slots") = 2,
           py::arg("ready_timeout") = 10.0, py::arg("nesting_hosts") = 0,
           py::arg("datasets") = std::vector<std::string>{}, py::arg("fault_injection") = false,
           py::arg("client_tuning") = false)
      .def_property_readonly("endpoint", &LocalClusterHandle::endpoint)
      .def_property_readonly("worker_endpoints", &LocalClusterHandle::workerEndpoints)
      .def_property_readonly("running", &LocalClusterHandle::running)
      .def("stop", &LocalClusterHandle::stop);
}

}  // namespace

PYBIND11_MODULE(_kiln, m) {
  m.doc() = "kiln's C++ client, bound for the kiln package (use kiln.make, not this).";
  m.attr("__version__") = kiln::kKilnVersion;
  m.def(
      "error_kinds",
      [] {
        std::vector<std::pair<std::string, std::string>> kinds;
        for (kiln::ErrorCode code : kiln::kAllErrorCodes) {
          if (code == kiln::ErrorCode::kOk) continue;
          kinds.emplace_back(std::string(kiln::errorCodeName(code)),
                             std::string(kiln::python::errorClassName(code)));
        }
        return kinds;
      },
      "Every kiln error kind the C++ side knows, as (code, class name in kiln.errors).");
  registerStatusTranslator();
  bindSpace(m);
  bindEnvState(m);
  bindClient(m);
  bindSession(m);
  bindLocalCluster(m);
  bindVectorCore(m);
  bindPrograms(m);
  bindAgentTools(m);
  m.def(
      "keygen",
      [](const std::string& path, bool force) {
        ClusterKeys keys = unwrap(generateClusterKeys());
        Status written = writeKeyFile(path, keys, force);
        if (!written.ok()) throw StatusError(written);
        return keys.publicKey;
      },
      py::arg("path"), py::arg("force") = false,
      "Writes a new cluster key file (mode 0600), as `kiln keygen --out`; returns its public key.");
  m.def(
      "to_value_and_back", [](py::handle v) { return toPython(toValue(v)); }, py::arg("value"),
      "Round-trips a Python object through a kiln value (what a worker would receive).");
}

}  // namespace kiln::python
