// Where a simulated job's step time comes from, and the rule ai-sim states in its output:
//   - measured: the job's model is one of the measured models (a directory of
//     ../shared/data/comm-measurements) and the simulated nodes are the testbed's. The
//     placement, written as GPUs per node in rank order and rotated as the Pollux
//     simulator does, is looked up in that model's placements.csv and scalability.csv;
//     step and sync time are interpolated linearly in the per-GPU batch size between the
//     measured sizes (clamped at the ends). A placement never measured takes the mean of
//     the measured placements of the nearest node and GPU counts ("nearest shape").
//   - cost model: every other job. The placement engine's cost model gives the
//     communication time per step on the placement (comm_s) and on the ideal placement
//     (lower_bound_s); the computation per step is set so that communication is a share S
//     of the step on the ideal placement, S the median sync share of the measured
//     multi-GPU configurations unless given.
// Either way, a job's recorded duration is its run time on the ideal placement, and on
// another placement it runs step / ideal step times as long. The ideal placement is the
// best one the job's request allows: a job that fixes its node count and GPUs per node
// (-N n --gpus-per-node=g, as an elastic job asks) has one shape to be placed in.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "slurm_ai/placement/placement.hpp"
#include "testbed/measurements.hpp"

namespace slurm_ai::sim {

enum class StepSource { kMeasured, kNearestShape, kCostModel };
const char *to_string(StepSource s);

// The placements a request allows, as shapes: node counts and GPUs per node (0: any).
struct AskedShape {
    int min_nodes = 1, max_nodes = 0;  // max 0: any number
    int per_node = 0;
};

struct StepEstimate {
    double step_s = 1;  // per step on the placement
    double comm_s = 0;  // its communication part
    double ideal_step_s = 1;
    double ideal_comm_s = 0;
    StepSource source = StepSource::kCostModel;

    double slowdown() const { return step_s / ideal_step_s; }
    double comm_share() const { return step_s > 0 ? comm_s / step_s : 0; }
    // Ideal communication / communication, in (0, 1] (1 without communication).
    double efficiency() const;
};

// Placement "44" rotated: zeros dropped, the lexicographically smallest rotation.
std::string placement_key(const std::vector<int> &gpus_per_node);

class StepTimes {
  public:
    // comm_share: S of the rule above.
    explicit StepTimes(double comm_share);
    // With measurements for placements of at most max_gpus_per_node GPUs per node and
    // max_nodes nodes (the simulated cluster's); comm_share <= 0 takes it from them.
    StepTimes(const testbed::Measurements &m, int max_gpus_per_node, int max_nodes,
              double comm_share);

    bool measured(const std::string &model) const { return models_.count(model) > 0; }
    double comm_share() const { return comm_share_; }
    std::string rule() const;

    StepEstimate from_measurements(const std::string &model, double local_bsz,
                                   const std::vector<int> &gpus_per_node,
                                   const AskedShape &asked = {}) const;
    // From a placement the engine scored (comm_s and lower_bound_s filled).
    StepEstimate from_cost_model(const Placement &p) const;
    // An elastic job on a placement of another size than it asks: its computation per
    // step is the rule's on the size it asks (whose ideal communication is
    // asked_ideal_comm_s) times asked GPUs / GPUs here: strong scaling, the global batch
    // stays what it is.
    StepEstimate from_cost_model(const Placement &p, double asked_ideal_comm_s,
                                 double asked_over_here) const;
    // Its step on the ideal placement of the size it asks.
    double asked_step_s(double asked_ideal_comm_s) const;

    // The median sync / step over the measured configurations with more than one GPU,
    // each at its median batch size.
    static double median_sync_share(const testbed::Measurements &m);

  private:
    double compute_s(double ideal_comm_s) const;  // the rule: comm is comm_share_ of the step

    struct Point {
        double bsz, step, sync;
    };
    struct Shape {
        int nodes = 0, gpus = 0;
        bool operator<(const Shape &o) const {
            return nodes != o.nodes ? nodes < o.nodes : gpus < o.gpus;
        }
    };
    struct Model {
        std::map<std::string, std::vector<Point>> by_key;  // points sorted by bsz
        std::map<Shape, std::vector<std::string>> keys_of_shape;
    };
    static Point at(const std::vector<Point> &points, double bsz);
    Point shape_mean(const Model &m, const Shape &s, double bsz) const;
    Point best_for_gpus(const Model &m, int gpus, double bsz, const AskedShape &asked) const;

    double comm_share_ = 0.3;
    int max_gpus_per_node_ = 0, max_nodes_ = 0;
    std::string source_;
    std::map<std::string, Model> models_;
};

}  // namespace slurm_ai::sim
