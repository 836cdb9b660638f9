#include "slurm_ai/placement/failure_class.hpp"

#include <array>
#include <cctype>
#include <string>

#include "slurm_ai/common/enum_names.hpp"
#include "slurm_ai/common/text_scan.hpp"

namespace slurm_ai {

std::string_view to_string(FailureClass c) {
    static constexpr std::string_view kNames[] = {"gpu",     "network",  "power",
                                                  "cooling", "software", "other"};
    return enum_name(c, kNames);
}

FailureClass classify_failure(std::string_view text) {
    const std::string t = text::lower(text);
    // A keyword counts where a word starts: "nic" in "NIC lost" or "nic0", not in "panic";
    // "roce" in "RoCE", not in "process".
    auto any = [&](std::initializer_list<std::string_view> words) {
        for (auto w : words)
            for (auto at = t.find(w); at != std::string::npos; at = t.find(w, at + 1))
                if (at == 0 || !std::isalnum(static_cast<unsigned char>(t[at - 1])))
                    return true;
        return false;
    };
    if (any({"gpu", "xid", "ecc", "nvlink", "nvidia", "dcgm"}))
        return FailureClass::kGpu;
    if (any({"nic", "hca", "infiniband", "ib port", "link down", "cable", "optical",
             "transceiver", "rdma", "roce", "efa"}))
        return FailureClass::kNetwork;
    if (any({"power", "psu"}))
        return FailureClass::kPower;
    if (any({"fan", "temperature", "thermal", "overheat"}))
        return FailureClass::kCooling;
    if (any({"kernel", "panic", "file system", "filesystem", "fs readonly", "operating system",
             "software", "firmware", "driver", "kill task", "epilog", "prolog"}))
        return FailureClass::kSoftware;
    return FailureClass::kOther;
}

}  // namespace slurm_ai
