// NodeTopology from hwloc: an XML export of any host, or this host discovered live. An XML
// file is checked and brought into the layout libhwloc 2 reads first (hwloc_xml_check.cpp
// says why); then libhwloc loads it and the node's GPUs, NICs, NVLink and PCIe tree are
// read from the loaded topology.
#include <hwloc.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "hwloc_xml_check.hpp"
#include "node_topology_build.hpp"
#include "slurm_ai/common/file_io.hpp"
#include "slurm_ai/topology/node_topology.hpp"

namespace slurm_ai {
namespace {

// ---------------------------------------------------------------------------------------
// Reading the loaded topology (hwloc)

struct TopologyFree {
    void operator()(hwloc_topology_t t) const { hwloc_topology_destroy(t); }
};
using Topology = std::unique_ptr<hwloc_topology, TopologyFree>;

// Bitmaps from a file may be infinite ("0xf...f,"); no machine has this many PUs.
constexpr int kMaxIds = 1 << 16;

std::vector<int> ids_of(hwloc_const_bitmap_t set) {
    std::vector<int> ids;
    if (!set)
        return ids;
    for (int i = hwloc_bitmap_first(set); i >= 0 && i < kMaxIds; i = hwloc_bitmap_next(set, i))
        ids.push_back(i);
    return ids;
}

std::string info(hwloc_obj_t o, const char *name) {
    const char *v = hwloc_obj_get_info_by_name(o, name);
    return v ? v : "";
}

std::string busid_of(hwloc_obj_t pci) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", pci->attr->pcidev.domain,
                  pci->attr->pcidev.bus, pci->attr->pcidev.dev, pci->attr->pcidev.func);
    return buf;
}

unsigned base_class(hwloc_obj_t pci) {
    return pci->attr->pcidev.class_id >> 8;
}

bool is_nvswitch(hwloc_obj_t pci) {
    return (pci->subtype && std::strcmp(pci->subtype, "NVSwitch") == 0) ||
           (pci->attr->pcidev.class_id == 0x0680 && pci->attr->pcidev.vendor_id == 0x10de);
}

bool is_gpu_osdev(hwloc_obj_t os) {
    std::string_view name = os->name ? os->name : "";
    std::string_view sub = os->subtype ? os->subtype : "";
    return name.starts_with("cuda") || name.starts_with("nvml") || name.starts_with("rsmi") ||
           name.starts_with("opencl") || sub == "CUDA" || sub == "NVML" || sub == "RSMI" ||
           sub == "OpenCL" || sub == "LevelZero";
}

bool is_net_osdev(hwloc_obj_t os) {
    return os->type == HWLOC_OBJ_OS_DEVICE && (os->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK ||
                                               os->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS);
}

template <class F>
void for_each_osdev(hwloc_obj_t o, F f) {
    for (hwloc_obj_t c = o->io_first_child; c; c = c->next_sibling)
        if (c->type == HWLOC_OBJ_OS_DEVICE)
            f(c);
}

// Where an I/O object is: the nearest NUMA node (when its CPU-side ancestor has exactly
// one), the PUs of that ancestor and its cores' logical indexes (gres.conf's Cores=).
void locality(hwloc_topology_t topo, hwloc_obj_t io, int &numa, std::vector<int> &cpus,
              std::vector<int> &cores) {
    hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(topo, io);
    numa = -1;
    if (!anc)
        return;
    cpus = ids_of(anc->cpuset);
    for (hwloc_obj_t c = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_CORE, nullptr); c;
         c = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_CORE, c))
        if (c->cpuset && hwloc_bitmap_intersects(c->cpuset, anc->cpuset))
            cores.push_back(static_cast<int>(c->logical_index));
    if (anc->nodeset && hwloc_bitmap_weight(anc->nodeset) == 1)
        numa = hwloc_bitmap_first(anc->nodeset);
}

std::string nic_kind(hwloc_obj_t pci, std::string_view verbs_name, std::string_view net_name) {
    const unsigned cls = pci ? pci->attr->pcidev.class_id : 0;
    const bool amazon_efa = pci && pci->attr->pcidev.vendor_id == 0x1d0f &&
                            (pci->attr->pcidev.device_id & 0xfff0) == 0xefa0;
    if (amazon_efa || verbs_name.starts_with("efa") || verbs_name.starts_with("rdmap"))
        return "efa";
    if (cls == 0x0207)
        return "ib";
    if (!verbs_name.empty())  // a verbs device on an Ethernet function is RoCE
        return cls == 0x0200 ? "roce" : "ib";
    if (net_name.starts_with("ib"))
        return "ib";
    if (cls == 0x0200 || !net_name.empty())
        return "ethernet";
    return "unknown";
}

