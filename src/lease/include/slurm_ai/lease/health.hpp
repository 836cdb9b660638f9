// Health events from the file an admin names (HealthEventFile): the NVIDIA driver's Xid
// lines, as the kernel log writes them ("NVRM: Xid (PCI:0000:3b:00): 79, pid=..., GPU has
// fallen off the bus."), whether forwarded there by rsyslog, by DCGM or written by hand.
// The agent reads what is appended and reports the Xids that stop a GPU or the node (a
// lost GPU, uncorrectable memory errors, an NVLink or GSP failure); those an application
// causes (13, 31, 43, ...) are left to the job.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace slurm_ai::lease {

struct HealthEvent {
    int xid = 0;
    std::string device;  // "PCI:0000:3b:00"
    std::string text;    // the line from "Xid" on
    bool operator==(const HealthEvent &) const = default;
};

// The Xids reported: 48 (double-bit ECC), 61, 62 (internal microcontroller halt), 64 (ECC
// page retirement failure), 74 (NVLink error), 79 (GPU fallen off the bus), 95
// (uncontained ECC error), 119, 120 (GSP error), 140 (unrecovered ECC error).
const std::vector<int> &fatal_xids();

// The event of a line, when it is an Xid line of fatal_xids(); nullopt otherwise.
std::optional<HealthEvent> fatal_xid(std::string_view line);

// What was appended to a file since the last look. A file that is replaced (rotated) or
// shrinks (truncated) is read from its start; a missing file is no error (not written
// yet). The first look starts at the end: events from before the agent started are old.
class FileTail {
  public:
    explicit FileTail(std::string path);
    std::vector<std::string> new_lines();
    const std::string &path() const { return path_; }

  private:
    std::string path_;
    ino_t inode_ = 0;
    off_t offset_ = -1;  // -1: not looked at yet
    std::string partial_;
};

}  // namespace slurm_ai::lease
