#pragma once
// A PersistentVolume's or claim's spec.accessModes (as model::AccessMode bits; modes Kubernetes
// does not define are ignored) and spec.volumeMode (Block or, when absent, Filesystem). Private
// to wire; pure.
#include <cstdint>

#include <nlohmann/json.hpp>

#include "extender/common/result.h"

namespace extender::wire::detail {

Status read_volume_modes(const nlohmann::json& spec, std::uint8_t& access_modes, bool& block, std::string_view kind);

}  // namespace extender::wire::detail
