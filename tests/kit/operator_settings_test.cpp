// The operator's --dataset flag: parsed, made absolute, and checked at
// start-up with an error that names the flag and what is wrong.
#include <kiln/kit/operator_settings.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

namespace kiln {
namespace {

using ::testing::HasSubstr;

TEST(OperatorSettingsTest, ADatasetFlagIsANameAndAnAbsoluteDirectory) {
  auto absolute = parseDatasetFlag("mine=/data/corpus/", "/work");
  ASSERT_TRUE(absolute.ok()) << absolute.status().toString();
  EXPECT_EQ(absolute->name, "mine");
  EXPECT_EQ(absolute->root, std::filesystem::path("/data/corpus/"));
  auto relative = parseDatasetFlag("corpus-v1.2=sub/../dir", "/work");
  ASSERT_TRUE(relative.ok());
  EXPECT_EQ(relative->root, std::filesystem::path("/work/dir"));
  auto equalsInPath = parseDatasetFlag("a=/x=y", "/");
  ASSERT_TRUE(equalsInPath.ok());
  EXPECT_EQ(equalsInPath->root, std::filesystem::path("/x=y"));
}

TEST(OperatorSettingsTest, BadDatasetFlagsSayWhatIsWrong) {
  for (const auto& [value, why] : std::vector<std::pair<std::string, std::string>>{
           {"/data/corpus", "expected NAME=DIR"},
           {"=/data", "the name must be"},
           {"a/b=/data", "the name must be"},
           {"..=/data", "the name must be"},
           {std::string(129, 'n') + "=/data", "the name must be"},
           {"mine=", "no directory"}}) {
    auto parsed = parseDatasetFlag(value, "/work");
    ASSERT_FALSE(parsed.ok()) << value;
    EXPECT_EQ(parsed.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_THAT(parsed.status().message(), HasSubstr("--dataset")) << value;
    EXPECT_THAT(parsed.status().message(), HasSubstr(why)) << value;
  }
}

TEST(OperatorSettingsTest, ADatasetListIsWhitespaceSeparatedFlags) {
  auto none = parseDatasetList("  \t ", "/srv");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  auto two = parseDatasetList(" a=/var/lib/kiln/datasets/a\tb=rel ", "/srv");
  ASSERT_TRUE(two.ok()) << two.status().toString();
  EXPECT_EQ(*two,
            (std::vector<OperatorDataset>{{"a", "/var/lib/kiln/datasets/a"}, {"b", "/srv/rel"}}));
  auto bad = parseDatasetList("a=/x nodir", "/srv");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("KILN_DATASETS"), std::string::npos);
  EXPECT_NE(bad.status().message().find("'nodir'"), std::string::npos) << bad.status().toString();
}

TEST(OperatorSettingsTest, DatasetsAreCheckedAtStartUp) {
  const auto here = std::filesystem::temp_directory_path();
  OperatorSettings settings;
  settings.datasets = {{"a", here}};
  EXPECT_TRUE(checkOperatorSettings(settings).ok());
  settings.datasets.push_back({"a", here});
  EXPECT_THAT(checkOperatorSettings(settings).message(), HasSubstr("'a' is named twice"));
  settings.datasets = {{"b", here / "kiln-no-such-directory-for-this-test"}};
  EXPECT_THAT(checkOperatorSettings(settings).message(), HasSubstr("not a directory"));
}

}  // namespace
}  // namespace kiln
