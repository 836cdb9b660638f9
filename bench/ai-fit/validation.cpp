#include "validation.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <thread>

#include <fmt/format.h>

#include "nelder_mead.hpp"
#include "slurm_ai/placement/job_demand.hpp"
#include "slurm_ai/topology/cluster_graph.hpp"
#include "slurm_ai/topology/fabric.hpp"
#include "slurm_ai/topology/node_topology.hpp"

namespace slurm_ai::fit {
namespace {

// Published parameter counts of the Pollux models (the artifact's benchmark/models).
struct PublishedModel {
    const char *name;
    double parameters;
};
constexpr PublishedModel kPublished[] = {
    {"bert", 110e6},          // bert-base-uncased, fine-tuned on SQuAD
    {"cifar10", 11.17e6},     // ResNet-18 (CIFAR variant)
    {"deepspeech2", 41.2e6},  // 5 bidirectional GRU layers of 800 after 2 convolutions
    {"imagenet", 25.6e6},     // ResNet-50
    {"ncf", 1.60e6},          // NeuMF, 32 factors, 3 MLP layers, MovieLens-1M
    {"yolov3", 61.6e6},       // Darknet-53 YOLOv3 with a 20-class (VOC) head
};
constexpr double kBytesPerParameter = 4;  // fp32 gradients
constexpr double kUnknownModelBytes = 100e6;

// How strongly a model's gradient size is pulled towards its published value, per unit of
// squared log: weak next to a model's ~75 fitted configurations, but it removes the one
// direction the data cannot see (all gradient sizes and both efficiencies scaled together).
constexpr double kPriorWeight = 1.0;

// The efficiencies are shares in (0, 1); the optimiser works on their logits.
double logistic(double x) {
    return 1 / (1 + std::exp(-x));
}
double logit(double p) {
    return std::log(p / (1 - p));
}

// A well-mixed 64-bit hash of the text (FNV-1a, then the splitmix64 finaliser), so that
// the split depends on nothing but the model, the placement and the seed.
std::uint64_t mix_hash(const std::string &text) {
    std::uint64_t h = 14695981039346656037ull;
    for (unsigned char c : text) {
        h ^= c;
        h *= 1099511628211ull;
    }
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebull;
    h ^= h >> 31;
    return h;
}

bool in_train_split(const Configuration &c, const FitOptions &o) {
    std::uint64_t h = mix_hash(std::to_string(o.seed) + ":" + c.model + "/" + c.placement);
    return static_cast<double>(h >> 11) * 0x1.0p-53 < o.train_share;
}

struct Case {
    Configuration config;
    std::size_t model = 0;  // index into the model list
    Placement placement;
    double measured_s = 0;
    bool train = false;
};

Parsed<ClusterGraph> build_cluster(const FitOptions &o, const NodeTopology &node) {
    std::string conf =
        fmt::format("SwitchName=s1 Nodes=h[1-{}] LinkSpeed={:g}\n", o.hosts, o.link_gbit);
    auto fabric = parse_topology_conf(conf, "ai-fit cluster", o.link_gbit);
    if (!fabric)
        return fabric.error();
    return ClusterGraph::build(std::move(fabric).value(), {}, node);
}

// The residuals of the fitted configurations are independent, so they are computed on
// every core; each lands in its own slot and the sum is taken in order, so the result (and
// with it the optimiser's path) does not depend on the number of threads.
template <class F>
void for_each_index(std::size_t n, const F &f) {
    const std::size_t threads = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 8);
    const std::size_t chunk = (n + threads - 1) / threads;
    std::vector<std::jthread> workers;
    for (std::size_t t = 1; t < threads && t * chunk < n; ++t)
        workers.emplace_back([&, t] {
            for (std::size_t i = t * chunk; i < std::min(n, (t + 1) * chunk); ++i)
                f(i);
        });
    for (std::size_t i = 0; i < std::min(n, chunk); ++i)
        f(i);
}

class Objective {
  public:
    Objective(const ClusterGraph &graph, const std::vector<Case> &cases,
              std::vector<double> prior_log_bytes, std::string algo)
        : graph_(&graph), prior_(std::move(prior_log_bytes)), algo_(std::move(algo)) {
        for (const auto &k : cases)
            if (k.train)
                train_.push_back(&k);
    }

    static constexpr std::size_t kHardware = 3;  // alpha_inter, inter and intra efficiency

    CostConstants constants(const std::vector<double> &x) const {
        CostConstants c;
        c.alpha_inter_s = std::exp(x[0]);
        c.inter_efficiency = logistic(x[1]);
        c.intra_efficiency = logistic(x[2]);
        return c;
    }

    CommEstimate predict(const Case &k, const CostConstants &c, double bytes) const {
        JobHints hints;
        hints.comm = CommSpec{};
        hints.comm->pattern = CommPattern::kAllReduce;
        hints.comm->bytes = static_cast<std::uint64_t>(std::max(bytes, 1.0));
        hints.comm->algo = algo_;
        auto n = static_cast<std::uint32_t>(k.config.nodes());
        auto demand =
            make_demand(JobRequest{n, n, 0, static_cast<std::uint32_t>(k.config.gpus()), 1}, hints);
        return CostModel(*graph_, c).estimate(demand, k.placement);
    }

