#pragma once
// HTML text: escapes any string for an HTML text node or a double-quoted attribute value (`&`,
// `<`, `>`, `"`, `'`), and bytes that are not valid UTF-8 become U+FFFD, so that a hostile name
// (node, pod, pool) can neither open markup nor break the page's encoding. Pure; thread-safe.
#include <string>
#include <string_view>

namespace extender::server {

void append_html(std::string& out, std::string_view text);
std::string html(std::string_view text);
// For a URL's query value: every byte but [A-Za-z0-9-._~/] percent-encoded (then HTML-safe too).
std::string url_component(std::string_view text);
// Decodes %XX and '+' of a query value; malformed escapes are kept as written.
std::string url_decode(std::string_view text);

}  // namespace extender::server
