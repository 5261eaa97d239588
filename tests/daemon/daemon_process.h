#pragma once
// DaemonProcess: runs the built scheduler-extender binary for a test, on ephemeral ports (read
// back from its log), and stops it with SIGTERM. RawConnection: a plain TCP client for what an
// HTTP library will not send (chunked floods, lying Content-Length, half-sent bodies).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <regex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace extender::testing {

class DaemonProcess {
 public:
  explicit DaemonProcess(std::vector<std::string> args, std::string config_yaml = "") {
    std::vector<std::string> argv = {binary()};
    if (!config_yaml.empty()) {
      char path[] = "/tmp/extender-test-config-XXXXXX";
      int fd = mkstemp(path);
      if (fd < 0) throw std::runtime_error("mkstemp");
      config_path_ = path;
      if (write(fd, config_yaml.data(), config_yaml.size()) != static_cast<ssize_t>(config_yaml.size())) {
        throw std::runtime_error("write config");
      }
      close(fd);
      argv.push_back("--config");
      argv.push_back(config_path_);
    }
    bool has_listen = false;
    for (const auto& a : args) has_listen = has_listen || a == "--listen";
    if (!has_listen) {
      argv.push_back("--listen");
      argv.push_back("127.0.0.1:0");
    }
    for (auto& a : args) argv.push_back(std::move(a));
    start(argv);
  }

  ~DaemonProcess() {
    stop();
    if (!config_path_.empty()) unlink(config_path_.c_str());
  }

  // The binary: the built one, or $SCHEDULER_EXTENDER_BINARY (to measure another build).
  static std::string binary() {
    const char* other = std::getenv("SCHEDULER_EXTENDER_BINARY");
    return other && *other ? other : EXTENDER_BINARY;
  }

  int port() const { return port_; }
  int admin_port() const { return admin_port_; }
  pid_t pid() const { return pid_; }

  // The daemon's resident memory (VmRSS), or its peak (VmHWM), in bytes; -1 when unreadable.
  long long memory(const char* field = "VmRSS") const {
    std::ifstream status("/proc/" + std::to_string(pid_) + "/status");
    std::string line;
    const std::string key = std::string(field) + ":";
    while (std::getline(status, line)) {
      if (line.rfind(key, 0) == 0) return std::stoll(line.substr(key.size())) * 1024;
    }
    return -1;
  }

  // Sends SIGTERM and waits; returns the exit status (or -signal).
  int stop() {
    if (pid_ <= 0) return exit_status_;
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    if (reader_.joinable()) reader_.join();
    exit_status_ = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
    return exit_status_;
  }

  bool alive() {
    if (pid_ <= 0) return false;
    int status = 0;
    return waitpid(pid_, &status, WNOHANG) == 0;
  }

  std::string log() {
    std::lock_guard lock(mu_);
    return log_;
  }

  // The log once it holds `text` (the daemon logs a request after answering it), or as it is after
  // `timeout`.
  std::string wait_for_log(const std::string& text, std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::string current = log();
    while (current.find(text) == std::string::npos && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      current = log();
    }
    return current;
  }

