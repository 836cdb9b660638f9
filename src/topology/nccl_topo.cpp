// NodeTopology from an NCCL topology file: the XML NCCL reads from NCCL_TOPO_FILE and
// writes to NCCL_TOPO_DUMP_FILE, as cloud vendors ship for their GPU VMs.
//
//   <system version="1">
//     <cpu numaid="0" affinity="0000ffff,ffffffff" ...>          one per NUMA node
//       <pci busid="ffff:ff:01.0" class="0x060400" link_speed="16 GT/s" link_width="16">
//         <pci busid="0001:00:00.0" class="0x030200" ...>         a GPU (class 0x03)
//           <gpu dev="0" sm="80"><nvlink target="..." count="12" tclass="0x068000"/></gpu>
//         </pci>
//         <pci busid="0101:00:00.0" class="0x020700" ...>         a NIC (class 0x02)
//           <nic><net name="mlx5_0" .../></nic>
//         </pci>
//       </pci>
//     </cpu>
//   </system>
//
// NCCL flattens a PCIe switch into one <pci> element (class 0x0604) holding the devices
// behind it, so devices with the same parent <pci> are under one switch (PIX), devices
// whose nearest common <pci> is further up cross several switches (PXB), devices that
// meet only at their <cpu> go through its root complex (PHB), and devices under different
// <cpu> elements cross the inter-socket link (SYS). Elements NCCL added later, or that
// this model has no use for, are ignored, as NCCL itself does.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "node_topology_build.hpp"
#include "slurm_ai/common/file_io.hpp"
#include "slurm_ai/topology/node_topology.hpp"
#include "xml_document.hpp"

namespace slurm_ai {
namespace {

using detail::IoNode;

// PCIe data rate per lane after line encoding, GB/s per direction: 8b/10b for Gen1-2,
// 128b/130b for Gen3-5 (8 GT/s -> 8 * 128/130 / 8 = 0.985), FLIT for Gen6.
struct LaneRate {
    double gts;
    double gbs;
};
constexpr LaneRate kLaneRates[] = {{2.5, 0.25},   {5.0, 0.5},    {8.0, 0.985},
                                   {16.0, 1.969}, {32.0, 3.938}, {64.0, 7.563}};
// NCCL treats a missing width as x16 (sysfs reports none in some VMs); so do we.
constexpr int kAssumedWidth = 16;

// NVLink bandwidth per link and direction by GPU generation (NCCL's "sm"): NVLink 1
// (Pascal) 20 GB/s, NVLink 2-4 (Volta, Ampere, Hopper) 25 GB/s, NVLink 5 (Blackwell)
// 50 GB/s. Without sm, kDefaultNvlinkLinkGBs.
double nvlink_link_gbs(int sm) {
    if (sm <= 0)
        return kDefaultNvlinkLinkGBs;
    if (sm < 60)
        return 0;  // no NVLink before Pascal
    if (sm < 70)
        return 20;
    if (sm < 100)
        return 25;
    return 50;
}

// The NCCL sentinel for an NVLink peer the VM cannot see (always an NVSwitch).
constexpr std::string_view kInvisibleTarget = "fffffff:ffff:ff";

template <class T>
bool parse_int(std::string_view s, T &out, int base = 10) {
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out, base);
    return !s.empty() && ec == std::errc() && end == s.data() + s.size();
}

bool parse_hex(std::string_view s, unsigned long &out) {
    if (s.starts_with("0x") || s.starts_with("0X"))
        s.remove_prefix(2);
    return s.size() <= 8 && parse_int(s, out, 16);
}

// A PCI class code "0x030200", or NCCL's shortened "0x03" / "0x0302".
struct PciClass {
    int base = -1, sub = -1, prog = -1;
    bool is(int b, int s = -1, int p = -1) const {
        return base == b && (s < 0 || sub == s) && (p < 0 || prog == p);
    }
};
std::optional<PciClass> parse_class(std::string_view s) {
    if (!(s.starts_with("0x") || s.starts_with("0X")))
        return std::nullopt;
    s.remove_prefix(2);
    unsigned long v = 0;
    if ((s.size() != 2 && s.size() != 4 && s.size() != 6) || !parse_int(s, v, 16))
        return std::nullopt;
    PciClass c;
    const int bytes = static_cast<int>(s.size() / 2);
    c.base = static_cast<int>((v >> (8 * (bytes - 1))) & 0xff);
    if (bytes >= 2)
        c.sub = static_cast<int>((v >> (8 * (bytes - 2))) & 0xff);
    if (bytes == 3)
        c.prog = static_cast<int>(v & 0xff);
    return c;
}

// "16 GT/s", "32.0 GT/s PCIe" (newer kernels), or "" when sysfs had none: GB/s per lane,
// 0 for unknown, nullopt when malformed.
std::optional<double> parse_lane_rate(std::string_view s) {
    auto trim = [](std::string_view v) {
        while (!v.empty() && v.front() == ' ')
            v.remove_prefix(1);
        while (!v.empty() && v.back() == ' ')
            v.remove_suffix(1);
        return v;
    };
    s = trim(s);
    if (s.empty() || s == "Unknown")
        return 0.0;
    // NCCL reads the rate as a prefix, so what follows "GT/s" (" PCIe" from newer kernels,
    // "PCIe/s" in AWS's p5.48xlarge file) does not matter.
    auto unit = s.find("GT/s");
    if (unit == std::string_view::npos)
        return std::nullopt;
    s = trim(s.substr(0, unit));
    double gts = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), gts);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size())
        return std::nullopt;
    for (const auto &r : kLaneRates)
        if (std::fabs(r.gts - gts) < 0.01)
            return r.gbs;
    return std::nullopt;
}

