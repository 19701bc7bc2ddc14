// Helpers shared by the deploy tests (Slurm, network namespaces, manifests):
// bounded waits, free ports, finding the processes a test started by a tag in
// their environment, and stopping daemons politely then firmly.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "common/process/subprocess.h"
#include "tests/support/wait.h"

namespace kiln::deploytest {

// Runs a command with a deadline; a failure to start shows up as exit code 127
// with the reason on stderr, so callers can treat it like a shell would.
ProcessOutput run(const std::vector<std::string>& argv, std::chrono::milliseconds timeout);

// `nest` once `kiln --help` lists it, else `worker` (the same flags).
std::string hostCommand(const std::string& kilnBinary);

// A TCP port that was free on 127.0.0.1 a moment ago.
int freeTcpPort();

// Pids of live processes whose environment holds exactly `entry` ("K=V").
std::vector<pid_t> processesWithEnvironment(const std::string& entry);

using testsupport::waitUntil;

// SIGTERM, wait up to `grace`, then SIGKILL; always reaps.
void stopProcess(Subprocess& process, std::chrono::milliseconds grace);

std::string readFile(const std::filesystem::path& path);
void writeFile(const std::filesystem::path& path, const std::string& text);

}  // namespace kiln::deploytest
