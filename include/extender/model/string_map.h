#pragma once
// StringMap: labels, annotations, node selectors and resource lists as text, ordered, looked up by
// string_view.
#include <map>
#include <string>

namespace extender::model {

using StringMap = std::map<std::string, std::string, std::less<>>;

}  // namespace extender::model
