#pragma once
// BlockingRegion: marks the calling thread as waiting (on the network, on a condition another
// thread signals) rather than computing, for as long as it lives. A pool that bounds how many of
// its threads compute at once (http::WorkerPool) lets another task start meanwhile, and counts
// this one again when the region ends. Regions nest; only the outermost one is reported. On a
// thread no pool watches it does nothing. The process's clock opens one around its sleeps and
// waits (common/clock.h), the API server client around its calls.
//
// BlockingObserver: what a pool installs on each of its threads (set_blocking_observer) to hear
// of that thread's outermost regions. Thread-safety: a region and the observer it reports to
// belong to the calling thread; the observer must outlive every region opened while installed.
namespace extender {

class BlockingObserver {
 public:
  virtual ~BlockingObserver() = default;
  virtual void blocking_begins() = 0;
  virtual void blocking_ends() = 0;
};

// Installs `observer` for the calling thread (nullptr: none); returns the one it replaces.
BlockingObserver* set_blocking_observer(BlockingObserver* observer);

class BlockingRegion {
 public:
  BlockingRegion();
  ~BlockingRegion();
  BlockingRegion(const BlockingRegion&) = delete;
  BlockingRegion& operator=(const BlockingRegion&) = delete;

 private:
  BlockingObserver* observer_;  // reported to when this region is the outermost one, else null
};

}  // namespace extender
