// Peak memory of one hostile /prioritize or /filter: starts the Release daemon standalone (the
// example inventory) for each case, sends one request, and prints the rise of its peak RSS
// (VmHWM) as a multiple of the decompressed body. Cases: 128 MiB of one-letter node names, the
// same gzip-compressed, and 60,000 distinct names of 2 KiB (as many as 128 MiB holds) to
// prioritize and to filter; 128 MiB of four-letter names (within the token bound, past the node
// cap); 128 MiB of Node objects as kube-scheduler sends them (the `Nodes` form); and a Pod just
// under its 4 MiB cap, of numbers just under the token bound.
// usage: decode_rss [CASE...]
//   CASE: letters, letters-gzip, long-prioritize, long-filter, short-names, node-objects, dense-pod
// $SCHEDULER_EXTENDER_BINARY runs another build of the daemon.
#include <cstdio>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "daemon/daemon_process.h"
#include "support/gzip.h"

namespace {

using extender::testing::DaemonProcess;
using extender::testing::gzip;
using extender::testing::RawConnection;
using extender::testing::status_of;

constexpr std::size_t kMaxBody = std::size_t{128} << 20;
constexpr const char* kConfig =
    "server:\n  max_body_bytes: 128Mi\n  request_deadline: 60s\n  read_timeout: 120s\n  write_timeout: 120s\n"
    "admin:\n  listen: 127.0.0.1:0\n";
constexpr const char* kPod =
    R"({"metadata":{"name":"p","namespace":"bench","uid":"u-1"},"spec":{"containers":[{"name":"c","resources":)"
    R"({"requests":{"nvidia.com/gpu":"1"},"limits":{"nvidia.com/gpu":"1"}}}]}})";

// {"Pod":...,"NodeNames":[...]} of `count` names, the first an inventory node (so there is a
// score); with `numbered`, the others end in their index, so that no two are equal.
std::string names_body(std::size_t count, const std::string& name, bool numbered = false) {
  std::string body = std::string(R"({"Pod":)") + kPod + R"(,"NodeNames":["gpu-a100-1")";
  body.reserve(body.size() + count * (name.size() + 12) + 2);
  for (std::size_t i = 1; i < count; ++i) {
    body += ",\"";
    body += name;
    if (numbered) body += std::to_string(i);
    body += '"';
  }
  body += "]}";
  return body;
}

// {"Pod":...,"Nodes":{"items":[...]}} of the protocol example's node objects, renamed n0, n1 ...,
// up to `size` bytes.
std::string nodes_body(std::size_t size) {
  std::ifstream in(std::string(EXTENDER_FIXTURES_DIR) + "/protocol-examples/filter-request-nodes.json");
  const std::string example((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t start = example.find(R"({"metadata":{"name":"gpu-node-a")");
  const std::size_t end = example.find(R"(,{"metadata":{"name":"gpu-node-b")");
  if (start == std::string::npos || end == std::string::npos) throw std::runtime_error("no node in the example");
  const std::string node = example.substr(start, end - start);
  const std::string name = R"("name":"gpu-node-a")";
  const std::size_t at = node.find(name);
  std::string body = std::string(R"({"Pod":)") + kPod + R"(,"Nodes":{"items":[)";
  body.reserve(size + node.size());
  for (std::size_t i = 0; body.size() + node.size() + 16 < size; ++i) {
    if (i) body += ',';
    body.append(node, 0, at);
    body += R"("name":"n)" + std::to_string(i) + '"';
    body.append(node, at + name.size());
  }
  body += "]}}";
  return body;
}

struct Case {
  std::string name;
  std::string path;
  std::string body;  // decompressed
  bool gzipped = false;
};

void run(const Case& c, const std::string& inventory) {
  const std::string wire = c.gzipped ? gzip(c.body) : c.body;
  DaemonProcess d({"--inventory", inventory}, kConfig);
  const long long before = d.memory("VmHWM");
  RawConnection conn(d.port());
  std::string head = "POST " + c.path + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
                     std::to_string(wire.size()) + "\r\n";
  if (c.gzipped) head += "Content-Encoding: gzip\r\n";
  head += "\r\n";
  conn.send_all(head);
  conn.send_all(wire);
  const std::string response = conn.read_response(std::chrono::seconds(120));
  const long long after = d.memory("VmHWM");
  const double mib = 1024.0 * 1024.0;
  std::string answer =
      response.substr(response.find("\r\n\r\n") == std::string::npos ? 0 : response.find("\r\n\r\n") + 4, 120);
  std::printf("%-16s wire %8.2f MiB  body %7.2f MiB  HTTP %d  peak RSS +%7.1f MiB = %.2fx body  (%s...)\n",
              c.name.c_str(), wire.size() / mib, c.body.size() / mib, status_of(response), (after - before) / mib,
              static_cast<double>(after - before) / static_cast<double>(c.body.size()), answer.c_str());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> wanted(argv + 1, argv + argc);
  auto want = [&](const std::string& name) {
    if (wanted.empty()) return true;
    for (const auto& w : wanted)
      if (w == name) return true;
    return false;
  };
  const std::string inventory = std::string(EXTENDER_FIXTURES_DIR) + "/../../examples/inventory.yaml";
  std::printf("daemon: %s\n", DaemonProcess::binary().c_str());
  const std::size_t overhead = names_body(1, "").size() + 64;
  const std::size_t letters = (kMaxBody - overhead) / 4;
  const std::size_t long_names = 60'000;
  const std::string long_name(2048 - 5, 'n');
  try {
    if (want("letters")) run({"letters", "/prioritize", names_body(letters, "a")}, inventory);
    if (want("letters-gzip")) run({"letters-gzip", "/prioritize", names_body(letters, "a"), true}, inventory);
    if (want("long-prioritize"))
      run({"long-prioritize", "/prioritize", names_body(long_names, long_name, true)}, inventory);
    if (want("long-filter")) run({"long-filter", "/filter", names_body(long_names, long_name, true)}, inventory);
    if (want("short-names"))
      run({"short-names", "/prioritize", names_body((kMaxBody - overhead) / 7, "abcd")}, inventory);
    if (want("dense-pod")) {
      std::string numbers;
      while (numbers.size() < (std::size_t{4} << 20) - 4096) numbers += "111111,";
      numbers += "1";
      run({"dense-pod", "/prioritize",
           R"({"Pod":{"metadata":{"name":"p","namespace":"bench","uid":"u-1"},"x":[)" + numbers +
               R"(]},"NodeNames":["gpu-a100-1"]})"},
          inventory);
    }
    if (want("node-objects")) run({"node-objects", "/prioritize", nodes_body(kMaxBody - 1024)}, inventory);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "decode_rss: %s\n", e.what());
    return 1;
  }
  return 0;
}
