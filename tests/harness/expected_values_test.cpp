// The oracle's values of a check, read on the host: what a refusal says about the file.
#include "harness/expected_values.hpp"

#include <catch2/catch.hpp>

#include "test_support.hpp"

using namespace cuopt;

TEST_CASE(
    "an expected file that no longer matches its check is refused naming it quoted on one line") {
    test::scratch_folder dir;
    const std::vector<float> values(8, 1.0f);
    dir.write_values("e\nvil.bin", values);
    kernel_arg arg;
    arg.name = "y";
    arg.type = dtype::f32;
    arg.count = 8;
    arg.is_buffer = true;
    arg.check = output_check_spec{dir / "e\nvil.bin", std::string(64, '0'), 0, 0, 0};
    CHECK_THROWS_WITH(expected_values_for(arg),
                      Catch::Contains("e\\nvil.bin' has SHA-256") && !Catch::Contains("\n"));
    arg.count = 9;
    CHECK_THROWS_WITH(expected_values_for(arg),
                      Catch::Contains("e\\nvil.bin' holds 32 bytes") && !Catch::Contains("\n"));
    arg.check->expected_file = dir / "gone\n.bin";
    CHECK_THROWS_WITH(expected_values_for(arg), Catch::Contains("cannot read expected file '") &&
                                                    Catch::Contains("gone\\n.bin'") &&
                                                    !Catch::Contains("\n"));
    forget_expected_values();
}
