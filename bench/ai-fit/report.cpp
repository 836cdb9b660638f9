#include "report.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace slurm_ai::fit {
namespace {

std::string algo_name(const FitReport &r) {
    return r.options.algo.empty() ? "auto" : r.options.algo;
}

std::string target_name(const FitReport &r) {
    return r.options.smallest_batch ? "at the smallest local_bsz" : "mean over local_bsz";
}

std::string megabytes(double bytes) {
    return bytes > 0 ? fmt::format("{:.1f}", bytes / 1e6) : "-";
}

std::size_t count(const FitReport &r, bool train) {
    const auto &all = r.models.back();
    return train ? all.train : all.test;
}

// The lines above the tables, shared by the text and markdown forms.
std::string preamble(const FitReport &r, const char *bullet) {
    const auto &c = r.constants;
    std::string s;
    s += fmt::format("{}data: {}, {} models; node file: {}\n", bullet, r.data_dir,
                     r.models.size() - 1, r.options.node_file);
    s += fmt::format(
        "{}cluster: {} hosts under one switch, {:g} Gb/s links; all-reduce "
        "algorithm: {}; measured sync time: {}\n",
        bullet, r.options.hosts, r.options.link_gbit, algo_name(r), target_name(r));
    s += fmt::format(
        "{}split: seed {}, train share {:g}: {} configurations fitted, {} held "
        "out, {} single-GPU ones left out (no communication to predict)\n",
        bullet, r.options.seed, r.options.train_share, count(r, true), count(r, false), r.excluded);
    s += fmt::format(
        "{}fitted constants: alpha_inter_s = {:.3g}, inter_efficiency = {:.3g}, "
        "intra_efficiency = {:.3g} (alpha_intra_s = {:.3g}, not fitted)\n",
        bullet, c.alpha_inter_s, c.inter_efficiency, c.intra_efficiency, c.alpha_intra_s);
    s += fmt::format(
        "{}Nelder-Mead: {} evaluations; rms of log(predicted/measured) on the "
        "fitted configurations: {:.3f}\n",
        bullet, r.evaluations, r.train_rms_log_error);
    return s;
}

nlohmann::json figures_json(const ErrorFigures &e) {
    return {{"count", e.count},
            {"median_ape_percent", e.median_ape},
            {"mean_ape_percent", e.mean_ape},
            {"spearman", e.spearman},
            {"median_ratio", e.median_ratio}};
}

}  // namespace

std::string to_text(const FitReport &r) {
    std::string s = "ai-fit: the cost model against measured gradient-sync times\n";
    s += preamble(r, "");
    s += fmt::format("\n{:<12} {:>5} {:>5} {:>17}  {:>28}  {:>28}  {:>8}\n", "", "", "",
                     "gradient MB", "cost model (held out)", "naive: s x nodes (held out)",
                     "reorder");
    s +=
        fmt::format("{:<12} {:>5} {:>5} {:>8} {:>8}  {:>9} {:>9} {:>8}  {:>9} {:>9} {:>8}  {:>8}\n",
                    "model", "train", "test", "fitted", "publ.", "med APE%", "mean APE%",
                    "Spearman", "med APE%", "mean APE%", "Spearman", "spread%");
    for (const auto &m : r.models)
        s += fmt::format(
            "{:<12} {:>5} {:>5} {:>8} {:>8}  {:>9.1f} {:>9.1f} {:>8.2f}  {:>9.1f} {:>9.1f} "
            "{:>8.2f}  {:>8.1f}\n",
            m.model, m.train, m.test, megabytes(m.fitted_bytes), megabytes(m.prior_bytes),
            m.cost.median_ape, m.cost.mean_ape, m.cost.spearman, m.naive.median_ape,
            m.naive.mean_ape, m.naive.spearman, m.reorder_spread);
    s += fmt::format("\nheld-out configurations by placement class, all models:\n");
    s += fmt::format("{:<20} {:>5}  {:>9} {:>9}  {:>9} {:>9}\n", "class", "test", "cost APE%",
                     "cost p/m", "naive APE%", "naive p/m");
    for (const auto &c : r.classes)
        s += fmt::format("{:<20} {:>5}  {:>9.1f} {:>9.2f}  {:>9.1f} {:>9.2f}\n", c.name,
                         c.cost.count, c.cost.median_ape, c.cost.median_ratio, c.naive.median_ape,
                         c.naive.median_ratio);
    s += "(APE: absolute percentage error, median; p/m: median of predicted / measured; reorder "
         "spread: median APE of a placement against the mean of the placements that only "
         "reorder its nodes, which the cost model cannot tell apart)\n";
    return s;
}

