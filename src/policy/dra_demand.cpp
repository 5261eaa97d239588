#include "extender/policy/dra_demand.h"

namespace extender::policy {
namespace {

std::string choice_key(const DraChoice& c) {
  std::string key = c.device_class + (c.all ? "\nall" : "\nexact");
  for (const auto& s : c.selectors) key += "\n" + s;
  return key;
}

std::vector<DraChoice> choices_of(const model::DeviceRequest& r) {
  std::vector<DraChoice> out;
  auto add = [&](const model::DeviceRequestSpec& spec) {
    out.push_back(DraChoice{spec.device_class, spec.selectors, spec.count, spec.all});
  };
  if (r.exactly) add(*r.exactly);
  for (const auto& spec : r.first_available) add(spec);
  return out;
}

}  // namespace

DraClasses::DraClasses(const std::vector<model::DeviceClass>& classes) {
  for (const auto& c : classes) {
    CompiledClass compiled;
    compiled.name = c.name;
    compiled.extended_resource = c.extended_resource_name;
    for (const auto& s : c.selectors) compiled.selectors.push_back(DeviceSelector::parse(s));
    by_name_[c.name] = std::move(compiled);
  }
}

const CompiledClass* DraClasses::find(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &it->second;
}

const CompiledClass* DraClasses::for_extended_resource(std::string_view resource) const {
  for (const auto& [name, c] : by_name_) {
    if (!c.extended_resource.empty() && c.extended_resource == resource) return &c;
  }
  const std::string_view prefix = model::kImplicitExtendedResourcePrefix;
  if (resource.substr(0, prefix.size()) == prefix) return find(resource.substr(prefix.size()));
  return nullptr;
}

std::optional<DraNeed> need_for_extended_resource(const DraClasses& classes, std::string_view resource,
                                                  std::int64_t count) {
  const CompiledClass* c = classes.for_extended_resource(resource);
  if (!c || count <= 0) return std::nullopt;
  return DraNeed{std::string(resource), {DraChoice{c->name, {}, count, false}}};
}

std::vector<DraNeed> needs_for_claim(const model::ResourceClaim& claim) {
  std::vector<DraNeed> out;
  if (claim.allocated) return out;
  for (const auto& r : claim.requests) {
    DraNeed need{claim.namespace_name + "/" + claim.name + " request " + r.name, choices_of(r)};
    if (!need.choices.empty()) out.push_back(std::move(need));
  }
  return out;
}

DraJudge::DraJudge(const DraClasses& classes, const model::DraInventory& inventory, std::vector<DraNeed> needs) {
  std::map<std::string, std::size_t> single;  // choice key -> index in needs_
  for (auto& need : needs) {
    if (need.choices.size() == 1 && !need.choices[0].all) {
      const std::string key = choice_key(need.choices[0]);
      if (auto it = single.find(key); it != single.end()) {
        Need& merged = needs_[it->second];
        merged.label += ", " + need.label;
        merged.choices[0].spec.count = saturating_add(merged.choices[0].spec.count, need.choices[0].count);
        continue;
      }
      single[key] = needs_.size();
    }
    Need compiled{need.label, {}};
    for (auto& spec : need.choices) {
      Choice c;
      c.spec = std::move(spec);
      c.cls = classes.find(c.spec.device_class);
      for (const auto& s : c.spec.selectors) c.selectors.push_back(DeviceSelector::parse(s));
      if (!c.cls) c.unjudged = "device class " + c.spec.device_class + " not known";
      auto check = [&](const DeviceSelector& s) {
        if (c.unjudged.empty() && !s.supported()) {
          c.unjudged = "unsupported selector: " + s.text() + " (" + s.unsupported_reason() + ")";
        }
      };
      if (c.cls) {
        for (const auto& s : c.cls->selectors) check(s);
      }
      for (const auto& s : c.selectors) check(s);
      compiled.choices.push_back(std::move(c));
    }
    needs_.push_back(std::move(compiled));
  }
  for (auto& need : needs_) {
    for (auto& c : need.choices) {
      if (!c.unjudged.empty()) continue;
      bool any = false;
      for (const auto& [name, node] : inventory.nodes) {
        std::string why;
        if (auto m = matching(c, *node, why); !m || *m > 0) {
          any = true;
          break;
        }
      }
      if (!any) c.unjudged = "class " + c.spec.device_class + " matches no device of the watched drivers";
    }
  }
}

std::optional<std::int64_t> DraJudge::matching(const Choice& c, const model::NodeDra& node, std::string& why) const {
  auto [it, added] = c.by_selector_key.try_emplace(node.selector_key);
  if (added) it->second.matching = evaluate(c, node, it->second.why);
  why = it->second.why;
  return it->second.matching;
}

std::optional<std::int64_t> DraJudge::evaluate(const Choice& c, const model::NodeDra& node, std::string& why) {
  std::int64_t n = 0;
  for (const auto* list : {&node.gpus, &node.partitions}) {
    for (const auto& d : *list) {
      bool match = true;
      auto apply = [&](const DeviceSelector& s) {
        if (!match) return true;
        SelectorMatch m = s.evaluate(d.driver, d.device);
        if (m.kind == MatchKind::kNoMatch) match = false;
        if (m.kind == MatchKind::kError || m.kind == MatchKind::kUnsupported) {
          why = s.text() + " on " + d.device.name + ": " + m.detail;
          return false;
        }
        return true;
      };
      for (const auto& s : c.cls->selectors) {
        if (!apply(s)) return std::nullopt;
      }
      for (const auto& s : c.selectors) {
        if (!apply(s)) return std::nullopt;
      }
      if (match) ++n;
    }
  }
  return n;
}

DraVerdict DraJudge::judge(const model::NodeDra& node) const {
  DraVerdict v;
  if (!node.incomplete_pools.empty()) {
    for (const auto& need : needs_) {
      v.unjudged.push_back(need.label + ": node has an incomplete pool (" + node.incomplete_pools[0] + ")");
    }
    return v;
  }
  for (const auto& need : needs_) {
    std::string shortfall;
    bool met = false;
    for (const auto& c : need.choices) {
      if (!c.unjudged.empty()) {
        v.unjudged.push_back(need.label + ": " + c.unjudged);
        met = true;
        break;
      }
      std::string why;
      auto m = matching(c, node, why);
      if (!m) {
        v.unjudged.push_back(need.label + ": " + why);
        met = true;
        break;
      }
      const std::int64_t asked = c.spec.all ? 1 : c.spec.count;
      if (*m >= asked) {
        met = true;
        break;
      }
      if (shortfall.empty()) {
        shortfall = need.label + ": pod needs " + std::to_string(asked) + " " + c.spec.device_class + ", node has " +
                    std::to_string(*m) + " matching devices";
      }
    }
    if (!met && v.fits) {
      v.fits = false;
      v.reason = shortfall;
    }
  }
  return v;
}

}  // namespace extender::policy
