#include "extender/common/logging.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <ctime>

namespace extender {
namespace {

void append_escaped(spdlog::memory_buf_t& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(ch);
    } else if (c < 0x20) {
      const char esc[] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xf]};
      out.append(esc, esc + sizeof esc);
    } else {
      out.push_back(ch);
    }
  }
}

class JsonFormatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    using namespace std::chrono;
    const auto t = system_clock::to_time_t(msg.time);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char ts[64];
    const auto ms = duration_cast<milliseconds>(msg.time.time_since_epoch()).count() % 1000;
    std::snprintf(ts, sizeof ts, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                  tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
    std::string_view head = "{\"time\":\"";
    dest.append(head.data(), head.data() + head.size());
    dest.append(ts, ts + std::strlen(ts));
    std::string_view mid = "\",\"level\":\"";
    dest.append(mid.data(), mid.data() + mid.size());
    auto level = spdlog::level::to_string_view(msg.level);
    dest.append(level.data(), level.data() + level.size());
    std::string_view msg_key = "\",\"msg\":\"";
    dest.append(msg_key.data(), msg_key.data() + msg_key.size());
    append_escaped(dest, std::string_view(msg.payload.data(), msg.payload.size()));
    std::string_view tail = "\"}\n";
    dest.append(tail.data(), tail.data() + tail.size());
  }
  std::unique_ptr<spdlog::formatter> clone() const override { return std::make_unique<JsonFormatter>(); }
};

// Plain text, with control characters in messages shown as '?', so that text taken from requests
// (pod names, reasons) cannot start a line of its own.
class TextFormatter final : public spdlog::formatter {
 public:
  TextFormatter() : pattern_(std::make_unique<spdlog::pattern_formatter>("%Y-%m-%dT%H:%M:%S.%e%z %-5l %v")) {}
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    std::string_view payload(msg.payload.data(), msg.payload.size());
    bool clean = true;
    for (char c : payload) clean = clean && static_cast<unsigned char>(c) >= 0x20;
    if (clean) return pattern_->format(msg, dest);
    std::string text(payload);
    for (char& c : text) {
      if (static_cast<unsigned char>(c) < 0x20) c = '?';
    }
    spdlog::details::log_msg copy = msg;
    copy.payload = text;
    pattern_->format(copy, dest);
  }
  std::unique_ptr<spdlog::formatter> clone() const override { return std::make_unique<TextFormatter>(); }

 private:
  std::unique_ptr<spdlog::pattern_formatter> pattern_;
};

}  // namespace

Status setup_logging(const std::string& level, bool json) {
  auto parsed = spdlog::level::from_str(level);
  if (parsed == spdlog::level::off && level != "off") return Error{"unknown log level " + level};
  auto logger = std::make_shared<spdlog::logger>("scheduler-extender", std::make_shared<spdlog::sinks::stderr_sink_mt>());
  if (json) {
    logger->set_formatter(std::make_unique<JsonFormatter>());
  } else {
    logger->set_formatter(std::make_unique<TextFormatter>());
  }
  logger->set_level(parsed);
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(std::move(logger));
  return {};
}

std::string printable(std::string_view text, std::size_t max) {
  if (text.size() <= max) return std::string(text);
  return std::string(text.substr(0, max)) + "...";
}

}  // namespace extender