std::string to_markdown(const FitReport &r) {
    std::string s = preamble(r, "- ");
    s += "\n| model | train | test | gradient MB fitted (published) | cost model median APE % | "
         "mean APE % | Spearman | naive median APE % | mean APE % | Spearman | reorder spread % "
         "|\n";
    s += "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const auto &m : r.models)
        s += fmt::format(
            "| {} | {} | {} | {} ({}) | {:.1f} | {:.1f} | {:.2f} | {:.1f} | {:.1f} | "
            "{:.2f} | {:.1f} |\n",
            m.model, m.train, m.test, megabytes(m.fitted_bytes), megabytes(m.prior_bytes),
            m.cost.median_ape, m.cost.mean_ape, m.cost.spearman, m.naive.median_ape,
            m.naive.mean_ape, m.naive.spearman, m.reorder_spread);
    s += "\n| placement class (held out, all models) | configurations | cost model median APE % "
         "| predicted / measured | naive median APE % | predicted / measured |\n";
    s += "|---|---:|---:|---:|---:|---:|\n";
    for (const auto &c : r.classes)
        s += fmt::format("| {} | {} | {:.1f} | {:.2f} | {:.1f} | {:.2f} |\n", c.name, c.cost.count,
                         c.cost.median_ape, c.cost.median_ratio, c.naive.median_ape,
                         c.naive.median_ratio);
    return s;
}

std::string to_json_text(const FitReport &r) {
    using nlohmann::json;
    const auto &c = r.constants;
    json j;
    j["data"] = r.data_dir;
    j["node_file"] = r.options.node_file;
    j["cluster"] = {{"hosts", r.options.hosts}, {"link_gbit", r.options.link_gbit}};
    j["algorithm"] = algo_name(r);
    j["measured_sync"] = r.options.smallest_batch ? "smallest-batch" : "mean";
    j["split"] = {{"seed", r.options.seed},
                  {"train_share", r.options.train_share},
                  {"train", count(r, true)},
                  {"test", count(r, false)},
                  {"excluded_single_gpu", r.excluded}};
    j["constants"] = {{"alpha_intra_s", c.alpha_intra_s},
                      {"alpha_inter_s", c.alpha_inter_s},
                      {"intra_efficiency", c.intra_efficiency},
                      {"inter_efficiency", c.inter_efficiency}};
    j["optimiser"] = {{"method", "nelder-mead"},
                      {"evaluations", r.evaluations},
                      {"train_rms_log_error", r.train_rms_log_error}};
    j["models"] = json::array();
    for (const auto &m : r.models) {
        json e{{"model", m.model},
               {"train", m.train},
               {"test", m.test},
               {"reorder_spread_percent", m.reorder_spread},
               {"reordered", m.reordered},
               {"cost_model", figures_json(m.cost)},
               {"naive", figures_json(m.naive)}};
        if (m.model != "all") {
            e["fitted_gradient_bytes"] = m.fitted_bytes;
            e["published_gradient_bytes"] = m.prior_bytes;
            e["naive_s_per_node"] = m.naive_s_per_node;
        }
        j["models"].push_back(std::move(e));
    }
    j["classes"] = json::array();
    for (const auto &k : r.classes)
        j["classes"].push_back({{"class", k.name},
                                {"cost_model", figures_json(k.cost)},
                                {"naive", figures_json(k.naive)}});
    j["configurations"] = json::array();
    for (const auto &p : r.predictions)
        j["configurations"].push_back({{"model", p.config.model},
                                       {"placement", p.config.placement},
                                       {"source", p.config.source},
                                       {"rows", p.config.rows},
                                       {"split", p.train ? "train" : "test"},
                                       {"measured_s", p.measured_s},
                                       {"predicted_s", p.cost_s},
                                       {"naive_s", p.naive_s},
                                       {"algorithm", p.algorithm}});
    return j.dump(2) + "\n";
}

}  // namespace slurm_ai::fit