// "00000000,0000ffff,ffffffff": the Linux cpumap form, 32-bit hex words, most significant
// first. nullopt when malformed.
constexpr std::size_t kMaxAffinityWords = 1024;  // 32768 CPUs
std::optional<std::vector<int>> parse_affinity(std::string_view s) {
    std::vector<int> cpus;
    if (s.empty())
        return cpus;
    std::vector<std::string_view> words;
    for (std::size_t pos = 0;;) {
        auto comma = s.find(',', pos);
        words.push_back(s.substr(pos, comma == std::string_view::npos ? s.npos : comma - pos));
        if (words.size() > kMaxAffinityWords)
            return std::nullopt;
        if (comma == std::string_view::npos)
            break;
        pos = comma + 1;
    }
    for (std::size_t w = 0; w < words.size(); ++w) {
        unsigned long bits = 0;
        if (words[w].empty() || words[w].size() > 8 || !parse_int(words[w], bits, 16))
            return std::nullopt;
        const int base = static_cast<int>((words.size() - 1 - w) * 32);
        for (int b = 0; b < 32; ++b)
            if (bits & (1ul << b))
                cpus.push_back(base + b);
    }
    std::sort(cpus.begin(), cpus.end());
    return cpus;
}

const xmlNode *first_child(const xmlNode *n, std::string_view tag) {
    for (const xmlNode *c = n->children; c; c = c->next)
        if (xml::is_element(c, tag))
            return c;
    return nullptr;
}

class Reader {
  public:
    explicit Reader(std::string_view source) : source_(source) {}

    std::optional<InputError> read_system(const xmlNode *system) {
        tree_.push_back(IoNode{IoNode::Kind::kHost, -1, 0, 1});
        int cpus = 0;
        for (const xmlNode *c = system->children; c; c = c->next)
            if (xml::is_element(c, "cpu")) {
                ++cpus;
                if (auto err = read_cpu(c))
                    return err;
            }
        tree_[0].numa_nodes = std::max(cpus, 1);
        return std::nullopt;
    }

    NodeTopology finish() &&;

  private:
    struct Where {
        int numa = -1;
        const std::vector<int> *cpus = nullptr;
    };
    enum class Target { kUnknown, kGpu, kSwitch, kCpu };
    struct NvlinkRec {
        std::string target;
        int count = 1;
        Target kind = Target::kUnknown;
    };
    struct GpuRec {
        Gpu gpu;
        int node = -1;
        int sm = 0;
        std::vector<NvlinkRec> links;
    };
    struct NicRec {
        Nic nic;
        int node = -1;
    };

    InputError error(const xmlNode *n, std::string field, std::string value,
                     std::string expected) const {
        return xml::attr_error(n, std::move(field), std::move(value), std::move(expected), source_);
    }

