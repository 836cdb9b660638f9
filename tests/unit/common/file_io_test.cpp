// write_output_file: a command's output file, replaced whole where there is a file to
// replace, written in place where there is none (a device, a pipe).
// write_text_file_atomically: links at the file's name or its temporary name not followed.
// read_text_file: bounded by its limit, also on a file without an end.
// remove_beneath: a tree removed without following a link in it; another user's entry left.
// append_to_file: a log's lines appended whole, its directories made; errors name the path.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "scratch_dir.hpp"
#include "slurm_ai/common/file_io.hpp"

using namespace slurm_ai;
namespace fs = std::filesystem;

namespace {

std::string text(const fs::path &p) {
    auto t = read_text_file(p.string());
    REQUIRE(t.ok());
    return t.value();
}

}  // namespace

TEST_CASE("a command's output file: replaced whole, through its links, a device in place",
          "[file_io]") {
    const test::ScratchDir scratch("output");
    const fs::path dir = scratch.path;

    // A new file, then the same file replaced: the mode it had stays.
    const fs::path out = dir / "out.conf";
    write_output_file(out.string(), "one\n");
    CHECK(text(out) == "one\n");
    const auto mode = fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read;
    fs::permissions(out, mode);
    write_output_file(out.string(), "two\n");
    CHECK(text(out) == "two\n");
    CHECK((fs::status(out).permissions() & fs::perms::all) == mode);

    // Through a link: the file it names is replaced, and the link stays a link.
    fs::create_symlink(out, dir / "link.conf");
    write_output_file((dir / "link.conf").string(), "three\n");
    CHECK(fs::is_symlink(fs::symlink_status(dir / "link.conf")));
    CHECK(text(out) == "three\n");

    // A link to a file not there yet: the file is made where it points.
    fs::create_symlink(dir / "later.conf", dir / "dangling");
    write_output_file((dir / "dangling").string(), "four\n");
    CHECK(fs::is_symlink(fs::symlink_status(dir / "dangling")));
    CHECK(text(dir / "later.conf") == "four\n");

    // Not a file (/dev/null, through a link in the scratch directory, as /dev/stdout is a
    // link): written in place; the link and the device are as they were.
    fs::create_symlink("/dev/null", dir / "null");
    write_output_file((dir / "null").string(), "five\n");
    CHECK(fs::is_symlink(fs::symlink_status(dir / "null")));
    CHECK(fs::is_character_file(fs::status("/dev/null")));

    // Nothing else was left in the directory (no temporary file).
    int entries = 0;
    for ([[maybe_unused]] const auto &e : fs::directory_iterator(dir))
        ++entries;
    CHECK(entries == 5);

    // Where it cannot be written: an error naming the file.
    CHECK_THROWS_WITH(write_output_file((dir / "no" / "x.json").string(), "x"),
                      Catch::Contains("no/x.json"));
}

TEST_CASE("a state file is written past links planted at its name and its temporary name",
          "[file_io]") {
    const test::ScratchDir scratch("atomic");
    const fs::path dir = scratch.path;
    const fs::path victim = dir / "victim";
    write_text_file_atomically(victim.string(), "keep\n");

    // A link where the temporary file will be made (its name is the writer's pid, which
    // anyone can see): it is removed, not written through.
    const fs::path state = dir / "view.json";
    char suffix[32];
    std::snprintf(suffix, sizeof suffix, ".tmp.%010ld", static_cast<long>(getpid()));
    fs::create_symlink(victim, state.string() + suffix);
    write_text_file_atomically(state.string(), "one\n", [](int fd) {
        REQUIRE(::fchmod(fd, 0640) == 0);  // prepare works on the file made, by descriptor
    });
    CHECK(text(state) == "one\n");
    CHECK(text(victim) == "keep\n");
    CHECK((fs::status(state).permissions() & fs::perms::all) ==
          (fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read));
    CHECK_FALSE(fs::exists(fs::symlink_status(state.string() + suffix)));

    // A link at the name itself: replaced by the file; what it named stays as it was.
    const fs::path linked = dir / "hostfile";
    fs::create_symlink(victim, linked);
    write_text_file_atomically(linked.string(), "two\n");
    CHECK_FALSE(fs::is_symlink(fs::symlink_status(linked)));
    CHECK(text(linked) == "two\n");
    CHECK(text(victim) == "keep\n");

    // A prepare step that fails leaves neither the file nor its temporary file.
    CHECK_THROWS_WITH(write_text_file_atomically((dir / "never").string(), "x",
                                                 [](int) { throw std::runtime_error("no"); }),
                      "no");
    CHECK_FALSE(fs::exists(dir / "never"));
    CHECK_FALSE(fs::exists(fs::symlink_status((dir / "never").string() + suffix)));
}

TEST_CASE("appends add to the end, make the directories, and name the path they fail on",
          "[file_io]") {
    const test::ScratchDir scratch("append");
    const fs::path log = scratch.path / "logs" / "deeper" / "run.log";
    CHECK_FALSE(append_to_file(log.string(), "one\n"));
    CHECK_FALSE(append_to_file(log.string(), "two\n"));
    CHECK(text(log) == "one\ntwo\n");
    CHECK((fs::status(log).permissions() & fs::perms::others_write) == fs::perms::none);

    // Under a regular file there is no directory to make: the error names the path.
    const fs::path under_file = log / "x.log";
    const auto err = append_to_file(under_file.string(), "three\n");
    REQUIRE(err);
    CHECK_THAT(*err, Catch::StartsWith(under_file.string() + ": "));
    CHECK(text(log) == "one\ntwo\n");  // nothing written anywhere else
}

