#include "extender/common/blocking_region.h"

namespace extender {
namespace {

thread_local BlockingObserver* observer_of_thread = nullptr;
thread_local int open_regions = 0;

}  // namespace

BlockingObserver* set_blocking_observer(BlockingObserver* observer) {
  BlockingObserver* previous = observer_of_thread;
  observer_of_thread = observer;
  return previous;
}

BlockingRegion::BlockingRegion() : observer_(open_regions++ == 0 ? observer_of_thread : nullptr) {
  if (observer_) observer_->blocking_begins();
}

BlockingRegion::~BlockingRegion() {
  --open_regions;
  if (observer_) observer_->blocking_ends();
}

}  // namespace extender
