// A watch stream as the reflector reads it: lines decoded by kube::parse_watch_event, their
// objects read as the sinks read them, and the whole input as a list page or Status body.
#include <cstdint>
#include <string_view>

#include "extender/kube/watch_event.h"
#include "extender/wire/baremetal_objects.h"
#include "extender/wire/k8s_objects.h"
#include "extender/wire/storage_objects.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)extender::kube::parse_bounded(text).is_object();
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    auto event = extender::kube::parse_watch_event(text.substr(start, nl - start));
    if (event) {
      (void)extender::wire::decode_node(event->object).ok();
      (void)extender::wire::decode_pod(event->object).ok();
      (void)extender::wire::decode_claim(event->object).ok();
      (void)extender::wire::decode_storage_class(event->object).ok();
      (void)extender::wire::decode_csi_driver(event->object).ok();
      (void)extender::wire::decode_storage_capacity(event->object).ok();
      (void)extender::wire::decode_persistent_volume(event->object).ok();
      (void)extender::wire::decode_available_capacity(event->object).ok();
      (void)extender::wire::decode_baremetal_volume(event->object).ok();
      if (auto acr = extender::wire::decode_capacity_reservation(event->object)) {
        (void)extender::wire::encode_capacity_reservation(*acr).dump();
      }
    }
    start = nl + 1;
  }
  return 0;
}
