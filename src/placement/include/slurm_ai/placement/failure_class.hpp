// What failed, as far as placement cares: a GPU, the node's network (its NIC, cable or
// link), its power, its cooling, its software, or something else. The select plugin reads
// it from the reason Slurm gives a node that goes DOWN or DRAIN (an admin's or a health
// check's words); the simulator from a fault trace's class and description.
#pragma once

#include <string_view>

namespace slurm_ai {

enum class FailureClass { kGpu, kNetwork, kPower, kCooling, kSoftware, kOther };
inline constexpr int kFailureClasses = 6;

std::string_view to_string(FailureClass c);

// By keywords, case-insensitive, each where a word starts, in this order: a GPU's (gpu,
// xid, ecc, nvlink, nvidia, dcgm); the network's (nic, hca, infiniband, ib port, link down,
// cable, optical, transceiver, rdma, roce, efa); power (power, psu); cooling (fan,
// temperature, thermal, overheat); software (kernel, panic, file system, filesystem, fs
// readonly, operating system, software, firmware, driver, kill task, epilog, prolog);
// anything else is other.
FailureClass classify_failure(std::string_view text);

// The network class takes the node's fabric link, not the node: jobs inside the node can
// go on.
inline bool takes_link(FailureClass c) {
    return c == FailureClass::kNetwork;
}

}  // namespace slurm_ai
