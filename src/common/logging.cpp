#include "extender/common/logging.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <ctime>

namespace extender {
namespace {

// The length of the valid UTF-8 sequence at the start of `s` (no overlong forms, surrogates or
// code points past U+10FFFF) and its code point, or 0 when the first byte starts none.
std::size_t utf8_sequence(std::string_view s, char32_t& cp) {
  const auto b = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char c = b(0);
  if (c < 0x80) {
    cp = c;
    return 1;
  }
  std::size_t n = 0;
  char32_t min = 0;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2, cp = c & 0x1F, min = 0x80;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3, cp = c & 0x0F, min = 0x800;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4, cp = c & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (s.size() < n) return 0;
  for (std::size_t i = 1; i < n; ++i) {
    if ((b(i) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(i) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

bool unsafe(char32_t cp) { return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0x2028 || cp == 0x2029; }

bool clean(std::string_view s) {
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7F) return false;
  }
  return true;
}

void append(spdlog::memory_buf_t& out, std::string_view s) { out.append(s.data(), s.data() + s.size()); }

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
    append(dest, log_json_string(std::string_view(msg.payload.data(), msg.payload.size())));
    std::string_view tail = "\"}\n";
    dest.append(tail.data(), tail.data() + tail.size());
  }
  std::unique_ptr<spdlog::formatter> clone() const override { return std::make_unique<JsonFormatter>(); }
};

// Plain text; a message that is not plain ASCII is shown through log_text().
class TextFormatter final : public spdlog::formatter {
 public:
  TextFormatter() : pattern_(std::make_unique<spdlog::pattern_formatter>("%Y-%m-%dT%H:%M:%S.%e%z %-5l %v")) {}
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    std::string_view payload(msg.payload.data(), msg.payload.size());
    if (clean(payload)) return pattern_->format(msg, dest);
    const std::string text = log_text(payload);
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
  auto logger =
      std::make_shared<spdlog::logger>("scheduler-extender", std::make_shared<spdlog::sinks::stderr_sink_mt>());
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
  std::size_t cut = max;
  // Back to the start of the character the cut falls in (a UTF-8 sequence is at most 4 bytes).
  for (int back = 0; back < 3 && cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80; ++back) --cut;
  return std::string(text.substr(0, cut)) + "...";
}

std::string log_text(std::string_view message) {
  std::string out;
  out.reserve(message.size());
  while (!message.empty()) {
    char32_t cp = 0;
    const std::size_t n = utf8_sequence(message, cp);
    if (n == 0 || unsafe(cp)) {
      out.push_back('?');
    } else {
      out.append(message.substr(0, n));
    }
    message.remove_prefix(n == 0 ? 1 : n);
  }
  return out;
}

std::string log_json_string(std::string_view message) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(message.size());
  while (!message.empty()) {
    char32_t cp = 0;
    const std::size_t n = utf8_sequence(message, cp);
    if (n == 0) {
      out += "\\ufffd";
    } else if (cp == '"' || cp == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(cp));
    } else if (unsafe(cp)) {
      const char esc[] = {'\\',          'u', kHex[(cp >> 12) & 0xf], kHex[(cp >> 8) & 0xf], kHex[(cp >> 4) & 0xf],
                          kHex[cp & 0xf]};
      out.append(esc, sizeof esc);
    } else {
      out.append(message.substr(0, n));
    }
    message.remove_prefix(n == 0 ? 1 : n);
  }
  return out;
}

}  // namespace extender
