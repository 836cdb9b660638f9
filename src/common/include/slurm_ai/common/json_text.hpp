// The text of a JSON document the suite writes (job records, gang files, restart logs,
// elastic views, state files). Its strings may come from users or the system (a
// checkpoint path, a gang name, Slurm's reason text) and a Linux path may hold any bytes:
// bytes that are not UTF-8 are written as U+FFFD instead of failing the whole write.
// Header-only, so that slurm_ai::common needs no JSON library: Json is nlohmann::json.
#pragma once

#include <string>

namespace slurm_ai {

template <class Json>
std::string json_text(const Json &j, int indent = -1) {
    return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

}  // namespace slurm_ai
