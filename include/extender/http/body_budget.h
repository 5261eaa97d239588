#pragma once
// BodyBudget: the memory request bodies hold at once (server.max_buffered_bytes), by peer
// address. Each holder (a connection reading a body or writing an answer, a worker inflating a
// compressed body) keeps what it charges in its own counter and moves it with set() or force();
// a peer holds at most `share` of `total`, so a peer that sends more, or lies about what it sends,
// spends its own share. Charges are for bytes that exist (read, inflated or to be written), never
// for what a header or a size field claims. Thread-safe (one mutex).
#include <cstddef>
#include <mutex>
#include <string>
#include <unordered_map>

namespace extender::http {

class BodyBudget {
 public:
  enum class Fit { kFits, kOverShare, kOverTotal };

  BodyBudget(std::size_t total, std::size_t share) : total_(total), share_(share) {}

  // A listener's share for one peer: half the budget, or what one request of `request_bytes`
  // (max_body_bytes and a head of max_header_bytes) is charged if more.
  static std::size_t share_for(std::size_t max_buffered_bytes, std::size_t request_bytes);

  // What `bytes` of a body cost: the bytes and what decoding them may build
  // (the extender API's decoder stays within 1.5 times the body), at most the whole budget, so
  // that one request is served when nothing else is held.
  std::size_t charge_for(std::size_t bytes) const;

  // Moves the holder's charge `held` for `peer` to `bytes` unless it grows past the peer's share
  // or the total (then nothing changes and the answer says which).
  Fit set(const std::string& peer, std::size_t& held, std::size_t bytes);
  // Moves it whatever the budget holds (answers being written, releases).
  void force(const std::string& peer, std::size_t& held, std::size_t bytes);

  std::size_t used() const;
  std::size_t used_by(const std::string& peer) const;

 private:
  void move(const std::string& peer, std::size_t& held, std::size_t bytes);  // needs mu_

  const std::size_t total_;
  const std::size_t share_;
  mutable std::mutex mu_;
  std::size_t used_ = 0;
  std::unordered_map<std::string, std::size_t> by_peer_;
};

}  // namespace extender::http
