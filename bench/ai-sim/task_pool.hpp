// Runs independent simulations a few at a time. Each task writes only its own result, so
// what the tasks compute does not depend on the number of threads.
#pragma once

#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace slurm_ai::sim {

inline void run_tasks(const std::vector<std::function<void()>> &tasks, int threads) {
    std::size_t next = 0;
    std::mutex m;
    auto worker = [&] {
        for (;;) {
            std::size_t i;
            {
                std::lock_guard lock(m);
                if (next >= tasks.size())
                    return;
                i = next++;
            }
            tasks[i]();
        }
    };
    std::vector<std::jthread> pool;
    for (int t = 1; t < threads; ++t)
        pool.emplace_back(worker);
    worker();
}

}  // namespace slurm_ai::sim
