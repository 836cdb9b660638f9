// write_output_file: a command's output file, replaced whole where there is a file to
// replace, written in place where there is none (a device, a pipe).
#include <filesystem>
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