    // Squared error of log(sync time) over the fitted configurations, plus the pull of
    // each gradient size towards its published value.
    double operator()(const std::vector<double> &x) const {
        const CostConstants c = constants(x);
        std::vector<double> squares(train_.size());
        for_each_index(train_.size(), [&](std::size_t i) {
            const Case &k = *train_[i];
            double s = predict(k, c, std::exp(x[kHardware + k.model])).seconds;
            double r = std::log(s) - std::log(k.measured_s);
            squares[i] =
                s > 0 && std::isfinite(s) ? r * r : std::numeric_limits<double>::infinity();
        });
        double sum = 0;
        for (double q : squares)
            sum += q;
        for (std::size_t m = 0; m < prior_.size(); ++m)
            if (!std::isnan(prior_[m])) {
                double d = x[kHardware + m] - prior_[m];
                sum += kPriorWeight * d * d;
            }
        return sum;
    }

  private:
    const ClusterGraph *graph_;
    std::vector<const Case *> train_;
    std::vector<double> prior_;  // NaN: no prior for that model
    std::string algo_;
};

std::string class_of(const Configuration &c) {
    std::string nodes = c.nodes() == 1   ? "1 node"
                        : c.nodes() == 2 ? "2 nodes"
                        : c.nodes() <= 4 ? "3-4 nodes"
                                         : "6-16 nodes";
    if (c.nodes() == 1)
        return nodes;
    return nodes + (c.even() ? ", even" : ", uneven");
}

const char *const kClassOrder[] = {"1 node",
                                   "2 nodes, even",
                                   "2 nodes, uneven",
                                   "3-4 nodes, even",
                                   "3-4 nodes, uneven",
                                   "6-16 nodes, even",
                                   "6-16 nodes, uneven"};

ErrorFigures figures_of(const std::vector<const Prediction *> &ps, bool naive) {
    std::vector<double> predicted, measured;
    for (const auto *p : ps) {
        predicted.push_back(naive ? p->naive_s : p->cost_s);
        measured.push_back(p->measured_s);
    }
    return error_figures(predicted, measured);
}

// Fills reorder_spread and reordered of `f` from the configurations `keep` selects.
template <class Keep>
void reorder_spread(const std::vector<Prediction> &ps, const Keep &keep, ModelFigures &f) {
    std::map<std::pair<std::string, std::string>, std::vector<double>> groups;
    for (const auto &p : ps) {
        if (!keep(p) || p.config.nodes() < 2)
            continue;
        std::string shape = p.config.placement;
        std::sort(shape.begin(), shape.end());
        groups[{p.config.model, shape}].push_back(p.measured_s);
    }
    std::vector<double> ape;
    for (const auto &[key, values] : groups) {
        if (values.size() < 2)
            continue;
        double mean = 0;
        for (double v : values)
            mean += v / static_cast<double>(values.size());
        for (double v : values)
            ape.push_back(100 * std::fabs(v - mean) / mean);
    }
    f.reordered = ape.size();
    if (!ape.empty()) {
        std::sort(ape.begin(), ape.end());
        std::size_t mid = ape.size() / 2;
        f.reorder_spread = ape.size() % 2 ? ape[mid] : (ape[mid - 1] + ape[mid]) / 2;
    }
}

// The measured configurations the model can predict, each placed on the cluster ai-fit
// builds; one-GPU configurations (nothing to communicate) are counted in `excluded`.
Parsed<std::vector<Case>> fit_cases(const Measurements &data, const FitOptions &options,
                                    const ClusterGraph &graph, int node_gpus,
                                    std::size_t &excluded) {
    std::vector<Case> cases;
    for (const auto &c : data.configs) {
        const double measured = options.smallest_batch ? c.smallest_bsz_sync_s : c.sync_s;
        if (c.gpus() < 2 || !(measured > 0)) {
            ++excluded;  // one GPU: the model has no communication to predict
            continue;
        }
        int most = *std::max_element(c.gpus_per_node.begin(), c.gpus_per_node.end());
        if (c.nodes() > options.hosts || most > node_gpus)
            return InputError{"placement", c.placement,
                              fmt::format("at most {} nodes of {} GPUs (the cluster ai-fit "
                                          "builds from --node)",
                                          options.hosts, node_gpus),
                              c.model + "/" + c.source, 0};
        Case k;
        k.config = c;
        k.model = static_cast<std::size_t>(
            std::find(data.models.begin(), data.models.end(), c.model) - data.models.begin());
        for (int i = 0; i < c.nodes(); ++i) {
            k.placement.hosts.push_back(graph.host_index("h" + std::to_string(i + 1)));
            k.placement.gpus.emplace_back();
            for (int g = 0; g < c.gpus_per_node[static_cast<std::size_t>(i)]; ++g)
                k.placement.gpus.back().push_back(g);
        }
        k.measured_s = measured;
        k.train = in_train_split(c, options);
        cases.push_back(std::move(k));
    }

    return cases;
}

}  // namespace

