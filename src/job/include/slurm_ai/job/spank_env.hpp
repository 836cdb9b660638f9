// The names of the suite's variables in a job's SPANK environment, written and read here
// only: the --ai-* options, which Slurm carries under names of its own making, and the
// compact task DAG the SPANK plugin adds at submit. The SPANK plugin (through its C
// bridge), slurmctld's select plugin, the task environment and ai-resize all use these.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace slurm_ai {

// The SPANK plugin's name: SPANK_PLUGIN(ai, 1) in src/spank_elastic/spank_ai.c, which
// cannot read it from here; Slurm puts it into every option's variable name.
inline constexpr std::string_view kSpankPluginName = "ai";

// The SPANK plugin reads the --ai-dag file where the user submits (the file may not be
// readable by slurmctld), checks it and puts its compact form (compact_task_dag) into the
// job's SPANK environment under this name; slurmctld keeps it with the job.
inline constexpr std::string_view kDagEnvName = "AI_DAG";

// The forms a job's SPANK environment takes on its way (plugstack.c and sbatch.c of Slurm
// 22.05): each variable is named as in kJob, with a prefix in the other two.
enum class SpankEnvCopy {
    kJob,     // NAME: as slurmctld keeps it (job_ptr->spank_job_env) and slurmstepd gets it
    kProlog,  // SPANK_NAME: what prologs and epilogs see
    // SLURM_SPANK_NAME: sbatch's copy in the batch script's environment (so every step of
    // the job inherits it), and where sbatch, salloc and srun read an option's value from
    // their own environment before the command line.
    kCommand,
};

// The variable that carries option `option` ("ai-comm", as hint_options() names it): as
// Slurm names it (_opt_env_name in plugstack.c), "_SLURM_SPANK_OPTION_" + the plugin's
// name + "_" + the option's, every character but an ASCII letter or digit made '_'
// ("_SLURM_SPANK_OPTION_ai_ai_comm"), with the prefix of `copy`.
std::string spank_option_env_name(std::string_view option,
                                  SpankEnvCopy copy = SpankEnvCopy::kJob);
// The variable that carries the compact task DAG, with the prefix of `copy`.
std::string spank_dag_env_name(SpankEnvCopy copy = SpankEnvCopy::kJob);

// The variable of the submitting command's own environment that may give option `option`
// ("ai-comm") before its command line, as Slurm's input variables do for its own options:
// SBATCH_AI_COMM for "sbatch", SALLOC_ for "salloc", SLURM_ for "srun"; nothing for
// another program.
std::optional<std::string> option_input_env_name(std::string_view program,
                                                 std::string_view option);

// What one NAME=VALUE entry of a job's SPANK environment carries for the suite.
struct SpankEnvEntry {
    // The option's name as hint_options() has it ("ai-comm"), or kDagEnvName.
    std::string_view option;
    std::string_view value;  // as the entry has it (a view into the entry)
    SpankEnvCopy copy;       // the form the name had
};
// The option (or the DAG) `entry` carries, in any of the three forms; nothing for a
// variable of Slurm's, of another plugin or of no one.
std::optional<SpankEnvEntry> read_spank_env_entry(std::string_view entry);

}  // namespace slurm_ai
