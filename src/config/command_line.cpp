#include "extender/common/yaml_reader.h"
#include "extender/config/config.h"

#include "log_level.h"

namespace extender::config {

std::string usage_text() {
  return R"(Usage: scheduler-extender [flags]
       scheduler-extender simulate [flags]   replay a workload against a model of kube-scheduler (simulate --help)
       scheduler-extender inspect [flags]    the daemon's GPUs, pools and pending pods as tables (inspect --help)

A kube-scheduler HTTP extender that places pods needing GPUs and local volumes.

Flags:
  --config FILE        YAML configuration (every key is documented in examples/config.yaml)
  --listen HOST:PORT   scheduler-facing address (server.listen; default 127.0.0.1:8888)
  --admin-listen HOST:PORT  debug and admin address (admin.listen; default 127.0.0.1:8889)
  --log-level LEVEL    trace, debug, info, warn or error (logging.level)
  --inventory FILE     standalone inventory of nodes and pools (standalone.inventory)
  --mode MODE          standalone or kubernetes (mode)
  --kubeconfig FILE    kubeconfig for kubernetes mode (kubernetes.kubeconfig; default: in-cluster)
  --version            print the version and exit
  --help               print this help and exit
)";
}

Result<CommandLine> parse_command_line(int argc, const char* const* argv) {
  CommandLine cli;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    bool has_inline = false;
    if (auto eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_inline = true;
    }
    auto take = [&](std::string& out) -> Status {
      if (has_inline) {
        out = value;
        return {};
      }
      if (i + 1 >= argc) return Error{arg + " needs a value"};
      out = argv[++i];
      return {};
    };
    Status st;
    if (arg == "--help" || arg == "-h") {
      cli.show_help = true;
    } else if (arg == "--version") {
      cli.show_version = true;
    } else if (arg == "--config") {
      st = take(cli.config_file);
    } else if (arg == "--listen") {
      st = take(cli.listen);
    } else if (arg == "--admin-listen") {
      st = take(cli.admin_listen);
    } else if (arg == "--log-level") {
      st = take(cli.log_level);
    } else if (arg == "--inventory") {
      st = take(cli.inventory);
    } else if (arg == "--kubeconfig") {
      st = take(cli.kubeconfig);
    } else if (arg == "--mode") {
      st = take(cli.mode);
    } else {
      return Error{"unknown flag " + arg + " (see --help)"};
    }
    if (!st) return st.error();
  }
  return cli;
}

Result<Config> resolve_config(const CommandLine& cli) {
  Config c;
  if (!cli.config_file.empty()) {
    auto loaded = load_config_file(cli.config_file);
    if (!loaded) return loaded.error();
    c = std::move(*loaded);
  }
  if (!cli.listen.empty()) {
    if (auto hp = parse_host_port(cli.listen); !hp) return Error{"--listen: " + hp.message()};
    c.server.listen = cli.listen;
  }
  if (!cli.admin_listen.empty()) {
    if (auto hp = parse_host_port(cli.admin_listen); !hp) return Error{"--admin-listen: " + hp.message()};
    c.admin.listen = cli.admin_listen;
  }
  if (!cli.log_level.empty()) {
    if (auto st = check_log_level(cli.log_level); !st) return Error{"--log-level: " + st.message()};
    c.logging.level = cli.log_level;
  }
  if (!cli.inventory.empty()) c.standalone.inventory = cli.inventory;
  if (!cli.kubeconfig.empty()) c.kubernetes.kubeconfig = cli.kubeconfig;
  if (!cli.mode.empty()) {
    if (cli.mode == "standalone") {
      c.mode = Mode::kStandalone;
    } else if (cli.mode == "kubernetes") {
      c.mode = Mode::kKubernetes;
    } else {
      return Error{"--mode: expected standalone or kubernetes"};
    }
  }
  return c;
}

}  // namespace extender::config