    std::optional<InputError> check_capacity(const xmlNode *n, bool gpu, bool nic) const {
        if (gpu && gpus_.size() >= detail::kMaxGpus)
            return error(n, "<gpu>", xml::attr(n, "busid").value_or(""),
                         "at most " + std::to_string(detail::kMaxGpus) + " GPUs in one node");
        if (nic && nics_.size() >= detail::kMaxNics)
            return error(n, "<nic>", xml::attr(n, "busid").value_or(""),
                         "at most " + std::to_string(detail::kMaxNics) + " NICs in one node");
        return std::nullopt;
    }

    int add_node(IoNode::Kind kind, int parent, double link_gbs) {
        tree_.push_back(IoNode{kind, parent, link_gbs, 1});
        return static_cast<int>(tree_.size()) - 1;
    }

    std::optional<InputError> read_cpu(const xmlNode *n) {
        auto numaid = xml::attr(n, "numaid");
        int numa = -1;
        if (!numaid || !parse_int(*numaid, numa) || numa < -1 || numa > 65535)
            return error(n, "numaid", numaid.value_or(""), "a NUMA node number (-1 for none)");
        auto affinity = xml::attr(n, "affinity").value_or("");
        auto cpus = parse_affinity(affinity);
        if (!cpus)
            return error(n, "affinity", affinity,
                         "a CPU mask of comma-separated 32-bit hex words, most significant first");
        if (numa >= 0) {
            if (!numa_ids_.insert(numa).second)
                return error(n, "numaid", *numaid, "a NUMA node number no other <cpu> uses");
            numa_.push_back(NumaNode{numa, *cpus, 0});
        }
        all_cpus_.insert(cpus->begin(), cpus->end());
        const Where where{numa, &*cpus};
        const int node = add_node(IoNode::Kind::kHost, 0, 0);
        for (const xmlNode *c = n->children; c; c = c->next) {
            std::optional<InputError> err;
            if (xml::is_element(c, "pci"))
                err = read_pci(c, node, where);
            else if (xml::is_element(c, "nic") && !(err = check_capacity(c, false, true)))
                err =
                    read_nic(c, PciClass{}, "", add_node(IoNode::Kind::kDevice, node, 0), 0, where);
            if (err)
                return err;
        }
        return std::nullopt;
    }

    std::optional<InputError> read_pci(const xmlNode *n, int parent, const Where &where) {
        auto raw_busid = xml::attr(n, "busid");
        if (!raw_busid)
            return error(n, "busid", "", "a PCI bus id on every <pci>, e.g. 0000:34:00.0");
        auto busid = parse_pci_busid(*raw_busid, "busid");
        if (!busid)
            return error(n, "busid", *raw_busid, busid.error().expected);
        if (!busids_.insert(busid.value()).second)
            return error(n, "busid", *raw_busid, "a bus id no other <pci> uses");

        PciClass cls;
        if (auto raw = xml::attr(n, "class")) {
            auto parsed = parse_class(*raw);
            if (!parsed)
                return error(n, "class", *raw, "a PCI class code in hex, e.g. 0x030200");
            cls = *parsed;
        }
        unsigned long vendor = 0, device = 0;
        for (auto [key, out] : {std::pair{"vendor", &vendor}, std::pair{"device", &device}})
            if (auto raw = xml::attr(n, key); raw && !parse_hex(*raw, *out))
                return error(n, key, *raw, "a 16-bit hex id, e.g. 0x10de");

        double lane = 0;
        if (auto raw = xml::attr(n, "link_speed")) {
            auto rate = parse_lane_rate(*raw);
            if (!rate)
                return error(n, "link_speed", *raw,
                             "a PCIe rate of 2.5, 5, 8, 16, 32 or 64 GT/s (e.g. \"16 GT/s\" or "
                             "\"32.0 GT/s PCIe\"), or empty");
            lane = *rate;
        }
        int width = kAssumedWidth;
        if (auto raw = xml::attr(n, "link_width"); raw && !raw->empty()) {
            if (!parse_int(*raw, width) || width < 0 || width > 32)
                return error(n, "link_width", *raw, "a lane count from 1 to 32 (0: unknown)");
            if (width == 0)
                width = kAssumedWidth;
        }
        const double link_gbs = lane * width;

        const xmlNode *gpu = first_child(n, "gpu");
        const xmlNode *nic = first_child(n, "nic");
        if (auto err = check_capacity(n, gpu || cls.is(0x03), nic || cls.is(0x02)))
            return err;
        if (gpu || cls.is(0x03))
            return read_gpu(gpu, busid.value(), add_node(IoNode::Kind::kDevice, parent, link_gbs),
                            where);
        if (nic || cls.is(0x02))
            return read_nic(nic, cls, busid.value(),
                            add_node(IoNode::Kind::kDevice, parent, link_gbs), link_gbs, where,
                            vendor, device);
        if (cls.is(0x06, 0x80, 0x00) && (vendor == 0 || vendor == 0x10de)) {
            ++pci_nvswitches_;
            return std::nullopt;
        }
        if (!first_child(n, "pci") && !cls.is(0x06))
            return std::nullopt;  // an endpoint of no interest (NVMe, ...)
        const int node = add_node(IoNode::Kind::kBridge, parent, link_gbs);
        for (const xmlNode *c = n->children; c; c = c->next)
            if (xml::is_element(c, "pci"))
                if (auto err = read_pci(c, node, where))
                    return err;
        return std::nullopt;
    }

