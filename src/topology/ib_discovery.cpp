// Live InfiniBand discovery through libibnetdisc (the library behind ibnetdiscover), mapped
// into the same fabric model as the file loaders produce.
#include <infiniband/ibnetdisc.h>
#include <infiniband/mad.h>
#include <infiniband/verbs.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include <fmt/format.h>

#include "slurm_ai/topology/fabric.hpp"

namespace slurm_ai {
namespace {

// PortInfo:CapabilityMask bit 14, IsExtendedSpeedsSupported (IBA vol. 1, 14.2.5.6).
constexpr std::uint32_t kCapHasExtSpeeds = 1u << 14;
// Mellanox ExtendedPortInfo:LinkSpeedActive bit 0: the link runs FDR10.
constexpr std::uint32_t kMlnxFdr10 = 1u;

InputError live_error(std::string field, std::string expected) {
    return InputError{std::move(field), "", std::move(expected), "live", 0};
}

bool has_infiniband_device() {
    int count = 0;
    ibv_device **devices = ibv_get_device_list(&count);
    if (!devices)
        return false;
    bool found = false;
    for (int i = 0; i < count; ++i) {
        if (devices[i] && devices[i]->transport_type == IBV_TRANSPORT_IB)
            found = true;
    }
    ibv_free_device_list(devices);
    return found;
}

// Width and speed as ibnetdiscover decodes them: switch ports advertise extended speeds on
// the switch's port 0, CA ports on themselves.
LinkRate port_rate(ibnd_port_t *port) {
    const std::uint32_t width = mad_get_field(port->info, 0, IB_PORT_LINK_WIDTH_ACTIVE_F);
    const std::uint32_t speed = mad_get_field(port->info, 0, IB_PORT_LINK_SPEED_ACTIVE_F);
    const std::uint32_t fdr10 =
        mad_get_field(port->ext_info, 0, IB_MLNX_EXT_PORT_LINK_SPEED_ACTIVE_F);
    ibnd_node_t *node = port->node;
    std::uint8_t *cap_info = nullptr;
    if (node->type == IB_NODE_SWITCH) {
        if (node->ports && node->ports[0])
            cap_info = node->ports[0]->info;
    } else {
        cap_info = port->info;
    }
    std::uint32_t ext_speed = 0;
    if (cap_info && (mad_get_field(cap_info, 0, IB_PORT_CAPMASK_F) & kCapHasExtSpeeds))
        ext_speed = mad_get_field(port->info, 0, IB_PORT_LINK_SPEED_EXT_ACTIVE_F);

    int lanes = 0;
    switch (width) {
        case 1:
            lanes = 1;
            break;
        case 2:
            lanes = 4;
            break;
        case 4:
            lanes = 8;
            break;
        case 8:
            lanes = 12;
            break;
        case 16:
            lanes = 2;
            break;
        default:
            break;
    }
    const char *name = nullptr;
    if (ext_speed != 0) {
        name = ext_speed == 1   ? "FDR"
               : ext_speed == 2 ? "EDR"
               : ext_speed == 4 ? "HDR"
               : ext_speed == 8 ? "NDR"
                                : nullptr;
    } else if (fdr10 & kMlnxFdr10) {
        name = "FDR10";
    } else {
        name = speed == 1 ? "SDR" : speed == 2 ? "DDR" : speed == 4 ? "QDR" : nullptr;
    }

    if (lanes > 0 && name) {
        if (auto rate = parse_link_rate(fmt::format("{}x{}", lanes, name)))
            return rate.value();
    }
    LinkRate unknown;  // as ibnetdiscover's "4x???": the link is there, its rate is not known
    unknown.width = lanes;
    return unknown;
}

std::string node_description(const ibnd_node_t *node) {
    std::string out;
    for (std::size_t i = 0; i < sizeof(node->nodedesc) && node->nodedesc[i]; ++i) {
        auto c = static_cast<unsigned char>(node->nodedesc[i]);
        out += c >= 0x20 && c < 0x7f ? static_cast<char>(c) : ' ';
    }
    while (!out.empty() && out.back() == ' ')
        out.pop_back();
    return out;
}

struct FabricDeleter {
    void operator()(ibnd_fabric_t *f) const { ibnd_destroy_fabric(f); }
};

}  // namespace

Parsed<Fabric> discover_ib_fabric(const GuidMap *map) {
    if (!has_infiniband_device()) {
        return live_error("hca",
                          "an InfiniBand HCA, but no InfiniBand HCA was found on this host "
                          "(libibverbs lists no InfiniBand device)");
    }
    ibnd_config_t config{};
    std::unique_ptr<ibnd_fabric_t, FabricDeleter> discovered(
        ibnd_discover_fabric(nullptr, 0, nullptr, &config));
    if (!discovered) {
        return live_error("hca",
                          "a fabric that libibnetdisc can discover from this host's HCA: none "
                          "of its ports is active, or this user may not open "
                          "/dev/infiniband/umad*");
    }

    Fabric fabric;
    fabric.source = "live";
    fabric.format = "live-ib";
    std::unordered_map<const ibnd_node_t *, int> index_of;
    std::unordered_map<std::string, int> by_name;
    std::unordered_map<const ibnd_node_t *, std::string> device_of;  // CAs: "mlx5_0"
    for (ibnd_node_t *node = discovered->nodes; node; node = node->next) {
        if (node->type != IB_NODE_SWITCH && node->type != IB_NODE_CA)
            continue;  // routers are not part of the model
        FabricNode n;
        n.guid = fmt::format("{:016x}", node->guid);
        n.is_switch = node->type == IB_NODE_SWITCH;
        n.name = (n.is_switch ? "S-" : "H-") + n.guid;
        n.description = node_description(node);
        auto ca = n.is_switch ? std::nullopt : parse_ca_description(n.description);
        if (ca)
            device_of.emplace(node, ca->device);
        if (!n.is_switch && map && map->count(n.guid))
            n.name = map->at(n.guid);
        else if (ca)  // as the ibnetdiscover reader names it (parse_ca_description)
            n.name = std::string(ca->host);
        n.ports = node->numports;
        auto [it, added] = by_name.emplace(n.name, static_cast<int>(fabric.nodes.size()));
        if (!added && (n.is_switch || fabric.nodes[static_cast<std::size_t>(it->second)].is_switch))
            return live_error("node", "host names that are not also switch names (" + n.name + ")");
        index_of.emplace(node, it->second);  // HCAs mapped to one hostname share a node
        if (added)
            fabric.nodes.push_back(std::move(n));
    }

    for (ibnd_node_t *node = discovered->nodes; node; node = node->next) {
        auto self = index_of.find(node);
        if (self == index_of.end() || !node->ports)
            continue;
        for (int p = 1; p <= node->numports; ++p) {
            ibnd_port_t *port = node->ports[p];
            if (!port || !port->remoteport || !port->remoteport->node)
                continue;
            ibnd_port_t *remote = port->remoteport;
            auto peer = index_of.find(remote->node);
            if (peer == index_of.end())
                continue;
            // libibnetdisc links both ends to each other; take each link from its lower end.
            auto here = std::make_pair(node->guid, port->portnum);
            auto there = std::make_pair(remote->node->guid, remote->portnum);
            if (!(here < there))
                continue;
            auto dev = device_of.find(node);
            if (dev == device_of.end())
                dev = device_of.find(remote->node);
            fabric.links.push_back({self->second, peer->second, port->portnum, remote->portnum,
                                    port_rate(port),
                                    dev == device_of.end() ? std::string() : dev->second, -1});
        }
    }
    fabric.index_links();
    fabric.infer_levels();
    fabric.infer_rails();
    return fabric;
}

}  // namespace slurm_ai
