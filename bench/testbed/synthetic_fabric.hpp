// Fabrics of any size for benchmarks and simulations, written as Slurm topology.conf text
// (so that they go through the same loader as a site's own file):
//   - a two-level Clos of leaves of 32 hosts, each leaf cabled once to every spine
//     (ai-bench-placement's fat tree);
//   - a fabric in the shape of a real one: the building block of a site's fabric (hosts
//     per leaf, the leaf's oversubscription, how many spines a leaf reaches and how many
//     leaves share them, the spines' oversubscription towards the core), measured from its
//     file and repeated until it holds the hosts asked for.
// Hosts are named n1, n2, ...
#pragma once

#include <string>

#include "slurm_ai/common/input_error.hpp"
#include "slurm_ai/topology/fabric.hpp"

namespace slurm_ai::testbed {

std::string clos_topology_conf(int hosts, int spines);

struct FabricShape {
    std::string source;                 // the fabric it was measured on
    int hosts_per_leaf = 0;             // of the fullest leaf
    double leaf_oversubscription = 0;   // that leaf's down / up bandwidth
    int spines_per_leaf = 0;            // distinct level-1 switches it is cabled to
    int leaves_per_spine = 0;           // most leaves below one level-1 switch: a pod
    double spine_oversubscription = 0;  // the most oversubscribed level-1 switch with
                                        // uplinks; 0 when none has any
    int cores = 0;                      // switches above level 1
    int rails = 0;         // rails of a rail-optimized fabric (0: none): hosts_per_leaf
                           // hosts form a scalable unit with one leaf per rail
    int domain_hosts = 0;  // hosts of the largest multi-node NVLink domain (0: none)
};

// Fails (naming the fabric) when it has no leaf switch or no switch above its leaves.
Parsed<FabricShape> measure_shape(const Fabric &fabric);
// One line, e.g. "leaves of 24 hosts, 2.00:1 up to 4 spines; 6 leaves per spine group;
// spines 4.33:1 up to 1 core".
std::string describe(const FabricShape &shape);

// topology.conf of `hosts` hosts in that shape, each host cabled at host_gbps. Leaves are
// filled in order; every group of leaves_per_spine leaves gets its own spines_per_leaf
// spines, and with more than one group, max(cores, 1) core switches join every spine.
// Link speeds keep the measured oversubscription ratios. With rails, each unit of
// hosts_per_leaf hosts gets one leaf per rail (every host on each, NIC k on rail k); with
// NVLink domains, consecutive hosts form blocks of domain_hosts (BlockName=nvlN), which a
// reader makes domains with add_nvlink_domains(..., {"blocks"}, ...).
std::string shaped_topology_conf(const FabricShape &shape, int hosts, double host_gbps);

}  // namespace slurm_ai::testbed