    std::optional<InputError> read_gpu(const xmlNode *gpu, const std::string &busid, int node,
                                       const Where &where) {
        GpuRec rec;
        rec.gpu.pci_busid = busid;
        rec.gpu.numa_node = where.numa;
        rec.gpu.cpus = *where.cpus;
        rec.node = node;
        if (gpu) {
            if (auto sm = xml::attr(gpu, "sm"); sm && (!parse_int(*sm, rec.sm) || rec.sm < 0))
                return error(gpu, "sm", *sm, "a compute capability as NCCL writes it, e.g. 80");
            for (const xmlNode *c = gpu->children; c; c = c->next) {
                if (!xml::is_element(c, "nvlink"))
                    continue;
                NvlinkRec link;
                if (auto tclass = xml::attr(c, "tclass")) {
                    auto cls = parse_class(*tclass);
                    if (!cls)
                        return error(c, "tclass", *tclass, "a PCI class code, e.g. 0x068000");
                    link.kind = cls->is(0x06, 0x80, 0x00)   ? Target::kSwitch
                                : cls->is(0x06, 0x80, 0x01) ? Target::kCpu
                                : cls->is(0x03)             ? Target::kGpu
                                                            : Target::kUnknown;
                }
                auto target = xml::attr(c, "target").value_or("");
                if (auto parsed = parse_pci_busid(target, "target"))
                    link.target = parsed.value();
                else if (link.kind == Target::kSwitch || target == kInvisibleTarget)
                    link.target = target;  // NVSwitches may have no visible bus id
                else
                    return error(c, "target", target, parsed.error().expected);
                if (target == kInvisibleTarget)
                    link.kind = Target::kSwitch;
                if (auto count = xml::attr(c, "count");
                    count && (!parse_int(*count, link.count) || link.count < 1 || link.count > 64))
                    return error(c, "count", *count, "a number of links from 1 to 64");
                rec.links.push_back(std::move(link));
            }
        }
        gpus_.push_back(std::move(rec));
        return std::nullopt;
    }

    // A NIC: a <pci> of class 0x02 or holding a <nic>, or a <nic> straight under a <cpu>
    // (then `cls` is empty and `node` a device of its own under the <cpu>).
    // Named after its first <net> (the verbs device), else its bus id.
    std::optional<InputError> read_nic(const xmlNode *nic, const PciClass &cls,
                                       const std::string &busid, int node, double link_gbs,
                                       const Where &where, unsigned long vendor = 0,
                                       unsigned long device = 0) {
        std::string net;
        if (nic)
            if (const xmlNode *n = first_child(nic, "net"))
                net = xml::attr(n, "name").value_or("");
        NicRec rec;
        rec.nic.pci_busid = busid;
        rec.nic.name = !net.empty()     ? net
                       : !busid.empty() ? busid
                                        : "nic" + std::to_string(nics_.size());
        rec.nic.numa_node = where.numa;
        rec.nic.pcie_gbs = link_gbs;
        const bool efa = (vendor == 0x1d0f && (device & 0xfff0) == 0xefa0) ||
                         net.starts_with("efa") || net.starts_with("rdmap");
        if (efa)
            rec.nic.kind = "efa";
        else if (cls.is(0x02, 0x07) || net.starts_with("mlx"))
            rec.nic.kind = "ib";
        else if (cls.is(0x02, 0x00))
            rec.nic.kind = "ethernet";
        else
            rec.nic.kind = "unknown";
        rec.node = node;
        nics_.push_back(std::move(rec));
        return std::nullopt;
    }

