#include "extender/http/body_budget.h"

#include <algorithm>

namespace extender::http {

namespace {

std::size_t charge(std::size_t bytes, std::size_t total) {
  return bytes > total ? total : std::min(bytes * 5 / 2, total);
}

}  // namespace

std::size_t BodyBudget::share_for(std::size_t max_buffered_bytes, std::size_t request_bytes) {
  return std::max(max_buffered_bytes / 2, charge(request_bytes, max_buffered_bytes));
}

std::size_t BodyBudget::charge_for(std::size_t bytes) const { return charge(bytes, total_); }

BodyBudget::Fit BodyBudget::set(const std::string& peer, std::size_t& held, std::size_t bytes) {
  std::lock_guard lock(mu_);
  if (bytes > held) {
    auto it = by_peer_.find(peer);
    const std::size_t of_peer = it == by_peer_.end() ? 0 : it->second;
    if (of_peer - held + bytes > share_) return Fit::kOverShare;
    if (used_ - held + bytes > total_) return Fit::kOverTotal;
  }
  move(peer, held, bytes);
  return Fit::kFits;
}

void BodyBudget::force(const std::string& peer, std::size_t& held, std::size_t bytes) {
  std::lock_guard lock(mu_);
  move(peer, held, bytes);
}

void BodyBudget::move(const std::string& peer, std::size_t& held, std::size_t bytes) {
  if (bytes == held) return;
  auto it = by_peer_.try_emplace(peer, 0).first;
  it->second = it->second - held + bytes;
  used_ = used_ - held + bytes;
  held = bytes;
  if (it->second == 0) by_peer_.erase(it);
}

std::size_t BodyBudget::used() const {
  std::lock_guard lock(mu_);
  return used_;
}

std::size_t BodyBudget::used_by(const std::string& peer) const {
  std::lock_guard lock(mu_);
  auto it = by_peer_.find(peer);
  return it == by_peer_.end() ? 0 : it->second;
}

}  // namespace extender::http
