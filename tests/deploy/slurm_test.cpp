// deploy/slurm/kiln.sbatch on a real one-node Slurm cluster that this test
// starts itself (munged, slurmctld, slurmd in the foreground, with their own
// config, key, socket and ports in a temporary directory) and stops again,
// exactly those daemons, pass or fail. Skips when not root or Slurm/munge are
// not installed: it never pretends to have run.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "common/working_directory.h"
#include "tests/deploy/deploy_support.h"

namespace kiln {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using deploytest::readFile;
using deploytest::run;
using deploytest::writeFile;

std::string shortHostname() {
  char name[256] = {};
  ::gethostname(name, sizeof(name) - 1);
  std::string host(name);
  return host.substr(0, host.find('.'));
}

// Owns the three daemons; the destructor cancels what is left of the test's
// job and stops the daemons in reverse order of start.
class OneNodeSlurm {
 public:
  explicit OneNodeSlurm(fs::path dir) : dir_(std::move(dir)) {}
  ~OneNodeSlurm() {
    if (!jobId_.empty()) run({"scancel", "--full", jobId_}, 10s);
    if (!jobId_.empty()) {
      deploytest::waitUntil(
          [&] {
            return run({"squeue", "-h", "-j", jobId_}, 5s).stdoutText.empty();
          },
          15s);
    }
    for (auto it = daemons_.rbegin(); it != daemons_.rend(); ++it) {
      deploytest::stopProcess(*it, 10s);
    }
  }

  // Empty on success, else why the cluster could not be started.
  std::string start() {
    fs::create_directories(dir_ / "state");
    fs::create_directories(dir_ / "spool");
    fs::create_directories(dir_ / "munge");
    fs::permissions(dir_ / "munge", fs::perms::owner_all);
    key_ = dir_ / "munge" / "munge.key";
    {
      std::random_device random;
      std::string key(1024, '\0');
      for (auto& c : key) c = static_cast<char>(random());
      writeFile(key_, key);
      fs::permissions(key_, fs::perms::owner_read);
    }
    socket_ = dir_ / "munge" / "munge.socket";
    auto munged = spawn({"munged", "--foreground", "--force", "--key-file=" + key_.string(),
                         "--socket=" + socket_.string(),
                         "--pid-file=" + (dir_ / "munge" / "munged.pid").string(),
                         "--log-file=" + (dir_ / "munge" / "munged.log").string(),
                         "--seed-file=" + (dir_ / "munge" / "munged.seed").string()});
    if (!munged.empty()) return munged;
    if (!deploytest::waitUntil([&] { return fs::exists(socket_); }, 10s)) {
      return "munged did not create its socket within 10 s: " +
             readFile(dir_ / "munge" / "munged.log");
    }
    writeConfig();
    ::setenv("SLURM_CONF", (dir_ / "slurm.conf").c_str(), 1);
    std::string error = spawn({"slurmctld", "-D", "-c", "-f", (dir_ / "slurm.conf").string()});
    if (error.empty()) error = spawn({"slurmd", "-D", "-f", (dir_ / "slurm.conf").string()});
    if (!error.empty()) return error;
    bool idle = deploytest::waitUntil(
        [&] {
          auto state = run({"sinfo", "-h", "-o", "%t"}, 5s);
          return state.status.success() && state.stdoutText.find("idle") != std::string::npos;
        },
        30s);
    if (!idle) {
      return "the node did not become idle within 30 s; slurmctld log:\n" +
             readFile(dir_ / "ctld.log") + "\nslurmd log:\n" + readFile(dir_ / "d.log");
    }
    return "";
  }

  void setJob(std::string id) { jobId_ = std::move(id); }
  const fs::path& dir() const { return dir_; }

