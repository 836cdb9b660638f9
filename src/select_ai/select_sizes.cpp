// The job sizes the engine keeps room for: the queue's (ClusterState::wanted) and those
// seen in the last ShapeHistory (ClusterState::recent).
#include "select_service_loaded.hpp"

namespace slurm_ai {

void SelectService::note_waiting(std::uint32_t job_id, const ClusterState::WantedSize &size,
                                 double now) {
    const bool first = waiting_.insert_or_assign(job_id, std::pair{size, now}).second;
    if (!first)
        return;
    const long hour = static_cast<long>(now / 3600);
    if (loaded_->config.shape_history_s == 0)
        return;  // kept as it is: the history counts again when ShapeHistory is back
    const double oldest = now - loaded_->config.shape_history_s;
    while (!recent_.empty() && static_cast<double>(recent_.front().first + 1) * 3600 <= oldest)
        recent_.pop_front();
    if (recent_.empty() || recent_.back().first < hour)
        recent_.emplace_back(hour, std::vector<ClusterState::WantedSize>{});
    ClusterState::count_size(recent_.back().second, size);
}

void SelectService::add_sizes(ClusterState &state, double t) const {
    for (const auto &[id, seen] : waiting_)
        if (t - seen.second <= kStillWaiting_s)
            ClusterState::count_size(state.wanted, seen.first);
    const std::uint32_t window = loaded_->config.shape_history_s;
    for (const auto &[hour, sizes] : recent_)
        if (window > 0 && static_cast<double>(hour + 1) * 3600 > t - window)
            for (const auto &size : sizes)
                ClusterState::count_size(state.recent, size);
}

}  // namespace slurm_ai
