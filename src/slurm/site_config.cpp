#include "slurm_ai/slurm/site_config.hpp"

#include <filesystem>
#include <stdexcept>

#include "slurm_ai/slurm/slurm_client.hpp"

namespace slurm_ai {

PluginConfig load_site_config(const std::string &conf_path) {
    const BesideSlurmConf beside =
        beside_slurm_conf(SlurmClient::slurm_conf_path(), SlurmClient::reads_topology_yaml());
    const std::string conf = conf_path.empty() ? beside.ai_conf : conf_path;
    std::error_code ec;
    if (!std::filesystem::exists(conf, ec)) {
        PluginConfig c;
        c.cluster.fabric = beside.fabric;
        return c;
    }
    auto parsed = load_plugin_config(conf, beside.fabric);
    if (!parsed)
        throw std::runtime_error(parsed.error().message());
    return std::move(parsed).value();
}

}  // namespace slurm_ai