 private:
  std::string spawn(const std::vector<std::string>& argv) {
    SubprocessOptions options;
    options.stdoutPath = dir_ / (argv[0] + ".out");
    options.stderrPath = dir_ / (argv[0] + ".err");
    auto process = Subprocess::spawn(argv, options);
    if (!process.ok()) return argv[0] + ": " + process.status().toString();
    daemons_.push_back(std::move(process).value());
    std::this_thread::sleep_for(300ms);
    if (auto ended = daemons_.back().poll()) {
      return fmt::format("{} {} right after start: {}", argv[0], ended->describe(),
                         readFile(options.stderrPath));
    }
    return "";
  }

  void writeConfig() {
    std::string host = shortHostname();
    std::string d = dir_.string();
    writeFile(dir_ / "slurm.conf",
              fmt::format(R"(ClusterName=kilntest
SlurmctldHost={0}
SlurmctldPort={1}
SlurmdPort={2}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={3}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
StateSaveLocation={4}/state
SlurmdSpoolDir={4}/spool
SlurmctldLogFile={4}/ctld.log
SlurmdLogFile={4}/d.log
SlurmctldPidFile={4}/ctld.pid
SlurmdPidFile={4}/d.pid
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
NodeName={0} CPUs={5} State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
)",
                          host, deploytest::freeTcpPort(), deploytest::freeTcpPort(),
                          socket_.string(), d, std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN))));
    writeFile(dir_ / "cgroup.conf", "CgroupPlugin=cgroup/v1\n");
  }

  fs::path dir_;
  fs::path key_;
  fs::path socket_;
  std::vector<Subprocess> daemons_;
  std::string jobId_;
};

std::string skipReason() {
  if (::geteuid() != 0) return "needs root to run slurmd and munged";
  for (const char* tool : {"munged", "slurmctld", "slurmd", "sbatch", "sinfo", "squeue"}) {
    if (run({"sh", "-c", std::string("command -v ") + tool}, 5s).status.exitCode != 0) {
      return std::string(tool) +
             " is not installed (apt-get install slurmd slurmctld slurm-client munge)";
    }
  }
  return "";
}

// Submits kiln.sbatch with a small experiment on a one-node cluster and
// checks the job ran on it and left nothing behind. With `keyed`, the job
// gets a cluster key (KILN_KEY_FILE) and the experiment uses it too.
void runJobAndCheck(bool keyed) {
  if (auto reason = skipReason(); !reason.empty()) GTEST_SKIP() << reason;
  auto dir = WorkingDirectory::create({}, "kiln-slurm-test");
  ASSERT_TRUE(dir.ok()) << dir.status().toString();
  // slurmd runs the batch script from its spool; the directory must be
  // traversable by the daemons (all root here).
  fs::permissions(dir->path(),
                  fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);
  OneNodeSlurm slurm(dir->path());
  if (auto error = slurm.start(); !error.empty()) {
    GTEST_SKIP() << "cannot start a one-node Slurm cluster on this machine: " << error;
  }

  const std::string kiln = KILN_BINARY;
  std::string tag = fmt::format("KILN_TEST_TAG=slurm-{}-{}", ::getpid(), std::random_device{}());
  std::string keySetting;
  std::string keyOption;
  if (keyed) {
    fs::path key = dir->path() / "cluster.key";
    auto made = run({kiln, "keygen", "--out", key.string()}, 30s);
    ASSERT_TRUE(made.status.success()) << made.stderrText;
    keySetting = ",KILN_KEY_FILE=" + key.string();
    keyOption = R"( --key-file "$KILN_KEY_FILE")";
  }
  std::string experiment =
      R"("$KILN_BIN" status --coordinator "$KILN_COORDINATOR")" + keyOption +
      R"( && "$KILN_BIN" demo --noop --coordinator "$KILN_COORDINATOR" --sessions 4 --steps 50)" +
      keyOption;
  fs::path out = dir->path() / "job.out";
  std::vector<std::string> submit = {
      "sbatch",
      "--wait",
      "--parsable",
      "--nodes=1",
      "--time=5",
      "--output=" + out.string(),
      "--chdir=" + dir->path().string(),
      fmt::format("--export=ALL,KILN_BIN={},KILN_HOST_COMMAND={},KILN_SLOTS=2,KILN_PORT={},"
                  "KILN_READY_SECONDS=30,KILN_LOG_LEVEL=warn,{}{}",
                  kiln, deploytest::hostCommand(kiln), deploytest::freeTcpPort(), tag, keySetting),
      std::string(KILN_SOURCE_DIR) + "/deploy/slurm/kiln.sbatch",
      "bash",
      "-c",
      experiment};
  auto submitted = run(submit, 150s);
  std::string id = submitted.stdoutText.substr(0, submitted.stdoutText.find_first_of(";\n"));
  slurm.setJob(id);
  std::string log = readFile(out);
  ASSERT_TRUE(submitted.status.success()) << "sbatch " << submitted.status.describe() << "\n"
                                          << submitted.stderrText << "\njob output:\n"
                                          << log << "\nslurmd log:\n"
                                          << readFile(dir->path() / "d.log");

  // The coordinator came up on the node, the host registered, the
  // experiment saw the address and ran on that cluster (not an embedded one).
  EXPECT_NE(log.find("1 workers, 2 slots"), std::string::npos) << log;
  EXPECT_NE(log.find("cluster: tcp://"), std::string::npos) << log;
  EXPECT_EQ(log.find("embedded"), std::string::npos) << log;
  EXPECT_NE(log.find("200 steps over 4 sessions"), std::string::npos) << log;
  EXPECT_NE(log.find("experiment exited with status 0"), std::string::npos) << log;
  EXPECT_NE(log.find("stopped coordinator and hosts"), std::string::npos) << log;
  // Nothing started for the job is left running.
  std::vector<pid_t> left;
  bool clean = deploytest::waitUntil(
      [&] {
        left = deploytest::processesWithEnvironment(tag);
        return left.empty();
      },
      15s);
  EXPECT_TRUE(clean) << left.size() << " processes of the job are still running";
  if (keyed) {
    // Plaintext and loud about it without a key; quiet with one.
    EXPECT_EQ(log.find("beyond loopback"), std::string::npos) << log;
  }
}