    std::string source_;
    std::vector<IoNode> tree_;
    std::vector<NumaNode> numa_;
    std::set<int> numa_ids_;
    std::set<int> all_cpus_;
    std::set<std::string> busids_;
    std::vector<GpuRec> gpus_;
    std::vector<NicRec> nics_;
    int pci_nvswitches_ = 0;
};

// NCCL has no host bridges and one <pci> per switch: PIX only for the same parent.
constexpr int kNcclSwitchLevels = 0;

NodeTopology Reader::finish() && {
    NodeTopology t;
    t.pus = static_cast<int>(all_cpus_.size());
    t.numa_nodes = std::move(numa_);
    std::stable_sort(gpus_.begin(), gpus_.end(), [](const GpuRec &a, const GpuRec &b) {
        return detail::busid_less(a.gpu.pci_busid, b.gpu.pci_busid);
    });
    std::stable_sort(nics_.begin(), nics_.end(), [](const NicRec &a, const NicRec &b) {
        return detail::busid_less(a.nic.pci_busid, b.nic.pci_busid);
    });

    const std::size_t G = gpus_.size();
    detail::NvlinkFigures nv{std::vector<double>(G * G, 0.0), std::vector<double>(G, 0.0)};
    std::set<std::string> switch_targets;
    std::map<std::string, int> index_of;
    for (std::size_t g = 0; g < G; ++g)
        index_of.emplace(gpus_[g].gpu.pci_busid, static_cast<int>(g));
    auto gpu_index = [&](const std::string &busid) {
        auto it = index_of.find(busid);
        return it == index_of.end() ? -1 : it->second;
    };
    for (std::size_t a = 0; a < G; ++a) {
        GpuRec &rec = gpus_[a];
        const double per_link = nvlink_link_gbs(rec.sm);
        for (const auto &link : rec.links) {
            const double gbs = per_link * link.count;
            const int b = link.kind == Target::kSwitch || link.kind == Target::kCpu
                              ? -1
                              : gpu_index(link.target);
            // NCCL takes an NVLink peer of unknown class that is no GPU for an NVSwitch.
            const bool to_switch =
                link.kind == Target::kSwitch || (link.kind == Target::kUnknown && b < 0);
            rec.gpu.nvlink_gbs += gbs;
            if (to_switch) {
                nv.fabric[a] += gbs;
                switch_targets.insert(link.target);
            } else if (b >= 0 && static_cast<std::size_t>(b) != a) {
                nv.direct[a * G + static_cast<std::size_t>(b)] += gbs;
            }
        }
    }
    t.nvswitches = static_cast<int>(switch_targets.size()) + pci_nvswitches_;

    std::vector<int> gpu_node, nic_node;
    for (auto &g : gpus_) {
        gpu_node.push_back(g.node);
        t.gpus.push_back(std::move(g.gpu));
    }
    for (auto &n : nics_) {
        nic_node.push_back(n.node);
        t.nics.push_back(std::move(n.nic));
    }
    detail::fill_link_matrices(
        t, nv,
        [&](int a, int b) {
            return detail::pcie_route(tree_, gpu_node[static_cast<std::size_t>(a)],
                                      gpu_node[static_cast<std::size_t>(b)], kNcclSwitchLevels);
        },
        [&](int g, int n) {
            return detail::pcie_route(tree_, gpu_node[static_cast<std::size_t>(g)],
                                      nic_node[static_cast<std::size_t>(n)], kNcclSwitchLevels);
        });
    return t;
}

}  // namespace

Parsed<NodeTopology> parse_nccl_topo(std::string_view xml, std::string_view source) {
    auto doc = xml::read_document(xml, source);
    if (!doc)
        return doc.error();
    const xmlNode *root = xmlDocGetRootElement(doc.value().get());
    if (xml::name(root) != "system")
        return InputError{"root element", std::string(xml::name(root)), "<system> (NCCL topology)",
                          std::string(source), xml::line(root)};
    Reader reader(source);
    if (auto err = reader.read_system(root))
        return *err;
    NodeTopology t = std::move(reader).finish();
    t.source = std::string(source);
    t.format = "nccl-xml";
    return t;
}

Parsed<NodeTopology> load_nccl_topo(const std::string &path) {
    auto text = read_text_file(path);
    if (!text)
        return text.error();
    return parse_nccl_topo(text.value(), path);
}

}  // namespace slurm_ai