// The I/O tree of the topology, built on demand from the objects asked for.
class IoTree {
  public:
    int node_of(hwloc_obj_t o) {
        if (auto it = index_.find(o); it != index_.end())
            return it->second;
        detail::IoNode n;
        n.parent = o->parent ? node_of(o->parent) : -1;
        switch (o->type) {
            case HWLOC_OBJ_PCI_DEVICE:
                n.kind = detail::IoNode::Kind::kDevice;
                n.link_gbs = o->attr->pcidev.linkspeed;
                break;
            case HWLOC_OBJ_BRIDGE:
                if (o->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST) {
                    n.kind = detail::IoNode::Kind::kHostBridge;
                } else {
                    n.kind = detail::IoNode::Kind::kBridge;
                    n.link_gbs = o->attr->bridge.upstream.pci.linkspeed;
                }
                break;
            case HWLOC_OBJ_OS_DEVICE:
                n.kind = detail::IoNode::Kind::kDevice;
                break;
            default: {
                n.kind = detail::IoNode::Kind::kHost;
                int w = o->nodeset ? hwloc_bitmap_weight(o->nodeset) : 1;
                n.numa_nodes = w < 0 ? 2 : std::max(w, 1);  // infinite: spans sockets
            }
        }
        if (!(n.link_gbs >= 0) || !std::isfinite(n.link_gbs))
            n.link_gbs = 0;
        nodes_.push_back(n);
        int id = static_cast<int>(nodes_.size()) - 1;
        index_.emplace(o, id);
        return id;
    }
    const std::vector<detail::IoNode> &nodes() const { return nodes_; }

  private:
    std::map<hwloc_obj_t, int> index_;
    std::vector<detail::IoNode> nodes_;
};

// hwloc shows a PCIe switch as an upstream-port bridge over one bridge per downstream
// port, so devices one bridge below a common bridge are still under one switch.
constexpr int kHwlocSwitchLevels = 1;

// A GPU's PCI function: its bus id, OS devices, model and locality.
Gpu gpu_of(hwloc_topology_t topo, hwloc_obj_t pci) {
    Gpu g;
    g.pci_busid = busid_of(pci);
    for_each_osdev(pci, [&](hwloc_obj_t os) {
        if (os->attr->osdev.type != HWLOC_OBJ_OSDEV_GPU &&
            os->attr->osdev.type != HWLOC_OBJ_OSDEV_COPROC)
            return;
        if (os->name)
            g.os_devices.emplace_back(os->name);
        if (g.model.empty())
            g.model = info(os, "GPUModel");
    });
    if (g.model.empty())
        g.model = info(pci, "PCIDevice");
    locality(topo, pci, g.numa_node, g.cpus, g.cores);
    return g;
}

struct GpuRec {
    Gpu gpu;
    hwloc_obj_t obj;
};
struct NicRec {
    Nic nic;
    hwloc_obj_t obj;
};

// NVLink, from the NVLinkBandwidth matrix hwloc's NVML backend records (MB/s): each GPU
// pair's direct links and each GPU's links into NVSwitches (into `nv`), and each GPU's
// total (returned). Its endpoints are GPUs (by OS device or PCI device), NVSwitches and,
// on POWER, packages.
std::vector<double> nvlink_of(hwloc_topology_t topo, const std::vector<GpuRec> &gpus,
                              const std::vector<hwloc_obj_t> &switches,
                              detail::NvlinkFigures &nv) {
    const std::size_t G = gpus.size();
    std::vector<double> total(G, 0.0);
    unsigned nr = 1;
    hwloc_distances_s *dist = nullptr;
    if (hwloc_distances_get_by_name(topo, "NVLinkBandwidth", &nr, &dist, 0) == 0 && nr >= 1 &&
        dist) {
        const unsigned n = dist->nbobjs;
        std::vector<int> gpu_of(n, -1);
        std::vector<bool> is_switch(n, false), claimed(G, false);
        for (unsigned i = 0; i < n; ++i) {
            hwloc_obj_t o = dist->objs[i];
            while (o && o->type == HWLOC_OBJ_OS_DEVICE)
                o = o->parent;
            if (!o || o->type != HWLOC_OBJ_PCI_DEVICE)
                continue;
            if (std::find(switches.begin(), switches.end(), o) != switches.end()) {
                is_switch[i] = true;
                continue;
            }
            for (std::size_t g = 0; g < G; ++g)
                if (gpus[g].obj == o && !claimed[g]) {  // a GPU listed twice counts once
                    gpu_of[i] = static_cast<int>(g);
                    claimed[g] = true;
                }
        }
        for (unsigned i = 0; i < n; ++i) {
            if (gpu_of[i] < 0)
                continue;
            const auto a = static_cast<std::size_t>(gpu_of[i]);
            for (unsigned j = 0; j < n; ++j) {
                const double gbs = static_cast<double>(dist->values[i * n + j]) / 1000.0;
                if (i == j || !(gbs > 0))
                    continue;
                total[a] += gbs;
                if (gpu_of[j] >= 0)
                    nv.direct[a * G + static_cast<std::size_t>(gpu_of[j])] += gbs;
                else if (is_switch[j])
                    nv.fabric[a] += gbs;
            }
        }
        hwloc_distances_release(topo, dist);
    }

    return total;
}

