// ai-fit: validates the communication cost model against measured training jobs. It
// reads the Pollux traces (../shared/data/comm-measurements), costs every measured
// placement as a data-parallel all-reduce on a cluster of g4dn.12xlarge nodes, fits the
// hardware constants and each model's gradient size on a deterministic share of the
// configurations and reports, for the rest, the error and the rank correlation of the
// predicted sync time, next to a baseline proportional to the number of nodes. With
// --shapes it also writes the measured step times by shape as a ShapeProfile file for
// ai_select.conf (testbed::measured_shapes).
// Exit status: 0 success, 1 bad input (the message names the file, line and field), 2 bad
// usage.
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include "report.hpp"
#include "slurm_ai/common/file_io.hpp"
#include "slurm_ai/topology/node_topology.hpp"
#include "testbed/measurements.hpp"
#include "validation.hpp"

using namespace slurm_ai;
using namespace slurm_ai::fit;
using slurm_ai::testbed::load_measurements;

int main(int argc, char **argv) {
    CLI::App app{
        "ai-fit: fit the cost model's constants to measured sync times and report "
        "how well it predicts held-out placements"};
    std::string data_dir;
    FitOptions options;
    options.node_file = AI_FIT_DEFAULT_NODE;
    bool as_json = false, as_markdown = false;
    app.add_option("--data", data_dir,
                   "Directory with <model>/placements.csv and <model>/scalability.csv")
        ->required()
        ->check(CLI::ExistingDirectory);
    app.add_option("--node", options.node_file, "Node topology of every host (hwloc or NCCL XML)")
        ->capture_default_str()
        ->check(CLI::ExistingFile);
    app.add_option("--link-gbit", options.link_gbit, "Each host's network link, Gb/s")
        ->capture_default_str();
    app.add_option("--train-share", options.train_share,
                   "Share of each model's configurations the constants are fitted on")
        ->capture_default_str();
    app.add_option("--seed", options.seed, "Changes which configurations are fitted on")
        ->capture_default_str();
    app.add_option("--algo", options.algo,
                   "All-reduce algorithm the cost model uses (default: auto, the fastest)")
        ->check(CLI::IsMember({"auto", "ring", "hierarchical", "tree"}));
    app.add_flag("--smallest-batch", options.smallest_batch,
                 "Fit and score the sync time at each placement's smallest local_bsz (the "
                 "least hidden by computation) instead of the mean over local_bsz");
    std::string shapes_file, shapes_without;
    app.add_option("--shapes", shapes_file,
                   "Also write the measured step times by shape to this file, a ShapeProfile "
                   "for ai_select.conf, for hosts of as many GPUs as --node has");
    app.add_option("--shapes-without", shapes_without,
                   "Models (comma-separated) the --shapes file leaves out");
    auto *json_flag = app.add_flag("--json", as_json, "Print JSON, with every configuration");
    app.add_flag("--markdown", as_markdown, "Print markdown tables")->excludes(json_flag);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError &e) {
        return app.exit(e) == 0 ? 0 : 2;  // --help prints and succeeds
    }
    if (options.algo == "auto")
        options.algo.clear();

    try {
        auto data = load_measurements(data_dir);
        if (!data) {
            std::cerr << "ai-fit: " << data.error().message() << '\n';
            return 1;
        }
        if (!shapes_file.empty()) {
            auto node = load_node_topology(options.node_file);
            if (!node) {
                std::cerr << "ai-fit: " << node.error().message() << '\n';
                return 1;
            }
            std::vector<std::string> without;
            if (!shapes_without.empty()) {
                auto names = testbed::model_list(data.value(), shapes_without, "--shapes-without");
                if (!names) {
                    std::cerr << "ai-fit: " << names.error().message() << '\n';
                    return 1;
                }
                without = std::move(names).value();
            }
            auto profile = testbed::measured_shapes(
                data.value(), static_cast<int>(node.value().gpus.size()), without);
            write_text_file_atomically(shapes_file, profile.csv());
        }
        auto report = run_fit(data.value(), options);
        if (!report) {
            std::cerr << "ai-fit: " << report.error().message() << '\n';
            return 1;
        }
        report.value().data_dir = data_dir;
        std::cout << (as_json       ? to_json_text(report.value())
                      : as_markdown ? to_markdown(report.value())
                                    : to_text(report.value()));
    } catch (const std::exception &e) {
        std::cerr << "ai-fit: internal error: " << e.what() << '\n';
        return 1;
    }
    return 0;
}
