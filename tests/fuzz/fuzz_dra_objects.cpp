// The DRA watches as the DRA store reads them: each line a watch event whose object is decoded as a
// ResourceSlice, a ResourceClaim, a DeviceClass and a Pod's DRA fields; what decodes is then built
// into an inventory and the classes compiled (their CEL selectors parsed), as the store does.
#include <cstdint>
#include <string_view>
#include <vector>

#include "extender/kube/watch_event.h"
#include "extender/model/dra_inventory.h"
#include "extender/policy/dra_demand.h"
#include "extender/wire/dra_objects.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace extender;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<model::ResourceSlice> slices;
  std::vector<model::ResourceClaim> claims;
  std::vector<model::DeviceClass> classes;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    if (auto event = kube::parse_watch_event(text.substr(start, nl - start))) {
      if (auto s = wire::decode_resource_slice(event->object)) slices.push_back(std::move(*s));
      if (auto c = wire::decode_resource_claim(event->object)) claims.push_back(std::move(*c));
      if (auto c = wire::decode_device_class(event->object)) classes.push_back(std::move(*c));
      (void)wire::decode_pod_dra(event->object).ok();
    }
    start = nl + 1;
  }
  model::DraRules rules;
  for (const auto& s : slices) rules.drivers.push_back(s.driver);
  const model::DraInventory inventory = model::build_dra_inventory(slices, claims, rules);
  const policy::DraClasses compiled(classes);
  for (const auto& c : classes) {
    if (auto need = policy::need_for_extended_resource(compiled, c.extended_resource_name, 1)) {
      std::vector<policy::DraNeed> needs{std::move(*need)};
      const policy::DraJudge judge(compiled, inventory, std::move(needs));
      for (const auto& [name, node] : inventory.nodes) (void)judge.judge(*node).fits;
    }
  }
  return 0;
}
