// The layouts `kiln bench nesting` compares, each a cluster of real kiln
// processes on loopback (tests/support/child_cluster.h) with S slots in all for K
// experiments:
//   dedicated: K plain workers of S/K slots, experiment i's sessions on
//              worker i (each experiment owns its share, idle in its lulls);
//   shared:    the same K plain workers as one pool, every experiment's
//              sessions placed by the coordinator, no nesting (what a user
//              would otherwise run: first come, first served);
//   nested:    one `kiln nest` host of S slots as it runs by default, each
//              experiment's underlying worker in its own child process, the
//              slots shared by experiment weight.
// Each host is a "machine" with a fixed CPU budget (common/process/cpu_budget.h)
// when budgets are given: each plain worker W/K CPUs, the nesting host W,
// as separate machines of that size would have; the coordinator and the
// experiments' clients and learners run outside every budget, as they run
// elsewhere in a cluster.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "bench/nesting_work.h"
#include "common/process/cpu_budget.h"
#include "common/types/cluster_layout.h"
#include "tests/support/child_cluster.h"

namespace kiln::bench {

// The workers' CPU budget: `cpus` in all, split into machines as the layout
// has them; and each experiment's learner machine (`learnerCpus`). No
// support = no budgets (hosts and learners share every core).
struct WorkerBudget {
  const CpuBudgetSupport* support = nullptr;
  double cpus = 0;
  double learnerCpus = 0;
};

class LayoutCluster {
 public:
  // Starts the processes of `layout` and waits until every worker (or
  // every experiment's underlying worker) is ready.
  static Result<LayoutCluster> start(Layout layout, unsigned experiments, unsigned slots,
                                     const WorkerBudget& budget = {});

  // How experiment `i`'s client connects, and where its sessions start.
  client::ClientOptions clientOptions(unsigned i) const;
  SessionPlace place(unsigned i) const;
  // Every place experiment `i`'s sessions may land on (its worker, or each
  // worker of the pool), to warm their caches before the clock starts.
  std::vector<SessionPlace> reachablePlaces(unsigned i) const;
  // A client of the cluster as a whole (no experiment).
  client::Client& operatorClient() { return *operator_; }
  // Each machine's budget ("cgroup-v1 quota 0.50 CPU" per host), or "none".
  std::string budgetNote() const;

 private:
  LayoutCluster(Layout layout, testsupport::ChildCluster children)
      : layout_(layout), children_(std::move(children)) {}
  // Puts the host just spawned into machine `index`'s budget.
  Status budgetHost(const WorkerBudget& budget, const CpuAssignment& wholeCpus, unsigned index,
                    double cpus, pid_t pid);
  Layout layout_;
  // Before children_: destroyed after the processes inside are gone.
  std::vector<std::unique_ptr<CpuBudgetGroup>> budgets_;
  testsupport::ChildCluster children_;
  std::string coordinator_;
  std::vector<std::string> workers_;          // plain workers' endpoints
  std::vector<std::string> experimentKeys_;   // nested: what lets a client act for experiment i
  std::unique_ptr<client::Client> operator_;  // opened the experiments; lives as long as they run
};

// CPU seconds used by every process below this one (the cluster's kiln
// processes and the children they forked).
double descendantsCpuSeconds();

}  // namespace kiln::bench
