#pragma once
// A raw TCP server on 127.0.0.1 for the deadline tests: it reads each request (head and
// Content-Length body) and writes the scripted answer one byte at a time, `pause` apart, until
// all of it is out or the client goes away. Counts the bytes written and answers completed.
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>

namespace extender::kube::testing {

class TrickleServer {
 public:
  TrickleServer(std::string answer, std::chrono::milliseconds pause) : answer_(std::move(answer)), pause_(pause) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd_, 8) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      throw std::runtime_error("trickle server: cannot listen on 127.0.0.1");
    }
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~TrickleServer() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }
  TrickleServer(const TrickleServer&) = delete;
  TrickleServer& operator=(const TrickleServer&) = delete;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::size_t bytes_written() const { return written_; }
  int answers_completed() const { return completed_; }
  std::size_t answer_size() const { return answer_.size(); }

 private:
  bool wait_readable(int fd) {
    pollfd p{fd, POLLIN, 0};
    while (!stop_) {
      if (::poll(&p, 1, 20) > 0) return true;
    }
    return false;
  }

  void serve() {
    while (wait_readable(fd_)) {
      const int conn = ::accept(fd_, nullptr, nullptr);
      if (conn < 0) continue;
      while (read_request(conn) && write_answer(conn)) ++completed_;
      ::close(conn);
    }
  }

  bool read_request(int conn) {
    std::string in;
    std::size_t head_end = std::string::npos;
    std::size_t need = 0;
    char buf[4096];
    for (;;) {
      if (head_end != std::string::npos && in.size() >= head_end + 4 + need) return true;
      if (!wait_readable(conn)) return false;
      const ssize_t n = ::recv(conn, buf, sizeof buf, 0);
      if (n <= 0) return false;
      in.append(buf, static_cast<std::size_t>(n));
      if (head_end == std::string::npos && (head_end = in.find("\r\n\r\n")) != std::string::npos) {
        const auto at = in.find("Content-Length: ");
        if (at != std::string::npos && at < head_end) need = std::strtoul(in.c_str() + at + 16, nullptr, 10);
      }
    }
  }

  bool write_answer(int conn) {
    for (char c : answer_) {
      if (stop_ || ::send(conn, &c, 1, MSG_NOSIGNAL) != 1) return false;
      ++written_;
      std::this_thread::sleep_for(pause_);
    }
    return true;
  }

  const std::string answer_;
  const std::chrono::milliseconds pause_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<std::size_t> written_{0};
  std::atomic<int> completed_{0};
  std::thread thread_;
};

}  // namespace extender::kube::testing
