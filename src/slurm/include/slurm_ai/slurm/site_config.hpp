// The suite's configuration as the daemons and tools on any host read it: ai_select.conf
// beside the slurm.conf that libslurm reads (SlurmClient::slurm_conf_path), with Slurm's
// own topology file as the default fabric (beside_slurm_conf). No file: every default.
#pragma once

#include <string>

#include "slurm_ai/config/plugin_config.hpp"

namespace slurm_ai {

// conf_path: a file to read instead of the one beside slurm.conf. Throws
// std::runtime_error with the parser's message (file, line, key, value) for a bad file.
PluginConfig load_site_config(const std::string &conf_path = "");

}  // namespace slurm_ai
