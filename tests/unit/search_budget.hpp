// The search budget of the unit tests that assert which placement the engine chooses:
// counted in work (EngineOptions::work_budget, SelectService's second argument), so that
// the choice does not depend on how fast or how loaded the machine is. Production's 5 ms
// time budget ran out under ASan beside CI's other tests before the local search reached
// the host a test expected. A search this large ends at its local optimum first.
#pragma once

#include <cstdint>

#include "slurm_ai/placement/placement_engine.hpp"

namespace slurm_ai::test {

inline constexpr std::uint32_t kUnhurriedSearch = 1000000;

// `o` with the search counted in work (kUnhurriedSearch): for a PlacementEngine a test
// asserts the choice of.
inline EngineOptions unhurried(EngineOptions o = {}) {
    o.work_budget = kUnhurriedSearch;
    return o;
}

}  // namespace slurm_ai::test
