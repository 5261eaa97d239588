#pragma once
// LeaderLabel: the label that makes a replica's pod the endpoint of the leader-only Service. The
// leader puts `key: "true"` on its own pod and takes it off every other pod of its namespace that
// still has it (a predecessor killed before it could); a replica that stops leading takes it off
// its own pod. reconcile() is idempotent and retries on the next call after a failure, so it runs
// after every election attempt. Without a pod name (not running in a pod) it does nothing.
// Called from the election thread only.
#include <chrono>
#include <string>

#include "extender/kube/api_client.h"

namespace extender::kube {

class LeaderLabel {
 public:
  LeaderLabel(ApiClient& client, std::string ns, std::string pod_name, std::string key,
              std::chrono::milliseconds timeout)
      : client_(client), ns_(std::move(ns)), pod_(std::move(pod_name)), key_(std::move(key)), timeout_(timeout) {}

  void reconcile(bool leading);
  // Whether this replica's pod carries the label as far as the last patch knows.
  bool marked() const { return marked_; }

 private:
  bool patch(const std::string& pod, bool set);
  bool clear_others();

  ApiClient& client_;
  std::string ns_;
  std::string pod_;
  std::string key_;
  std::chrono::milliseconds timeout_;
  bool marked_ = false;
  bool unknown_ = true;          // at start the pod may carry the label from an earlier process
  bool others_cleared_ = false;  // since this replica last started leading
  std::string last_error_;       // logged once until it changes
};

}  // namespace extender::kube
