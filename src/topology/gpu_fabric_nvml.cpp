// This node's GPU fabric info, live (see gpu_fabric.hpp): libnvidia-ml through dlopen, so
// that nothing of the suite links against it, else nvidia-smi's XML.
//
// The NVML declarations below are the few this file calls, as NVML's header gives them
// (nvml.h, API version 12): the structure of nvmlDeviceGetGpuFabricInfo (R535+), and of
// nvmlDeviceGetGpuFabricInfoV with version 2 (R550+), which adds a health mask whose bits
// 0-1 say whether the fabric bandwidth is degraded (1: true, 2: false, 0: not supported).
#include <dlfcn.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "slurm_ai/topology/gpu_fabric.hpp"

namespace slurm_ai {
namespace {

using nvmlReturn = int;
using nvmlDevice = struct nvmlDevice_st *;
constexpr nvmlReturn kNvmlSuccess = 0;
constexpr std::size_t kUuidLength = 16;

struct NvmlFabricInfo {  // nvmlGpuFabricInfo_t
    unsigned char cluster_uuid[kUuidLength];
    nvmlReturn status;
    unsigned int clique_id;
    unsigned char state;
};
struct NvmlFabricInfoV2 {  // nvmlGpuFabricInfo_v2_t
    unsigned int version;
    unsigned char cluster_uuid[kUuidLength];
    nvmlReturn status;
    unsigned int clique_id;
    unsigned char state;
    unsigned int health_mask;
};
constexpr unsigned int kFabricInfoV2 = sizeof(NvmlFabricInfoV2) | (2u << 24);

struct PciInfo {  // nvmlPciInfo_t (v3)
    char bus_id_legacy[16];
    unsigned int domain, bus, device, pci_device_id, pci_subsystem_id;
    char bus_id[32];
};

struct DlClose {
    void operator()(void *h) const { dlclose(h); }
};

// libnvidia-ml's functions this file calls, resolved by name.
struct Nvml {
    std::unique_ptr<void, DlClose> lib;
    nvmlReturn (*init)() = nullptr;
    nvmlReturn (*shutdown)() = nullptr;
    nvmlReturn (*count)(unsigned int *) = nullptr;
    nvmlReturn (*handle)(unsigned int, nvmlDevice *) = nullptr;
    nvmlReturn (*name)(nvmlDevice, char *, unsigned int) = nullptr;
    nvmlReturn (*pci)(nvmlDevice, PciInfo *) = nullptr;
    nvmlReturn (*fabric)(nvmlDevice, NvmlFabricInfo *) = nullptr;
    nvmlReturn (*fabric_v)(nvmlDevice, NvmlFabricInfoV2 *) = nullptr;  // may be absent
    nvmlReturn (*driver)(char *, unsigned int) = nullptr;
    const char *(*error)(nvmlReturn) = nullptr;
};

template <class F>
bool resolve(void *lib, const char *symbol, F &out) {
    out = reinterpret_cast<F>(dlsym(lib, symbol));
    return out != nullptr;
}

// Loads libnvidia-ml; an empty optional with `why` set when it is absent or too old.
std::optional<Nvml> load_nvml(std::string &why) {
    Nvml n;
    n.lib.reset(dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL));
    if (!n.lib) {
        why = "libnvidia-ml.so.1 does not load";
        return std::nullopt;
    }
    void *l = n.lib.get();
    if (!resolve(l, "nvmlInit_v2", n.init) || !resolve(l, "nvmlShutdown", n.shutdown) ||
        !resolve(l, "nvmlDeviceGetCount_v2", n.count) ||
        !resolve(l, "nvmlDeviceGetHandleByIndex_v2", n.handle) ||
        !resolve(l, "nvmlDeviceGetName", n.name) ||
        !resolve(l, "nvmlDeviceGetPciInfo_v3", n.pci) ||
        !resolve(l, "nvmlDeviceGetGpuFabricInfo", n.fabric) ||
        !resolve(l, "nvmlSystemGetDriverVersion", n.driver) ||
        !resolve(l, "nvmlErrorString", n.error)) {
        why = "libnvidia-ml.so.1 lacks nvmlDeviceGetGpuFabricInfo (a driver before R535)";
        return std::nullopt;
    }
    resolve(l, "nvmlDeviceGetGpuFabricInfoV", n.fabric_v);
    return n;
}

std::string uuid_text(const unsigned char (&u)[kUuidLength]) {
    std::string hex;
    for (unsigned char c : u)
        hex += fmt::format("{:02x}", c);
    return fmt::format("{}-{}-{}-{}-{}", hex.substr(0, 8), hex.substr(8, 4), hex.substr(12, 4),
                       hex.substr(16, 4), hex.substr(20));
}

const char *state_text(unsigned char s) {
    static constexpr const char *kStates[] = {"Not Supported", "Not Started", "In Progress",
                                              "Completed"};
    return s < 4 ? kStates[s] : "Unknown";
}

// One GPU's fabric info through NVML.
GpuFabricInfo nvml_gpu(const Nvml &n, nvmlDevice d) {
    GpuFabricInfo g;
    std::array<char, 96> name{};
    if (n.name(d, name.data(), static_cast<unsigned int>(name.size())) == kNvmlSuccess)
        g.product = name.data();
    PciInfo pci{};
    if (n.pci(d, &pci) == kNvmlSuccess)
        g.bus_id = pci.bus_id;
    NvmlFabricInfoV2 v2{};
    v2.version = kFabricInfoV2;
    if (n.fabric_v && n.fabric_v(d, &v2) == kNvmlSuccess) {
        const unsigned degraded = v2.health_mask & 0x3u;
        g.bandwidth = degraded == 1 ? "Degraded" : degraded == 2 ? "Full" : "";
    } else {
        NvmlFabricInfo v1{};
        if (n.fabric(d, &v1) != kNvmlSuccess) {
            g.state = "Not Supported";
            return g;
        }
        std::memcpy(v2.cluster_uuid, v1.cluster_uuid, kUuidLength);
        v2.status = v1.status;
        v2.clique_id = v1.clique_id;
        v2.state = v1.state;
    }
    g.state = state_text(v2.state);
    if (v2.state == 3) {
        g.status = v2.status == kNvmlSuccess ? "Success" : n.error(v2.status);
        g.cluster_uuid = uuid_text(v2.cluster_uuid);
        g.clique_id = v2.clique_id;
    }
    return g;
}

std::optional<NodeGpuFabric> from_nvml(std::string &why) {
    auto n = load_nvml(why);
    if (!n)
        return std::nullopt;
    if (nvmlReturn rc = n->init(); rc != kNvmlSuccess) {
        why = fmt::format("nvmlInit: {}", n->error(rc));
        return std::nullopt;
    }
    NodeGpuFabric node;
    node.source = "nvml";
    node.format = "nvml";
    std::array<char, 96> driver{};
    if (n->driver(driver.data(), static_cast<unsigned int>(driver.size())) == kNvmlSuccess)
        node.driver = driver.data();
    unsigned int count = 0;
    if (n->count(&count) == kNvmlSuccess)
        for (unsigned int i = 0; i < count; ++i) {
            nvmlDevice d = nullptr;
            if (n->handle(i, &d) == kNvmlSuccess)
                node.gpus.push_back(nvml_gpu(*n, d));
        }
    n->shutdown();
    node.settle();
    return node;
}

// `nvidia-smi -q -x`'s output, or why not.
std::optional<std::string> run_nvidia_smi(std::string &why) {
    std::unique_ptr<FILE, int (*)(FILE *)> p(popen("nvidia-smi -q -x 2>/dev/null", "r"), pclose);
    if (!p) {
        why = "nvidia-smi could not be started";
        return std::nullopt;
    }
    std::string out;
    std::array<char, 65536> buf{};
    for (std::size_t got; (got = fread(buf.data(), 1, buf.size(), p.get())) > 0;)
        out.append(buf.data(), got);
    const int status = pclose(p.release());
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        why = WIFEXITED(status) && WEXITSTATUS(status) == 127
                  ? "nvidia-smi is not on PATH"
                  : fmt::format("nvidia-smi -q -x failed (exit status {})",
                                WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        return std::nullopt;
    }
    return out;
}

}  // namespace

Parsed<NodeGpuFabric> discover_gpu_fabric() {
    std::string nvml_why, smi_why;
    if (auto node = from_nvml(nvml_why))
        return std::move(*node);
    auto xml = run_nvidia_smi(smi_why);
    if (!xml)
        return InputError{"GPU fabric", "",
                          fmt::format("NVML or nvidia-smi ({}; {})", nvml_why, smi_why), "live",
                          0};
    auto node = parse_gpu_fabric(*xml, "nvidia-smi");
    if (node)
        node.value().format = "nvidia-smi-xml";
    return node;
}

}  // namespace slurm_ai
