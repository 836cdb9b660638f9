// ai-recover lease-down: a failure found by the suite's own signal, confirmed and acted on
// (docs/checkpoint.md, "Leases").
#include <algorithm>

#include "recovery.hpp"
#include "slurm_ai/lease/probe.hpp"

namespace slurm_ai::recover {
namespace {

// How long slurmd's port may take to answer: a node that holds a TCP handshake back for a
// second is not running jobs well either, and a slower probe delays every recovery.
constexpr double kProbeTimeoutS = 1.0;
constexpr std::uint16_t kSlurmdPort = 6818;  // Slurm's default SlurmdPort

}  // namespace

// A task's report names its job's nodes only: the job must run, the sealer must own it
// (or be root or SlurmUser), and the reporting node must be one of its nodes.
std::vector<std::string> Recovery::reported_suspects(const LeaseDown &d) const {
    const std::string what = "job " + std::to_string(d.job) + "'s report from " + d.from;
    auto view = slurm_.job(d.job);
    auto owner = slurm_.job_user(d.job);
    if (!view || !owner || !view->running()) {
        log(what + ": the job is not running; ignored");
        return {};
    }
    if (d.uid != 0 && d.uid != slurm_.controller().slurm_user && d.uid != *owner) {
        log(what + ": refused: sealed by uid " + std::to_string(d.uid) + ", the job is uid " +
            std::to_string(*owner) + "'s");
        return {};
    }
    const auto &nodes = view->nodes;
    if (std::find(nodes.begin(), nodes.end(), d.from) == nodes.end()) {
        log(what + ": refused: " + d.from + " is not a node of the job");
        return {};
    }
    std::vector<std::string> out;
    for (const auto &n : nodes)
        if (n != d.from && (d.nodes.empty() || std::count(d.nodes.begin(), d.nodes.end(), n)))
            out.push_back(n);
    if (out.empty())
        log(what + ": no other node of the job is named; ignored");
    return out;
}

int Recovery::lease_down(const LeaseDown &d) {
    const auto suspects = d.job ? reported_suspects(d) : d.nodes;
    std::vector<std::string> down;
    for (const auto &n : suspects) {
        auto info = slurm_.node(n);
        if (!info) {
            log("lease-down: no node " + n + " in Slurm");
            continue;
        }
        if (info->down) {
            down.push_back(n);  // already: Slurm, a trigger or another signal saw it first
            continue;
        }
        std::string reason = "ai-lease: " + d.why;
        if (d.probe) {
            const std::uint16_t port = info->port ? info->port : kSlurmdPort;
            const auto reach = lease::probe_tcp(info->address, port, kProbeTimeoutS);
            if (reach == lease::Reach::kAnswers) {
                log("lease-down: " + n + ": " + d.why + ", but its slurmd answers on " +
                    info->address + ": no action (a late renewal, not a failure)");
                continue;
            }
            reason += "; slurmd " + std::string(lease::to_string(reach));
        }
        try {
            // DOWN ends the node's part of its jobs now; DRAIN keeps it out afterwards
            // (ReturnToService=2 would take a DOWN node back as soon as slurmd answers).
            slurm_.set_node_state(n, "DOWN", reason);
            if (d.drain)
                slurm_.set_node_state(n, "DRAIN", reason);
        } catch (const SlurmError &e) {
            log("lease-down: cannot set " + n + " DOWN: " + e.what());
            return 1;
        }
        log("lease-down: " + n + (d.drain ? " set DOWN and DRAIN: " : " set DOWN: ") + reason);
        down.push_back(n);
    }
    if (down.empty())
        return 3;
    node_down(down);
    return 0;
}

}  // namespace slurm_ai::recover
