#include "extender/kube/leader_label.h"

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <cctype>
#include <cstdio>

#include "extender/common/logging.h"
#include "extender/kube/pod_reader.h"
#include "extender/kube/watch_event.h"
#include "extender/wire/json_text.h"

namespace extender::kube {

namespace {

std::string query_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '-' || c == '_' || c == '.' || c == '~' || c == '/') {
      out.push_back(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", u);
      out += buf;
    }
  }
  return out;
}

}  // namespace

void LeaderLabel::reconcile(bool leading) {
  if (pod_.empty()) return;
  if (leading) {
    if (!marked_ && patch(pod_, true)) {
      marked_ = true;
      unknown_ = false;
    }
    if (!others_cleared_) others_cleared_ = clear_others();
    return;
  }
  others_cleared_ = false;
  if ((marked_ || unknown_) && patch(pod_, false)) {
    marked_ = false;
    unknown_ = false;
  }
}

bool LeaderLabel::patch(const std::string& pod, bool set) {
  std::string body = "{\"metadata\":{\"labels\":{";
  wire::append_json_string(body, key_);
  body += set ? ":\"true\"}}}" : ":null}}}";
  auto reply =
      client_.merge_patch("/api/v1/namespaces/" + path_segment(ns_) + "/pods/" + path_segment(pod), body, timeout_);
  std::string error;
  if (!reply) {
    error = reply.message();
  } else if (reply->status == 404 && pod != pod_) {
    return true;
  } else if (reply->status != 200) {
    error = "HTTP " + std::to_string(reply->status) + ": " + status_message(*reply);
  }
  if (error.empty()) {
    spdlog::info("leader label {} {} pod {}/{}", key_, set ? "put on" : "taken off", ns_, pod);
    last_error_.clear();
    return true;
  }
  if (error != last_error_) {
    spdlog::error(
        "could not {} leader label {} on pod {}/{} (the leader-only Service follows it; check RBAC patch "
        "on pods): {}",
        set ? "put" : "take off", key_, ns_, pod, printable(error, 512));
    last_error_ = error;
  }
  return false;
}

bool LeaderLabel::clear_others() {
  auto reply = client_.get(
      "/api/v1/namespaces/" + path_segment(ns_) + "/pods?labelSelector=" + query_escape(key_ + "=true"), timeout_);
  if (!reply || reply->status != 200) {
    const std::string error =
        reply ? "HTTP " + std::to_string(reply->status) + ": " + status_message(*reply) : reply.message();
    if (error != last_error_) {
      spdlog::error("could not list pods labelled {} in {}: {}", key_, ns_, printable(error, 512));
      last_error_ = error;
    }
    return false;
  }
  nlohmann::json doc = parse_bounded(reply->body);
  if (!doc.is_object() || !doc.contains("items") || !doc["items"].is_array()) return false;
  bool all = true;
  for (const auto& item : doc["items"]) {
    if (!item.is_object()) continue;
    auto meta = item.find("metadata");
    if (meta == item.end() || !meta->is_object()) continue;
    auto name = meta->find("name");
    if (name == meta->end() || !name->is_string()) continue;
    const std::string other = name->get<std::string>();
    if (other != pod_ && !patch(other, false)) all = false;
  }
  return all;
}

}  // namespace extender::kube