  // Runs the binary to completion (for flag and config errors): returns {exit status, output}.
  static std::pair<int, std::string> run_to_exit(std::vector<std::string> args) {
    DaemonProcess p;
    std::vector<std::string> argv = {EXTENDER_BINARY};
    for (auto& a : args) argv.push_back(std::move(a));
    p.start(argv, /*wait_for_ports=*/false);
    int status = 0;
    waitpid(p.pid_, &status, 0);
    p.pid_ = -1;
    if (p.reader_.joinable()) p.reader_.join();
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, p.log()};
  }

 private:
  DaemonProcess() = default;

  void start(const std::vector<std::string>& argv, bool wait_for_ports = true) {
    int fds[2];
    if (pipe(fds) != 0) throw std::runtime_error("pipe");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    std::vector<char*> cargv;
    for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    if (posix_spawn(&pid_, argv[0].c_str(), &actions, nullptr, cargv.data(), environ) != 0) {
      throw std::runtime_error("cannot start " + argv[0]);
    }
    posix_spawn_file_actions_destroy(&actions);
    close(fds[1]);
    int out = fds[0];
    reader_ = std::thread([this, out] {
      char buf[4096];
      ssize_t n;
      while ((n = read(out, buf, sizeof buf)) > 0) {
        std::lock_guard lock(mu_);
        log_.append(buf, static_cast<size_t>(n));
      }
      close(out);
    });
    if (!wait_for_ports) return;
    const std::regex serving(R"(serving https? on [^ ]+:(\d+))");
    const std::regex admin(R"(admin and debug endpoints on http://[^ ]+:(\d+))");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
      std::string text = log();
      std::smatch m;
      if (port_ == 0 && std::regex_search(text, m, serving)) port_ = std::stoi(m[1]);
      if (admin_port_ == 0 && std::regex_search(text, m, admin)) admin_port_ = std::stoi(m[1]);
      bool admin_expected =
          text.find("admin and debug endpoints") != std::string::npos || text.find("serving") == std::string::npos;
      if (port_ != 0 && (!admin_expected || admin_port_ != 0)) return;
      if (!alive()) throw std::runtime_error("daemon exited early:\n" + text);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    throw std::runtime_error("daemon did not report its port:\n" + log());
  }

  pid_t pid_ = -1;
  int port_ = 0;
  int admin_port_ = 0;
  int exit_status_ = -1;
  std::string config_path_;
  std::mutex mu_;
  std::string log_;
  std::thread reader_;
};

class RawConnection {
 public:
  // From `source` (an address of 127.0.0.0/8, to stand for another peer) when given.
  explicit RawConnection(int port, const char* source = nullptr) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    if (source) {
      sockaddr_in from{};
      from.sin_family = AF_INET;
      inet_pton(AF_INET, source, &from.sin_addr);
      if (::bind(fd_, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0) throw std::runtime_error("bind");
    }
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) throw std::runtime_error("connect");
    int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  ~RawConnection() { close(fd_); }

  // Sends what it can; false once the peer has closed or reset the connection.
  bool send_all(const std::string& data) {
    size_t sent = 0;
    while (sent < data.size()) {
      ssize_t n = ::send(fd_, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += static_cast<size_t>(n);
    }
    return true;
  }

  // True when the peer has closed or reset the connection (checked without waiting).
  bool closed_by_peer() {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, 0) <= 0) return false;
    char c;
    return ::recv(fd_, &c, 1, MSG_PEEK | MSG_DONTWAIT) <= 0;
  }

  // Reads until the peer closes or `timeout` passes without data.
  std::string read_until_closed(std::chrono::milliseconds timeout, bool* closed = nullptr) {
    std::string out;
    char buf[8192];
    for (;;) {
      pollfd p{fd_, POLLIN, 0};
      int r = poll(&p, 1, static_cast<int>(timeout.count()));
      if (r <= 0) {
        if (closed) *closed = false;
        return out;
      }
      ssize_t n = recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) {
        if (closed) *closed = true;
        return out;
      }
      out.append(buf, static_cast<size_t>(n));
    }
  }

  // Reads one HTTP response with a Content-Length body.
  std::string read_response(std::chrono::milliseconds timeout) {
    std::string out;
    char buf[8192];
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      auto header_end = out.find("\r\n\r\n");
      if (header_end != std::string::npos) {
        std::smatch m;
        std::string head = out.substr(0, header_end);
        std::regex cl("Content-Length: (\\d+)", std::regex::icase);
        size_t body = std::regex_search(head, m, cl) ? std::stoul(m[1]) : 0;
        if (out.size() >= header_end + 4 + body) return out.substr(0, header_end + 4 + body);
      }
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return out;
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(left.count())) <= 0) return out;
      ssize_t n = recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) return out;
      out.append(buf, static_cast<size_t>(n));
    }
  }

 private:
  int fd_ = -1;
};

inline int status_of(const std::string& response) {
  if (response.size() < 12 || response.compare(0, 5, "HTTP/") != 0) return -1;
  return std::stoi(response.substr(9, 3));
}

}  // namespace extender::testing
