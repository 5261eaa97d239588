#include "extender/http/request_parser.h"

#include "extender/http/content_decoding.h"

#include <algorithm>
#include <cstring>

namespace extender::http {
namespace {

bool is_token_char(char c) {
  if (c >= 'a' && c <= 'z') return true;
  if (c >= 'A' && c <= 'Z') return true;
  if (c >= '0' && c <= '9') return true;
  return std::strchr("!#$%&'*+-.^_`|~", c) != nullptr && c != '\0';
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Splits a comma-separated header value into lower-cased, trimmed items.
std::vector<std::string> list_items(std::string_view value) {
  std::vector<std::string> items;
  while (!value.empty()) {
    const auto comma = value.find(',');
    std::string_view item = trim(value.substr(0, comma));
    if (!item.empty()) items.push_back(lower(item));
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return items;
}

// The head ends at its first empty line, however the bytes arrived: the position where the line
// ending before it starts, and the length of that ending and the empty line together.
std::pair<std::size_t, std::size_t> first_empty_line(std::string_view text, std::size_t from) {
  for (std::size_t i = text.find('\n', from); i != std::string_view::npos; i = text.find('\n', i + 1)) {
    std::size_t term = 0;
    if (i + 1 < text.size() && text[i + 1] == '\n') term = 2;
    if (i + 2 < text.size() && text[i + 1] == '\r' && text[i + 2] == '\n') term = 3;
    if (term == 0) continue;
    if (i > 0 && text[i - 1] == '\r') return {i - 1, term + 1};
    return {i, term};
  }
  return {std::string_view::npos, 0};
}

bool methods_without_body(std::string_view method) {
  return method == "GET" || method == "HEAD" || method == "DELETE" || method == "OPTIONS" || method == "TRACE";
}

std::string too_large(std::size_t limit) {
  return "request body is larger than the limit of " + std::to_string(limit) + " bytes (server.max_body_bytes)";
}

// Why a request head is refused: the status to answer and the reason.
struct Refusal {
  int status;
  std::string reason;
};
using Verdict = std::optional<Refusal>;  // nullopt: accepted

// The first line of `text`, without its line ending, taken off `text`.
std::string_view next_line(std::string_view& text) {
  const auto nl = text.find('\n');
  std::string_view line = text.substr(0, nl);
  text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

// "METHOD target HTTP/1.x": sets the method, target, version and the version's keep-alive default.
Verdict read_request_line(std::string_view request_line, RequestHead& head) {
  const auto sp1 = request_line.find(' ');
  const auto sp2 = sp1 == std::string_view::npos ? sp1 : request_line.find(' ', sp1 + 1);
  if (sp1 == std::string_view::npos || sp2 == std::string_view::npos || sp1 == 0 || sp2 == sp1 + 1) {
    return Refusal{400, "malformed request line"};
  }
  const std::string_view method = request_line.substr(0, sp1);
  const std::string_view target = request_line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = request_line.substr(sp2 + 1);
  if (!std::all_of(method.begin(), method.end(), is_token_char)) return Refusal{400, "malformed request method"};
  for (char c : target) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) return Refusal{400, "malformed request target"};
  }
  if (version.size() != 8 || version.substr(0, 5) != "HTTP/" || version[6] != '.' || version[5] < '0' ||
      version[5] > '9' || version[7] < '0' || version[7] > '9') {
    return Refusal{400, "malformed HTTP version"};
  }
  if (version[5] != '1') return Refusal{505, "only HTTP/1.0 and HTTP/1.1 are served"};
  head.method = std::string(method);
  head.target = std::string(target);
  head.minor_version = version[7] - '0';
  head.keep_alive = head.minor_version >= 1;
  return std::nullopt;
}

// "Name: value": adds the header, its name lower-cased and its value trimmed.
Verdict read_header_line(std::string_view line, RequestHead& head) {
  if (line.front() == ' ' || line.front() == '\t') return Refusal{400, "folded header lines are not accepted"};
  const auto colon = line.find(':');
  if (colon == std::string_view::npos || colon == 0) return Refusal{400, "malformed header line"};
  const std::string_view name = line.substr(0, colon);
  if (!std::all_of(name.begin(), name.end(), is_token_char)) return Refusal{400, "malformed header name"};
  const std::string_view value = trim(line.substr(colon + 1));
  for (char c : value) {
    if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f) {
      return Refusal{400, "control character in a header value"};
    }
  }
  head.headers.emplace_back(lower(name), std::string(value));
  return std::nullopt;
}

Verdict read_content_length(const std::string& value, bool& has_length, RequestHead& head) {
  if (value.empty() || value.size() > 19 ||
      !std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return Refusal{400, "Content-Length is not a number"};
  }
  const std::uint64_t n = std::stoull(value);
  if (has_length && head.content_length != n) return Refusal{400, "conflicting Content-Length headers"};
  has_length = true;
  head.content_length = n;
  return std::nullopt;
}

Verdict read_transfer_encoding(const std::string& value, RequestHead& head) {
  const std::vector<std::string> codings = list_items(value);
  if (codings.empty()) return Refusal{400, "empty Transfer-Encoding"};
  for (const auto& coding : codings) {
    if (coding != "chunked" || head.chunked) {
      return Refusal{501, "transfer coding \"" + coding + "\" is not supported; send chunked or a Content-Length"};
    }
    head.chunked = true;
  }
  return std::nullopt;
}

Verdict read_content_encoding(const std::string& value, RequestHead& head) {
  for (const auto& coding : list_items(value)) {
    if (coding == "identity") continue;
    if ((coding == "gzip" || coding == "x-gzip" || coding == "deflate") && head.content_coding.empty()) {
      head.content_coding = coding == "deflate" ? "deflate" : "gzip";
      continue;
    }
    return Refusal{415, "content coding \"" + coding + "\" is not supported; send identity, gzip or deflate"};
  }
  return std::nullopt;
}

// Reads the headers that frame the body and the connection, in the order they came.
Verdict read_framing(RequestHead& head) {
  bool has_length = false;
  for (const auto& [name, value] : head.headers) {
    Verdict refused;
    if (name == "content-length") {
      refused = read_content_length(value, has_length, head);
    } else if (name == "transfer-encoding") {
      refused = read_transfer_encoding(value, head);
    } else if (name == "connection") {
      for (const auto& option : list_items(value)) {
        if (option == "close") head.keep_alive = false;
        if (option == "keep-alive" && head.minor_version == 0) head.keep_alive = true;
      }
    } else if (name == "expect") {
      if (lower(value) != "100-continue") return Refusal{417, "only Expect: 100-continue is understood"};
      head.expect_continue = true;
    } else if (name == "content-encoding") {
      refused = read_content_encoding(value, head);
    }
    if (refused) return refused;
  }
  if (head.chunked && has_length) return Refusal{400, "both Transfer-Encoding and Content-Length"};
  if (head.chunked && head.minor_version == 0) return Refusal{400, "chunked transfer coding in an HTTP/1.0 request"};
  return std::nullopt;
}

// The head's text (without the empty line that ends it) into `head`.
Verdict read_head(std::string_view text, RequestHead& head) {
  if (auto refused = read_request_line(next_line(text), head)) return refused;
  while (!text.empty()) {
    const std::string_view line = next_line(text);
    if (line.empty()) continue;
    if (auto refused = read_header_line(line, head)) return refused;
  }
  return read_framing(head);
}

// A chunk-size line's size (hexadecimal, extensions after ';' ignored); nullopt when malformed.
std::optional<std::uint64_t> chunk_size(std::string_view line) {
  const std::string_view size = trim(line.substr(0, line.find(';')));
  if (size.empty() || size.size() > 16) return std::nullopt;
  std::uint64_t n = 0;
  for (char c : size) {
    int d = (c >= '0' && c <= '9')   ? c - '0'
            : (c >= 'a' && c <= 'f') ? c - 'a' + 10
            : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                     : -1;
    if (d < 0) return std::nullopt;
    n = n * 16 + static_cast<std::uint64_t>(d);
  }
  return n;
}

}  // namespace

const std::string* RequestHead::header(std::string_view lower_name) const {
  for (const auto& [name, value] : headers) {
    if (name == lower_name) return &value;
  }
  return nullptr;
}

RequestParser::RequestParser(ParseLimits limits, BodyBuffers* buffers) : limits_(limits), buffers_(buffers) {}
RequestParser::~RequestParser() { drop_body(); }

void RequestParser::drop_body() {
  if (buffers_ && body_.capacity() > 0) buffers_->release(std::move(body_));
  std::string().swap(body_);
}

void RequestParser::reset() {
  state_ = State::kHead;
  started_ = false;
  std::string().swap(head_buf_);
  lines_ = 0;
  head_ = RequestHead{};
  drop_body();
  wire_received_ = 0;
  error_status_ = 0;
  error_.clear();
  chunk_ = Chunk::kSize;
  chunk_line_.clear();
  chunk_left_ = 0;
}

void RequestParser::fail(int status, std::string message) {
  state_ = State::kFailed;
  error_status_ = status;
  error_ = std::move(message);
  drop_body();
}

std::string RequestParser::take_body() {
  if (body_.capacity() < body_.size() + kBodyPadding) body_.reserve(body_.size() + kBodyPadding);
  return std::move(body_);
}

std::size_t RequestParser::feed(std::string_view data) {
  std::size_t used = 0;
  if (!data.empty()) started_ = true;
  while (used < data.size() || state_ == State::kBody) {
    const std::size_t before = used;
    switch (state_) {
      case State::kHead: used += feed_head(data.substr(used)); break;
      case State::kBody: used += feed_body(data.substr(used)); break;
      case State::kComplete:
      case State::kFailed: return used;
    }
    if (used == before && state_ != State::kComplete && state_ != State::kFailed) break;
  }
  return used;
}

std::size_t RequestParser::feed_head(std::string_view data) {
  // Empty lines before a request line are ignored (RFC 9112 section 2.2).
  std::size_t skipped = 0;
  if (head_buf_.empty()) {
    while (skipped < data.size() && (data[skipped] == '\r' || data[skipped] == '\n')) ++skipped;
    data.remove_prefix(skipped);
    if (data.empty()) return skipped;
  }
  const std::size_t old = head_buf_.size();
  const std::size_t room = limits_.max_head_bytes + 4 - std::min(limits_.max_head_bytes + 4, old);
  head_buf_.append(data.substr(0, std::min(data.size(), room)));
  // Search from a little before the old end: the terminator may straddle two pieces.
  const std::size_t from = old >= 3 ? old - 3 : 0;
  auto [end, term] = first_empty_line(head_buf_, from);
  const std::size_t counted_to = end == std::string::npos ? head_buf_.size() : end + term - 1;
  for (std::size_t i = old; i < counted_to; ++i) {
    if (head_buf_[i] == '\n') ++lines_;
  }
  if (lines_ > limits_.max_header_count + 1) {
    fail(431, "more than " + std::to_string(limits_.max_header_count) + " header lines (server.max_header_count)");
    return data.size() + skipped;
  }
  if (end == std::string::npos) {
    if (head_buf_.size() >= limits_.max_head_bytes + 4) {
      fail(431,
           "request head larger than " + std::to_string(limits_.max_head_bytes) + " bytes (server.max_header_bytes)");
    }
    return data.size() + skipped;
  }
  if (end + term > limits_.max_head_bytes + 4) {
    fail(431,
         "request head larger than " + std::to_string(limits_.max_head_bytes) + " bytes (server.max_header_bytes)");
    return data.size() + skipped;
  }
  const std::size_t consumed_here = end + term - old;
  head_buf_.resize(end);
  if (!parse_head()) return consumed_here + skipped;
  finish_head();
  return consumed_here + skipped;
}

bool RequestParser::parse_head() {
  std::optional<Refusal> refused = read_head(head_buf_, head_);
  if (refused) fail(refused->status, std::move(refused->reason));
  return !refused;
}

void RequestParser::finish_head() {
  std::string().swap(head_buf_);
  const bool has_body = head_.chunked || (head_.content_length && *head_.content_length > 0);
  if (has_body && methods_without_body(head_.method)) {
    fail(400, head_.method + " requests carry no body");
    return;
  }
  if (head_.content_length && *head_.content_length > limits_.max_body_bytes) {
    fail(413, too_large(limits_.max_body_bytes));
    return;
  }
  if (!has_body) {
    state_ = State::kComplete;
    return;
  }
  if (head_.content_length) {
    const auto declared = static_cast<std::size_t>(*head_.content_length);
    const std::size_t first = std::min<std::size_t>(declared, std::size_t{1} << 20) + kBodyPadding;
    if (buffers_ && declared >= (std::size_t{1} << 20)) {
      body_ = buffers_->acquire(declared + kBodyPadding, first);
    } else {
      body_.reserve(first);
    }
  }
  state_ = State::kBody;
}

bool RequestParser::append_body(std::string_view wire) {
  wire_received_ += wire.size();
  if (wire_received_ > limits_.max_body_bytes) {
    fail(413, too_large(limits_.max_body_bytes));
    return false;
  }
  const std::size_t need = body_.size() + wire.size() + kBodyPadding;
  if (body_.capacity() < need) {
    body_.reserve(std::max(need, std::min(body_.capacity() * 2, limits_.max_body_bytes + kBodyPadding)));
  }
  body_.append(wire);
  return true;
}

void RequestParser::complete() {
  if (size_field_over(head_.content_coding, body_, limits_.max_body_bytes)) {
    fail(413, decoded_too_large(limits_.max_body_bytes));
    return;
  }
  state_ = State::kComplete;
}

std::size_t RequestParser::feed_body(std::string_view data) {
  if (head_.chunked) return feed_chunked(data);
  const std::uint64_t left = *head_.content_length - wire_received_;
  const std::size_t take = static_cast<std::size_t>(std::min<std::uint64_t>(left, data.size()));
  if (!append_body(data.substr(0, take))) return take;
  if (wire_received_ == *head_.content_length) complete();
  return take;
}

std::optional<std::string_view> RequestParser::take_chunk_line(std::string_view data, std::size_t& used,
                                                               std::size_t max) {
  while (used < data.size()) {
    const char c = data[used++];
    if (c == '\n') {
      std::string_view line = chunk_line_;
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      return line;
    }
    if (chunk_line_.size() >= max) {
      fail(400, "malformed chunked body: a line too long");
      return std::nullopt;
    }
    chunk_line_.push_back(c);
  }
  return std::nullopt;
}

bool RequestParser::start_chunk(std::string_view size_line) {
  const auto n = chunk_size(size_line);
  if (!n) {
    fail(400, "malformed chunked body: bad chunk size");
    return false;
  }
  chunk_line_.clear();
  if (*n > limits_.max_body_bytes || wire_received_ + *n > limits_.max_body_bytes) {
    fail(413, too_large(limits_.max_body_bytes));
    return false;
  }
  chunk_left_ = *n;
  chunk_ = *n == 0 ? Chunk::kTrailer : Chunk::kData;
  return true;
}

std::size_t RequestParser::feed_chunked(std::string_view data) {
  std::size_t used = 0;
  while (state_ == State::kBody && used < data.size()) {
    switch (chunk_) {
      case Chunk::kSize: {
        auto line = take_chunk_line(data, used, 1024);
        if (!line || !start_chunk(*line)) return used;
        break;
      }
      case Chunk::kData: {
        const std::size_t take = static_cast<std::size_t>(std::min<std::uint64_t>(chunk_left_, data.size() - used));
        if (!append_body(data.substr(used, take))) return used + take;
        used += take;
        chunk_left_ -= take;
        if (chunk_left_ == 0) chunk_ = Chunk::kDataEnd;
        break;
      }
      case Chunk::kDataEnd: {
        auto line = take_chunk_line(data, used, 2);
        if (!line) return used;
        if (!line->empty()) {
          fail(400, "malformed chunked body: data longer than its chunk size");
          return used;
        }
        chunk_line_.clear();
        chunk_ = Chunk::kSize;
        break;
      }
      case Chunk::kTrailer: {
        auto line = take_chunk_line(data, used, limits_.max_head_bytes);
        if (!line) return used;
        const bool last = line->empty();
        chunk_line_.clear();
        if (++lines_ > limits_.max_header_count * 2 + 2) {
          fail(431, "too many trailer lines");
          return used;
        }
        if (last) complete();
        break;
      }
    }
  }
  return used;
}

}  // namespace extender::http