Parsed<NodeTopology> extract(hwloc_topology_t topo, std::string_view source) {
    NodeTopology t;
    hwloc_obj_t root = hwloc_get_root_obj(topo);
    t.hostname = info(root, "HostName");
    t.packages = std::max(0, hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE));
    t.cores = std::max(0, hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE));
    t.pus = std::max(0, hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU));

    for (hwloc_obj_t n = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, nullptr); n;
         n = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, n))
        t.numa_nodes.push_back(NumaNode{static_cast<int>(n->os_index), ids_of(n->cpuset),
                                        n->attr->numanode.local_memory});

    std::vector<GpuRec> gpus;
    std::vector<NicRec> nics;
    std::vector<hwloc_obj_t> switches;

    for (hwloc_obj_t pci = hwloc_get_next_pcidev(topo, nullptr); pci;
         pci = hwloc_get_next_pcidev(topo, pci)) {
        if (is_nvswitch(pci)) {
            switches.push_back(pci);
            continue;
        }
        bool gpu_osdev = false, net_osdev = false;
        for_each_osdev(pci, [&](hwloc_obj_t os) {
            gpu_osdev |= is_gpu_osdev(os);
            net_osdev |= is_net_osdev(os);
        });
        const unsigned vendor = pci->attr->pcidev.vendor_id;
        if (gpu_osdev || (base_class(pci) == 0x03 && (vendor == 0x10de || vendor == 0x1002))) {
            gpus.push_back({gpu_of(topo, pci), pci});
        } else if (net_osdev || base_class(pci) == 0x02) {
            // One NIC per PCI function: its verbs device names it, else its netdev (the
            // ib0 of an mlx5_0 is the same port), else the bus id.
            std::string verbs, net;
            for_each_osdev(pci, [&](hwloc_obj_t os) {
                if (!os->name || !is_net_osdev(os))
                    return;
                auto &slot = os->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS ? verbs : net;
                if (slot.empty())
                    slot = os->name;
            });
            Nic n;
            n.pci_busid = busid_of(pci);
            n.name = !verbs.empty() ? verbs : !net.empty() ? net : n.pci_busid;
            n.kind = nic_kind(pci, verbs, net);
            n.pcie_gbs = std::isfinite(pci->attr->pcidev.linkspeed)
                             ? std::max(0.0f, pci->attr->pcidev.linkspeed)
                             : 0.0;
            std::vector<int> unused_cpus, unused_cores;
            locality(topo, pci, n.numa_node, unused_cpus, unused_cores);
            nics.push_back({std::move(n), pci});
        }
    }
    // Network devices outside PCI (rare: hwloc attaches most to their PCI function).
    for (hwloc_obj_t os = hwloc_get_next_osdev(topo, nullptr); os;
         os = hwloc_get_next_osdev(topo, os)) {
        if (!is_net_osdev(os) || !os->name ||
            (os->parent && os->parent->type == HWLOC_OBJ_PCI_DEVICE))
            continue;
        bool verbs = os->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS;
        Nic n;
        n.name = os->name;
        n.kind = nic_kind(nullptr, verbs ? n.name : "", verbs ? "" : n.name);
        std::vector<int> unused_cpus, unused_cores;
        locality(topo, os, n.numa_node, unused_cpus, unused_cores);
        nics.push_back({std::move(n), os});
    }

    if (gpus.size() > detail::kMaxGpus || nics.size() > detail::kMaxNics)
        return InputError{
            gpus.size() > detail::kMaxGpus ? "GPUs" : "NICs",
            std::to_string(std::max(gpus.size(), nics.size())),
            "at most " + std::to_string(detail::kMaxGpus) + " GPUs and as many NICs in one node",
            std::string(source), 0};
    std::stable_sort(gpus.begin(), gpus.end(), [](const GpuRec &a, const GpuRec &b) {
        return detail::busid_less(a.gpu.pci_busid, b.gpu.pci_busid);
    });
    std::stable_sort(nics.begin(), nics.end(), [](const NicRec &a, const NicRec &b) {
        return detail::busid_less(a.nic.pci_busid, b.nic.pci_busid);
    });
    t.nvswitches = static_cast<int>(switches.size());

    const std::size_t G = gpus.size();
    detail::NvlinkFigures nv{std::vector<double>(G * G, 0.0), std::vector<double>(G, 0.0)};
    const std::vector<double> total = nvlink_of(topo, gpus, switches, nv);

    IoTree tree;
    std::vector<int> gpu_node(G), nic_node(nics.size());
    for (std::size_t g = 0; g < G; ++g) {
        gpus[g].gpu.nvlink_gbs = total[g];
        gpu_node[g] = tree.node_of(gpus[g].obj);
        t.gpus.push_back(std::move(gpus[g].gpu));
    }
    for (std::size_t i = 0; i < nics.size(); ++i) {
        nic_node[i] = tree.node_of(nics[i].obj);
        t.nics.push_back(std::move(nics[i].nic));
    }
    detail::fill_link_matrices(
        t, nv,
        [&](int a, int b) {
            return detail::pcie_route(tree.nodes(), gpu_node[static_cast<std::size_t>(a)],
                                      gpu_node[static_cast<std::size_t>(b)], kHwlocSwitchLevels);
        },
        [&](int g, int n) {
            return detail::pcie_route(tree.nodes(), gpu_node[static_cast<std::size_t>(g)],
                                      nic_node[static_cast<std::size_t>(n)], kHwlocSwitchLevels);
        });
    return t;
}

