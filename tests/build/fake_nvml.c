/* A stand-in libnvidia-ml.so.1 for ai_topo_discover_draw.sh: the few NVML calls that
 * ai-topo discover makes (gpu_fabric_nvml.cpp), answering as a GB200 tray of four GPUs
 * would. Its structures are NVML's (nvml.h, API 12) as this project's reader declares
 * them, so it checks the reader's logic (states, status, UUID text, health bits, a GPU
 * that disagrees), not NVML's ABI: that needs a real GPU.
 *
 * FAKE_NVML selects the tray: "gb200" (every GPU in cluster 0xa1..., clique 7, healthy),
 * "degraded" (GPU 3's fabric bandwidth degraded), "registering" (GPU 1 In Progress),
 * "old" (no nvmlDeviceGetGpuFabricInfoV: a driver before R550), "noinit" (nvmlInit fails). */
#include <stdlib.h>
#include <string.h>

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
struct fabric_v1 {
    unsigned char uuid[16];
    nvmlReturn_t status;
    unsigned int clique;
    unsigned char state;
};
struct fabric_v2 {
    unsigned int version;
    unsigned char uuid[16];
    nvmlReturn_t status;
    unsigned int clique;
    unsigned char state;
    unsigned int health_mask;
};
struct pci_info {
    char bus_legacy[16];
    unsigned int domain, bus, device, id, subsystem;
    char bus_id[32];
};

static const char *mode(void) {
    const char *m = getenv("FAKE_NVML");
    return m ? m : "gb200";
}

nvmlReturn_t nvmlInit_v2(void) { return strcmp(mode(), "noinit") == 0 ? 9 : 0; }
nvmlReturn_t nvmlShutdown(void) { return 0; }
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *n) { *n = 4; return 0; }
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d) {
    *d = (nvmlDevice_t)(size_t)(i + 1);
    return 0;
}
static unsigned index_of(nvmlDevice_t d) { return (unsigned)(size_t)d - 1; }
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *out, unsigned int n) {
    (void)d;
    strncpy(out, "NVIDIA GB200", n);
    return 0;
}
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, struct pci_info *p) {
    static const char *bus[] = {"00000008:01:00.0", "00000009:01:00.0", "00000018:01:00.0",
                                "00000019:01:00.0"};
    memset(p, 0, sizeof *p);
    strcpy(p->bus_id, bus[index_of(d)]);
    return 0;
}
static void fill(nvmlDevice_t d, unsigned char *uuid, nvmlReturn_t *status, unsigned *clique,
                 unsigned char *state) {
    for (int k = 0; k < 16; ++k)
        uuid[k] = (unsigned char)(k == 0 ? 0xa1 : k == 15 ? 0x07 : 0);
    *status = 0;
    *clique = 7;
    *state = 3; /* Completed */
    if (strcmp(mode(), "registering") == 0 && index_of(d) == 1) {
        *state = 2; /* In Progress */
        *status = 3;
    }
}
nvmlReturn_t nvmlDeviceGetGpuFabricInfo(nvmlDevice_t d, struct fabric_v1 *f) {
    fill(d, f->uuid, &f->status, &f->clique, &f->state);
    return 0;
}
nvmlReturn_t nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t d, struct fabric_v2 *f) {
    if (strcmp(mode(), "old") == 0)
        return 13; /* as if the symbol answered "function not found" */
    if (f->version != (sizeof(struct fabric_v2) | (2u << 24)))
        return 25; /* NVML_ERROR_ARGUMENT_VERSION_MISMATCH */
    fill(d, f->uuid, &f->status, &f->clique, &f->state);
    f->health_mask = strcmp(mode(), "degraded") == 0 && index_of(d) == 3 ? 1 : 2;
    return 0;
}
nvmlReturn_t nvmlSystemGetDriverVersion(char *out, unsigned int n) {
    strncpy(out, "580.173.02", n);
    return 0;
}
const char *nvmlErrorString(nvmlReturn_t r) {
    return r == 3 ? "Not Supported" : r == 9 ? "Driver Not Loaded" : "Unknown Error";
}
