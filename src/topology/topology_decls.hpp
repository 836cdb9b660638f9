// What a Slurm topology file declares, before names are resolved: the switches of the
// tree form and the blocks of the block form, as topology.conf (topology_conf.cpp) and
// topology.yaml (topology_yaml.cpp) both give them, and the one builder that turns them
// into the fabric model, so that both files mean the same.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "slurm_ai/topology/fabric.hpp"

namespace slurm_ai {

// One switch (a SwitchName= line, a `switch:` entry), before references are resolved.
struct SwitchDecl {
    std::string name;
    int line = 0;
    std::vector<std::string> nodes;
    std::vector<std::string> children;
    std::uint32_t link_speed = 0;  // 0: not given
    std::string was;               // written with another name: the model's name for it
};

// One block (a BlockName= line, a `block:` entry), before its hosts are placed.
struct BlockDecl {
    std::string name;
    int line = 0;
    std::vector<std::string> nodes;
    std::string domain;  // written: the NVLink domain it stands for, where not its name
};

struct TopologyDecls {
    std::vector<SwitchDecl> switches;
    std::vector<BlockDecl> blocks;
    std::vector<int> block_sizes;  // in hosts
};

// The fabric: switches first (in declaration order), then hosts as first named; blocks as
// topology_conf's header describes (a leaf switch per block under "block-root" when the
// file has no switches). Errors name `source`, the declaration's line and the field: a
// switch or block declared twice, an undefined or self-referencing child switch, a switch
// named as a node, a node in two blocks.
Parsed<Fabric> build_topology(TopologyDecls decls, std::string_view source, std::string_view format,
                              double default_gbps);

// The other way, for the writers: the tree form of `fabric`, each switch naming only the
// switches below it (Slurm builds its tree from Switches=), hosts and children in link
// order, LinkSpeed where all its links have one known rate; with level_names, switches
// renamed switch.<level>.<n> (TopologyConfStyle) and listed from the top level down.
std::vector<SwitchDecl> declare_tree(const Fabric &fabric, bool level_names);

// The block form of `fabric` (BlockConfStyle says how blocks are named; write_block_conf
// says which blocks a fabric has). Errors: a name pattern that is no regular expression,
// a block name that is not a valid one.
Parsed<std::vector<BlockDecl>> declare_blocks(const Fabric &fabric, const BlockConfStyle &style);

}  // namespace slurm_ai