TEST_CASE("a file read stops at its limit, also where the file has no end", "[file_io]") {
    // /dev/zero never ends: the read is refused at the limit, not after the memory is full.
    auto endless = read_text_file("/dev/zero", 1u << 20, "--topology");
    REQUIRE_FALSE(endless.ok());
    CHECK_THAT(endless.error().message(), Catch::Contains("--topology") &&
                                              Catch::Contains("/dev/zero") &&
                                              Catch::Contains("at most 1 MiB"));
    const test::ScratchDir scratch("read");
    const fs::path exact = scratch.path / "exact";
    write_text_file_atomically(exact.string(), std::string(1u << 20, 'a'));
    auto whole = read_text_file(exact.string(), 1u << 20);
    REQUIRE(whole.ok());
    CHECK(whole->size() == (1u << 20));  // a file of exactly the limit is read whole
    const fs::path over = scratch.path / "over";
    write_text_file_atomically(over.string(), std::string((1u << 20) + 1, 'a'));
    CHECK_FALSE(read_text_file(over.string(), 1u << 20).ok());
}

TEST_CASE("a removal beneath a directory follows no link in the tree", "[file_io]") {
    const test::ScratchDir scratch("remove"), elsewhere("remove-target");
    std::ofstream(elsewhere.path / "precious") << "keep";
    fs::create_directories(elsewhere.path / "dir");
    std::ofstream(elsewhere.path / "dir" / "inside") << "keep";
    const fs::path top = scratch.path / "step-1";
    fs::create_directories(top / "sub" / "deeper");
    std::ofstream(top / "sub" / "deeper" / "w.pt") << "w";
    std::ofstream(top / "state.json") << "{}";
    fs::create_directory_symlink(elsewhere.path / "dir", top / "dir-link");
    fs::create_symlink(elsewhere.path / "precious", top / "sub" / "file-link");
    const std::string dir = scratch.path.string();

    // A link on the way to the entry named stops the removal there.
    const std::error_code stopped = remove_beneath(dir, "step-1/dir-link/inside");
    CHECK((stopped == std::errc::not_a_directory ||
           stopped == std::errc::too_many_symbolic_link_levels));
    CHECK(fs::exists(elsewhere.path / "dir" / "inside"));

    CHECK_FALSE(remove_beneath(dir, "step-1/sub/deeper/w.pt"));
    CHECK_FALSE(fs::exists(top / "sub" / "deeper" / "w.pt"));
    CHECK_FALSE(remove_beneath(dir, "step-1"));
    CHECK_FALSE(fs::exists(fs::symlink_status(top)));
    CHECK(fs::exists(elsewhere.path / "precious"));
    CHECK(fs::exists(elsewhere.path / "dir" / "inside"));

    // A link named itself is removed, not what it names; nothing there is no error.
    fs::create_directory_symlink(elsewhere.path / "dir", scratch.path / "step-2");
    CHECK_FALSE(remove_beneath(dir, "step-2"));
    CHECK_FALSE(fs::exists(fs::symlink_status(scratch.path / "step-2")));
    CHECK(fs::exists(elsewhere.path / "dir" / "inside"));
    CHECK_FALSE(remove_beneath(dir, "step-2"));
    CHECK_FALSE(remove_beneath((scratch.path / "absent").string(), "x"));

    // Names that would leave the directory are refused.
    for (const char *bad : {"", "..", "a/../b", "./x", "a//b", "x/"})
        CHECK(remove_beneath(dir, bad) == std::errc::invalid_argument);
}

TEST_CASE("a removal for a user leaves what another uid owns", "[file_io]") {
    const test::ScratchDir scratch("remove-owner");
    const fs::path mine = scratch.path / "mine";
    fs::create_directories(mine);
    std::ofstream(mine / "w.pt") << "w";
    const std::uint32_t me = ::geteuid(), other = me + 1;
    CHECK(remove_beneath(scratch.path.string(), "mine", other) == not_owner_error());
    CHECK(fs::exists(mine / "w.pt"));
    CHECK_FALSE(remove_beneath(scratch.path.string(), "mine", me));
    CHECK_FALSE(fs::exists(mine));
}

TEST_CASE("a removal stops at 256 directories deep", "[file_io]") {
    const test::ScratchDir scratch("remove-deep");
    fs::path p = scratch.path / "d";
    for (int i = 0; i < 257; ++i)
        p /= "d";
    fs::create_directories(p);
    CHECK(remove_beneath(scratch.path.string(), "d") == std::errc::too_many_symbolic_link_levels);
    CHECK(fs::exists(p));
    CHECK_FALSE(remove_beneath((scratch.path / "d" / "d").string(), "d"));
    CHECK_FALSE(remove_beneath(scratch.path.string(), "d"));
    CHECK(fs::is_empty(scratch.path));
}