// Keeps every PCI device, bridge and OS device (the default drops bridges, and NVSwitches
// with them), and describes the whole node, not only the CPUs this process may use.
Topology new_topology() {
    hwloc_topology_t raw = nullptr;
    if (hwloc_topology_init(&raw) != 0)
        return Topology();
    Topology topo(raw);
    hwloc_topology_set_io_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_ALL);
    hwloc_topology_set_flags(raw, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
    return topo;
}

}  // namespace

Parsed<NodeTopology> parse_hwloc_xml(std::string_view xml, std::string_view source) {
    auto prepared = detail::prepare_for_hwloc(xml, source);
    if (!prepared)
        return prepared.error();
    const std::string &text = prepared.value();
    Topology topo = new_topology();
    if (!topo ||
        hwloc_topology_set_xmlbuffer(topo.get(), text.c_str(), static_cast<int>(text.size())) !=
            0 ||
        hwloc_topology_load(topo.get()) != 0)
        return InputError{"topology", "",
                          "a topology libhwloc accepts (HWLOC_XML_VERBOSE=1 prints its reason)",
                          std::string(source), 0};
    auto extracted = extract(topo.get(), source);
    if (!extracted)
        return extracted.error();
    NodeTopology t = std::move(extracted).value();
    t.source = std::string(source);
    t.format = "hwloc-xml";
    return t;
}

Parsed<NodeTopology> load_hwloc_xml(const std::string &path) {
    auto text = read_text_file(path);
    if (!text)
        return text.error();
    return parse_hwloc_xml(text.value(), path);
}

Parsed<NodeTopology> discover_local_node() {
    Topology topo = new_topology();
    if (!topo || hwloc_topology_load(topo.get()) != 0)
        return InputError{"hwloc", std::strerror(errno), "a topology libhwloc can discover", "live",
                          0};
    auto extracted = extract(topo.get(), "live");
    if (!extracted)
        return extracted.error();
    NodeTopology t = std::move(extracted).value();
    if (t.hostname.empty()) {
        char name[256] = {};
        if (gethostname(name, sizeof name - 1) == 0)
            t.hostname = name;
    }
    t.source = "live";
    t.format = "live";
    return t;
}

}  // namespace slurm_ai
