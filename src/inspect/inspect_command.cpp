#include "extender/inspect/inspect_command.h"

#include <httplib.h>

#include <cstdio>
#include <string_view>

#include "extender/inspect/inspect_tables.h"

namespace extender::inspect {
namespace {

struct Options {
  std::string admin = "http://127.0.0.1:8889";
  std::string node;
  std::string pod;
  bool pools = false;
  bool help = false;
};

Result<Options> parse(int argc, const char* const* argv) {
  Options o;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    const bool has_inline = arg.rfind("--", 0) == 0 && arg.find('=') != std::string::npos;
    if (has_inline) {
      value = arg.substr(arg.find('=') + 1);
      arg = arg.substr(0, arg.find('='));
    }
    auto take = [&](std::string& out) -> bool {
      if (has_inline) {
        out = value;
        return true;
      }
      if (i + 1 >= argc) return false;
      out = argv[++i];
      return true;
    };
    bool ok = true;
    if (arg == "--help" || arg == "-h") {
      o.help = true;
    } else if (arg == "--pools") {
      o.pools = true;
    } else if (arg == "--admin") {
      ok = take(o.admin);
    } else if (arg == "--node") {
      ok = take(o.node);
    } else if (arg == "--pod") {
      ok = take(o.pod);
    } else {
      return Error{"unknown argument " + arg + " (see inspect --help)"};
    }
    if (!ok) return Error{arg + " needs a value"};
  }
  if (!o.pod.empty() && o.pod.find('/') == std::string::npos) return Error{"--pod takes NAMESPACE/NAME"};
  if (static_cast<int>(!o.node.empty()) + static_cast<int>(!o.pod.empty()) + static_cast<int>(o.pools) > 1) {
    return Error{"give at most one of --node, --pod and --pools"};
  }
  if (o.admin.find("://") == std::string::npos) o.admin = "http://" + o.admin;
  return o;
}

std::string path_of(const Options& o) {
  if (!o.node.empty()) return "/debug/nodes/" + o.node;
  if (!o.pod.empty()) return "/debug/pods/" + o.pod;
  return "/debug/state";
}

Result<std::string> render(const Options& o, const std::string& body) {
  if (!o.node.empty()) return node_table(body);
  if (!o.pod.empty()) return pod_table(body);
  if (o.pools) return pools_table(body);
  return nodes_table(body);
}

}  // namespace

std::string inspect_usage() {
  return R"(Usage: scheduler-extender inspect [--admin URL] [--node NAME | --pod NAMESPACE/NAME | --pools]

Prints what the daemon sees, read from its admin port:
  (no flag)            every node: GPUs used, each device (W whole, S shared, . free), pods, pools
  --node NAME          one node: each GPU, who holds it (whole or the share), its pools
  --pod NAMESPACE/NAME why the pod waits: per group of nodes refused alike, the daemon's last
                       reason and what it would take to fit
  --pools              every local pool: capacity, published figure, used, held in flight, free
  --admin URL          the admin address (default http://127.0.0.1:8889). In a cluster:
                       kubectl -n NAMESPACE port-forward deploy/scheduler-extender 8889:8889
)";
}

int run_inspect_command(int argc, const char* const* argv) {
  auto o = parse(argc, argv);
  if (!o) {
    std::fprintf(stderr, "scheduler-extender inspect: %s\n", o.message().c_str());
    return 2;
  }
  if (o->help) {
    std::fputs(inspect_usage().c_str(), stdout);
    return 0;
  }
  httplib::Client client(o->admin);
  client.set_connection_timeout(5);
  client.set_read_timeout(30);
  auto res = client.Get(path_of(*o));
  if (!res) {
    std::fprintf(stderr, "scheduler-extender inspect: cannot reach %s: %s\n", o->admin.c_str(),
                 httplib::to_string(res.error()).c_str());
    return 2;
  }
  if (res->status != 200) {
    std::fprintf(stderr, "scheduler-extender inspect: %d %s\n", res->status, res->body.c_str());
    return 1;
  }
  auto text = render(*o, res->body);
  if (!text) {
    std::fprintf(stderr, "scheduler-extender inspect: %s\n", text.message().c_str());
    return 1;
  }
  std::fputs(text->c_str(), stdout);
  return 0;
}

}  // namespace extender::inspect
