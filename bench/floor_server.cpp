// The independent floor: an HTTP server that shares no code with the daemon (cpp-httplib's
// server, simdjson on-demand) and does the least an extender must do with a request. Filter, in
// the Nodes form: decode the body, sum the pod's nvidia.com/gpu (requests, else limits, of its
// containers), echo back raw every node whose status.allocatable holds that many, and fail the
// others; in the NodeNames form: echo every name. Prioritize: read every name, rank none (`[]`:
// kube-scheduler adds nothing). Bench programs compare the daemon to it.
//
// usage: floor_server PORT   (listens on 127.0.0.1; POST a path ending in /filter or
//                             /filter-unmanaged, /prioritize or /prioritize-unmanaged)
#include <httplib.h>
#include <simdjson.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  out += '"';
}

std::int64_t count_of(simdjson::ondemand::object resources, std::string_view name) {
  std::string_view text;
  if (resources.find_field_unordered(name).get_string().get(text)) return 0;
  std::int64_t n = 0;
  std::from_chars(text.data(), text.data() + text.size(), n);
  return n;
}

std::int64_t pod_gpus(simdjson::ondemand::object pod) {
  std::int64_t total = 0;
  simdjson::ondemand::array containers;
  if (pod.find_field_unordered("spec").find_field_unordered("containers").get_array().get(containers)) return 0;
  for (auto c : containers) {
    simdjson::ondemand::object resources;
    if (c.find_field_unordered("resources").get_object().get(resources)) continue;
    simdjson::ondemand::object requests;
    std::int64_t n = 0;
    if (!resources.find_field_unordered("requests").get_object().get(requests))
      n = count_of(requests, "nvidia.com/gpu");
    if (n == 0) {
      simdjson::ondemand::object limits;
      if (!resources.find_field_unordered("limits").get_object().get(limits)) n = count_of(limits, "nvidia.com/gpu");
    }
    total += n;
  }
  return total;
}

bool filter(const std::string& body, std::string& out) {
  thread_local simdjson::ondemand::parser parser;
  simdjson::padded_string padded(body);
  simdjson::ondemand::document doc;
  simdjson::ondemand::object args;
  if (parser.iterate(padded).get(doc) || doc.get_object().get(args)) return false;
  std::int64_t wanted = 0;
  bool nodes_form = false;
  std::string failed;
  out.reserve(body.size() + 256);
  for (auto field : args) {
    std::string_view key;
    if (field.unescaped_key().get(key)) return false;
    if (key == "Pod") {
      simdjson::ondemand::object pod;
      if (field.value().get_object().get(pod)) return false;
      wanted = pod_gpus(pod);
    } else if (key == "Nodes") {
      simdjson::ondemand::object list;
      if (field.value().get_object().get(list)) continue;
      simdjson::ondemand::array items;
      if (list.find_field_unordered("items").get_array().get(items)) return false;
      nodes_form = true;
      out = R"({"Nodes":{"metadata":{},"items":[)";
      bool first = true;
      for (auto item : items) {
        simdjson::ondemand::object node;
        std::string_view raw, name;
        if (item.get_object().get(node) || node.raw_json().get(raw)) return false;
        node.reset();
        if (node.find_field_unordered("metadata").find_field_unordered("name").get_string().get(name)) return false;
        simdjson::ondemand::object allocatable;
        std::int64_t has = 0;
        if (!node.find_field_unordered("status").find_field_unordered("allocatable").get_object().get(allocatable)) {
          has = count_of(allocatable, "nvidia.com/gpu");
        }
        if (has >= wanted) {
          if (!first) out += ',';
          first = false;
          out += raw;
        } else {
          if (!failed.empty()) failed += ',';
          append_json_string(failed, name);
          failed += R"(:"node(s) had too few nvidia.com/gpu")";
        }
      }
      out += "]},\"NodeNames\":null";
    } else if (key == "NodeNames" && !nodes_form) {
      simdjson::ondemand::array names;
      if (field.value().get_array().get(names)) continue;
      out = R"({"Nodes":null,"NodeNames":[)";
      bool first = true;
      for (auto item : names) {
        std::string_view name;
        if (item.get_string().get(name)) return false;
        if (!first) out += ',';
        first = false;
        append_json_string(out, name);
      }
      out += "]";
    }
  }
  if (out.empty()) return false;
  out += ",\"FailedNodes\":{" + failed + R"(},"FailedAndUnresolvableNodes":{},"Error":""})";
  return true;
}

bool prioritize(const std::string& body) {
  thread_local simdjson::ondemand::parser parser;
  simdjson::padded_string padded(body);
  simdjson::ondemand::document doc;
  simdjson::ondemand::array names;
  if (parser.iterate(padded).get(doc) || doc.find_field_unordered("NodeNames").get_array().get(names)) return false;
  for (auto item : names) {
    std::string_view name;
    if (item.get_string().get(name)) return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: floor_server PORT\n");
    return 2;
  }
  httplib::Server server;
  auto handle = [](const httplib::Request& request, httplib::Response& response) {
    std::string out;
    if (!filter(request.body, out)) {
      response.status = 400;
      response.set_content(R"({"Error":"undecodable ExtenderArgs"})", "application/json");
      return;
    }
    response.set_content(std::move(out), "application/json");
  };
  auto rank_none = [](const httplib::Request& request, httplib::Response& response) {
    if (!prioritize(request.body)) {
      response.status = 400;
      response.set_content(R"({"Error":"undecodable ExtenderArgs"})", "application/json");
      return;
    }
    response.set_content("[]", "application/json");
  };
  server.Post(R"((/.*)?/filter(-unmanaged)?)", handle);
  server.Post(R"((/.*)?/prioritize(-unmanaged)?)", rank_none);
  server.set_payload_max_length(512u << 20);
  server.set_tcp_nodelay(true);  // else each answer's body waits ~40 ms on Nagle's algorithm and a delayed ACK
  if (!server.listen("127.0.0.1", std::atoi(argv[1]))) {
    std::fprintf(stderr, "floor_server: cannot listen on 127.0.0.1:%s\n", argv[1]);
    return 1;
  }
  return 0;
}
