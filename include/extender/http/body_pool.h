#pragma once
// BodyPool: request body buffers kept for reuse, so that a large body lands in memory that is
// already mapped instead of fresh pages each time, and the heap trim after large requests, run on
// the pool's own thread rather than on a worker's. Bounded and small: it keeps at most
// max_buffers buffers (4 by default) and max_bytes of their capacity in all (32 MiB by default);
// buffers under kMinPooled are never kept (the allocator serves them well), and buffers past the
// bounds are freed. Thread-safe; the trim thread stops with the pool.
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "extender/http/request_parser.h"

namespace extender::http {

class BodyPool final : public BodyBuffers {
 public:
  static constexpr std::size_t kMinPooled = std::size_t{1} << 20;

  explicit BodyPool(std::size_t max_buffers = 4, std::size_t max_bytes = std::size_t{32} << 20);
  ~BodyPool() override;
  BodyPool(const BodyPool&) = delete;
  BodyPool& operator=(const BodyPool&) = delete;

  // The smallest kept buffer of at least `wanted` bytes, emptied; else a new one with `fresh`
  // reserved (a declared length is not trusted with a fresh reservation).
  std::string acquire(std::size_t wanted, std::size_t fresh) override;
  // Keeps the buffer (emptied) when it fits the bounds, else frees it.
  void release(std::string&& buffer) override;
  // Asks the trim thread to give free heap memory back to the system (malloc_trim); requests
  // made while one runs are served by the next run.
  void trim_soon();

  std::size_t kept() const;
  std::size_t kept_bytes() const;
  std::uint64_t trims() const;

 private:
  void trim_loop();

  const std::size_t max_buffers_;
  const std::size_t max_bytes_;
  mutable std::mutex mu_;
  std::vector<std::string> kept_;
  std::size_t kept_bytes_ = 0;
  std::condition_variable trim_cv_;
  bool trim_due_ = false;
  bool stopping_ = false;
  std::uint64_t trims_ = 0;
  std::thread trimmer_;
};

}  // namespace extender::http
