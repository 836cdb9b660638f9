#include "slurm_ai/spank_elastic/spank_config.hpp"

#include <charconv>
#include <optional>

#include "slurm_ai/common/text_scan.hpp"

namespace slurm_ai {
namespace {

using text::lower;
using text::split;
using text::trim;

InputError bad(std::string_view key, std::string_view value, std::string expected) {
    return InputError{"plugstack.conf argument " + std::string(key), std::string(value),
                      std::move(expected), "", 0};
}

std::optional<bool> parse_switch(std::string_view v) {
    std::string s = lower(v);
    if (s == "on" || s == "yes" || s == "true" || s == "1")
        return true;
    if (s == "off" || s == "no" || s == "false" || s == "0")
        return false;
    return std::nullopt;
}

std::optional<std::uint32_t> parse_port(std::string_view v) {
    std::uint32_t n = 0;
    auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (ec != std::errc() || end != v.data() + v.size() || n < 1024 || n > 65535)
        return std::nullopt;
    return n;
}

}  // namespace

std::string SpankConfig::default_lease_program() {
    return SLURM_AI_LEASE_PROGRAM;
}

Parsed<SpankConfig> parse_spank_args(std::span<const std::string_view> args) {
    SpankConfig c;
    for (std::string_view arg : args) {
        auto eq = arg.find('=');
        if (eq == std::string_view::npos || eq == 0)
            return InputError{"plugstack.conf argument", std::string(arg),
                              "KEY=VALUE (rank_env, gpu_bind, nic_bind, cpu_bind, nccl_topo, "
                              "nccl_topo_dir, master_port, config, node_topology, lease_program)",
                              "", 0};
        std::string key = lower(arg.substr(0, eq));
        std::string_view value = arg.substr(eq + 1);
        bool *flag = key == "rank_env"    ? &c.rank_env
                     : key == "gpu_bind"  ? &c.gpu_bind
                     : key == "nic_bind"  ? &c.nic_bind
                     : key == "cpu_bind"  ? &c.cpu_bind
                     : key == "nccl_topo" ? &c.nccl_topo
                                          : nullptr;
        if (flag) {
            auto on = parse_switch(value);
            if (!on)
                return bad(key, value, "on or off");
            *flag = *on;
        } else if (key == "master_port") {
            auto dash = value.find('-');
            auto lo = parse_port(value.substr(0, dash));
            auto hi = dash == std::string_view::npos ? lo : parse_port(value.substr(dash + 1));
            if (!lo || !hi || *hi < *lo)
                return bad(key, value, "a port or a range LOW-HIGH within 1024-65535");
            c.master_port_min = *lo;
            c.master_port_max = *hi;
        } else if (key == "nccl_topo_dir" || key == "config" || key == "node_topology" ||
                   key == "lease_program") {
            if (!value.starts_with('/'))
                return bad(key, value, "an absolute path");
            (key == "nccl_topo_dir"   ? c.nccl_topo_dir
             : key == "config"        ? c.config
             : key == "lease_program" ? c.lease_program
                                      : c.node_topology) = std::string(value);
        } else {
            return bad(key, value,
                       "a known key: rank_env, gpu_bind, nic_bind, cpu_bind, nccl_topo, "
                       "nccl_topo_dir, master_port, config, node_topology, lease_program");
        }
    }
    return c;
}

}  // namespace slurm_ai
