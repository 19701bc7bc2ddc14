// Command-line options and the serve loop shared by `kiln worker` and by
// runWorker<...>() for user-defined session types.
#pragma once

#include <CLI/CLI.hpp>

#include "worker/worker_server.h"

namespace kiln {

struct WorkerCommandLine {
  WorkerConfig config;
  std::string logLevel = "info";
};

void addWorkerOptions(CLI::App& app, WorkerCommandLine& options);
// Checks --metrics-listen values (ADDR:PORT) before anything starts.
CLI::Validator metricsListenValidator();
// Starts a worker with `types`, serves until SIGINT/SIGTERM; returns the exit code.
int serveWorker(const WorkerCommandLine& options, SessionTypeRegistry& types);

}  // namespace kiln