TEST(SlurmDeployTest, SbatchStartsClusterRunsExperimentAndCleansUp) { runJobAndCheck(false); }

TEST(SlurmDeployTest, SbatchWithAClusterKeyRunsEverySocketUnderCurve) { runJobAndCheck(true); }

TEST(SlurmDeployTest, ScriptRefusesToRunOutsideAJobOrWithBadSettings) {
  std::string script = std::string(KILN_SOURCE_DIR) + "/deploy/slurm/kiln.sbatch";
  auto outside = run({"env", "-u", "SLURM_JOB_ID", script, "true"}, 10s);
  EXPECT_EQ(outside.status.exitCode, 2);
  EXPECT_NE(outside.stderrText.find("not inside a Slurm job"), std::string::npos);
  auto noCommand = run({"env", "SLURM_JOB_ID=1", script}, 10s);
  EXPECT_EQ(noCommand.status.exitCode, 2);
  EXPECT_NE(noCommand.stderrText.find("usage"), std::string::npos);
  auto badPort = run({"env", "SLURM_JOB_ID=1", "KILN_PORT=77x", script, "true"}, 10s);
  EXPECT_EQ(badPort.status.exitCode, 2);
  EXPECT_NE(badPort.stderrText.find("KILN_PORT"), std::string::npos);
  auto noBinary = run({"env", "SLURM_JOB_ID=1", "KILN_BIN=/nonexistent/kiln", script, "true"}, 10s);
  EXPECT_EQ(noBinary.status.exitCode, 2);
  EXPECT_NE(noBinary.stderrText.find("not found"), std::string::npos);
  auto noKey = run({"env", "SLURM_JOB_ID=1", std::string("KILN_BIN=") + KILN_BINARY,
                    "KILN_KEY_FILE=/nonexistent/cluster.key", script, "true"},
                   10s);
  EXPECT_EQ(noKey.status.exitCode, 2);
  EXPECT_NE(noKey.stderrText.find("KILN_KEY_FILE"), std::string::npos) << noKey.stderrText;
}

}  // namespace
}  // namespace kiln
