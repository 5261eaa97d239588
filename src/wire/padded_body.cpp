#include "extender/wire/padded_body.h"

#include <simdjson.h>

namespace extender::wire {

static_assert(kBodyPadding >= simdjson::SIMDJSON_PADDING);

PaddedBody::PaddedBody(std::string_view text) {
  auto copy = std::make_shared<std::string>();
  copy->reserve(text.size() + kBodyPadding);
  copy->resize(text.size() + kBodyPadding, '\0');
  copy->resize(text.size());
  copy->replace(0, text.size(), text);
  bytes_ = std::string_view(copy->data(), text.size());
  copy_ = std::move(copy);
}

PaddedBody PaddedBody::of(const std::string& body) {
  if (body.capacity() < body.size() + kBodyPadding) return PaddedBody(body);
  PaddedBody view;
  view.bytes_ = body;
  return view;
}

}  // namespace extender::wire
