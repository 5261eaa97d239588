#pragma once
// WorkerPool: a fixed number of threads running posted tasks, fairly between the callers that
// post them (start-time fair queueing by measured cost). Each task carries its caller's key (the
// peer's address). A free thread takes the oldest task of the caller with the fewest tasks
// running and, among those, the least service received: a caller's tag is the virtual time when
// its work so far would end (each task advances it by the time the caller's tasks take), never
// less than the virtual time of the task started last. So a peer sending heavy requests back to
// back delays a light peer by at most the tasks already running, not by its backlog. Tasks of
// one key start in order of arrival. A task carries its work in bytes (the body it decodes and
// judges); from kWeighedWork up it is weighed: weighed tasks run on at most `heavy_limit`
// threads, and the work of those running at once stays within heavy_limit * kHeavyWork (one
// larger task may run alone), so that many medium tasks weigh as much as a few large ones and a
// light task always finds a thread within one light task's time. heavy_limit is by default all
// threads but one, and no more than the process's CPUs but one (usable_cpus(): affinity, cpuset,
// CPU quota; more weighed tasks at once than CPUs only share them, and leave none to the event
// loop and light tasks).
// At most `compute_limit` tasks compute at once (by default every thread may): a task inside a
// BlockingRegion (common/blocking_region.h: a wait, an API call) does not count, and another
// task may start meanwhile; so with the limit at the CPUs, a task that starts runs on a CPU of
// its own instead of sharing the CPUs with every task the callers keep running, and a new
// caller's task waits for one task to end, not for all of them to share the CPUs with it.
// A task's cost is its run time on `clock` (which outlives the pool). The destructor runs every
// task already posted, then joins. Thread-safe.
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "extender/common/blocking_region.h"
#include "extender/common/clock.h"
#include "extender/common/usable_cpus.h"

namespace extender::http {

class WorkerPool {
 public:
  explicit WorkerPool(std::size_t threads, const Clock& clock = steady_clock())
      : WorkerPool(threads, default_heavy_limit(threads, usable_cpus()), clock) {}
  // compute_limit 0: every thread.
  WorkerPool(std::size_t threads, std::size_t heavy_limit, const Clock& clock = steady_clock(),
             std::size_t compute_limit = 0);
  // min(threads - 1, cores - 1), at least 1 (cores: 0 when unknown counts as 1).
  static std::size_t default_heavy_limit(std::size_t threads, std::size_t cores);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  static constexpr std::size_t kWeighedWork = std::size_t{128} << 10;
  static constexpr std::size_t kHeavyWork = std::size_t{1} << 20;

  void post(std::function<void()> task) { post_work({}, std::move(task), 0); }
  // heavy: work of kHeavyWork.
  void post(const std::string& key, std::function<void()> task, bool heavy = false) {
    post_work(key, std::move(task), heavy ? kHeavyWork : 0);
  }
  void post_work(const std::string& key, std::function<void()> task, std::size_t work);

 private:
  using Nanos = std::int64_t;
  struct Queued {
    std::uint64_t seq;
    std::function<void()> task;
    std::size_t work;
  };
  // A caller is kept while it has tasks or its tag is ahead of the virtual time (it still owes).
  struct Caller {
    std::deque<Queued> tasks;
    std::size_t running = 0;
    Nanos tag = 0;
    Nanos last_cost = 0;
  };
  using Callers = std::map<std::string, Caller>;
  class Observer;
  void run();
  void blocking_begins();
  void blocking_ends();
  Callers::iterator next_caller();         // end() when nothing may start now; needs mu_
  bool may_start(std::size_t work) const;  // needs mu_
  void forget_settled_callers();           // needs mu_

  std::mutex mu_;
  std::condition_variable cv_;
  Callers callers_;
  std::size_t queued_ = 0;
  std::size_t heavy_running_ = 0;
  std::size_t work_running_ = 0;  // of the weighed tasks running
  const std::size_t thread_count_;
  const std::size_t heavy_limit_;
  const std::size_t compute_limit_;
  const Clock& clock_;
  std::size_t computing_ = 0;  // tasks running and not inside a BlockingRegion
  std::uint64_t seq_ = 0;
  Nanos virtual_time_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace extender::http