double published_gradient_bytes(const std::string &model) {
    for (const auto &p : kPublished)
        if (model == p.name)
            return kBytesPerParameter * p.parameters;
    return 0;
}

Parsed<FitReport> run_fit(const Measurements &data, const FitOptions &options) {
    if (!(options.train_share > 0 && options.train_share < 1))
        return InputError{"--train-share", fmt::format("{:g}", options.train_share),
                          "a share between 0 and 1, exclusive", "", 0};
    if (!(options.link_gbit > 0))
        return InputError{"--link-gbit", fmt::format("{:g}", options.link_gbit),
                          "a positive link speed in Gb/s", "", 0};
    auto node = load_node_topology(options.node_file);
    if (!node)
        return node.error();
    const int node_gpus = static_cast<int>(node->gpus.size());
    auto graph = build_cluster(options, node.value());
    if (!graph)
        return graph.error();

    FitReport report;
    report.options = options;
    auto fitted_cases = fit_cases(data, options, graph.value(), node_gpus, report.excluded);
    if (!fitted_cases)
        return fitted_cases.error();
    const std::vector<Case> cases = std::move(fitted_cases).value();

    // Start from the defaults and the published sizes.
    const std::size_t M = data.models.size();
    std::vector<double> prior(M, std::numeric_limits<double>::quiet_NaN());
    std::vector<double> x0{std::log(CostConstants{}.alpha_inter_s),
                           logit(CostConstants{}.inter_efficiency),
                           logit(CostConstants{}.intra_efficiency)};
    for (std::size_t m = 0; m < M; ++m) {
        double published = published_gradient_bytes(data.models[m]);
        if (published > 0)
            prior[m] = std::log(published);
        x0.push_back(std::log(published > 0 ? published : kUnknownModelBytes));
    }
    Objective objective(graph.value(), cases, prior, options.algo);
    // Steps of e in every log-parameter; a tolerance well below what moves any reported
    // figure; one restart, which the near-flat valley of the common scale needs.
    NelderMeadOptions nm;
    nm.step = 1.0;
    nm.tolerance = 1e-8;
    nm.restarts = 1;
    Minimum best = nelder_mead(std::cref(objective), x0, nm);
    report.evaluations = best.evaluations;
    report.constants = objective.constants(best.x);

    // The baseline: sync time = c_m x nodes, c_m the geometric mean over the fitted rows.
    std::vector<double> log_c(M, 0.0);
    std::vector<int> fitted(M, 0);
    for (const auto &k : cases)
        if (k.train) {
            log_c[k.model] += std::log(k.measured_s / k.config.nodes());
            ++fitted[k.model];
        }

    double train_sq = 0;
    std::size_t train_n = 0;
    for (const auto &k : cases) {
        Prediction p;
        p.config = k.config;
        p.train = k.train;
        p.measured_s = k.measured_s;
        auto est = objective.predict(k, report.constants,
                                     std::exp(best.x[Objective::kHardware + k.model]));
        p.cost_s = est.seconds;
        p.algorithm = est.algorithm;
        double c = fitted[k.model] ? std::exp(log_c[k.model] / fitted[k.model]) : 0;
        p.naive_s = c * k.config.nodes();
        if (k.train) {
            double r = std::log(p.cost_s / k.measured_s);
            train_sq += r * r;
            ++train_n;
        }
        report.predictions.push_back(std::move(p));
    }
    report.train_rms_log_error = train_n ? std::sqrt(train_sq / static_cast<double>(train_n)) : 0;

    auto figures = [&](const std::string &name, auto &&keep) {
        ModelFigures f;
        f.model = name;
        std::vector<const Prediction *> test;
        for (const auto &p : report.predictions) {
            if (!keep(p))
                continue;
            (p.train ? f.train : f.test) += 1;
            if (!p.train)
                test.push_back(&p);
        }
        f.cost = figures_of(test, false);
        f.naive = figures_of(test, true);
        reorder_spread(report.predictions, keep, f);
        return f;
    };
    for (std::size_t m = 0; m < M; ++m) {
        auto f = figures(data.models[m],
                         [&](const Prediction &p) { return p.config.model == data.models[m]; });
        f.prior_bytes = published_gradient_bytes(data.models[m]);
        f.fitted_bytes = std::exp(best.x[Objective::kHardware + m]);
        f.naive_s_per_node = fitted[m] ? std::exp(log_c[m] / fitted[m]) : 0;
        report.models.push_back(std::move(f));
    }
    report.models.push_back(figures("all", [](const Prediction &) { return true; }));

    for (const char *name : kClassOrder) {
        std::vector<const Prediction *> test;
        for (const auto &p : report.predictions)
            if (!p.train && class_of(p.config) == name)
                test.push_back(&p);
        if (!test.empty())
            report.classes.push_back(
                ClassFigures{name, figures_of(test, false), figures_of(test, true)});
    }
    return report;
}

}  // namespace slurm_ai::fit
