// The pure text handling behind `kiln datasets install`'s fetching: the
// system's apt sources (one-line and deb822) to deb-src lines, and the choice
// of source versions from `apt-cache showsrc`.
#include <gtest/gtest.h>

#include "programs/datasets/debian/apt_sources.h"
#include "programs/datasets/debian/source_versions.h"

namespace kiln::debian {
namespace {

TEST(AptSourcesTest, OneLineDebLinesBecomeDebSrcLines) {
  auto parsed = parseOneLineSources(
      "# the archive\n"
      "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] "
      "http://deb.debian.org/debian bookworm main contrib # trailing comment\n"
      "deb-src http://deb.debian.org/debian bookworm main\n"
      "\n"
      "deb\thttp://security.debian.org/debian-security  bookworm-security main\n"
      "deb file:/srv/flat ./\n");
  ASSERT_TRUE(parsed.ok()) << parsed.status().toString();
  ASSERT_EQ(parsed->size(), 3u);
  EXPECT_EQ((*parsed)[0].options, "signed-by=/usr/share/keyrings/debian-archive-keyring.gpg");
  EXPECT_EQ((*parsed)[0].components, (std::vector<std::string>{"main", "contrib"}));
  EXPECT_EQ((*parsed)[1].suite, "bookworm-security");
  EXPECT_TRUE((*parsed)[2].components.empty());
  EXPECT_EQ(debSrcList(*parsed),
            "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] "
            "http://deb.debian.org/debian bookworm main contrib\n"
            "deb-src http://security.debian.org/debian-security bookworm-security main\n"
            "deb-src file:/srv/flat ./\n");
}

TEST(AptSourcesTest, OneLineErrorsNameTheLine) {
  auto unclosed = parseOneLineSources("\ndeb [arch=amd64 http://x bookworm main\n");
  ASSERT_FALSE(unclosed.ok());
  EXPECT_NE(unclosed.status().message().find("line 2"), std::string::npos);
  EXPECT_FALSE(parseOneLineSources("deb http://x\n").ok());
  auto noComponents = parseOneLineSources("deb http://x bookworm\n");
  ASSERT_FALSE(noComponents.ok());
  EXPECT_NE(noComponents.status().message().find("components"), std::string::npos);
}

TEST(AptSourcesTest, Deb822StanzasGiveOneRepositoryPerUriAndSuite) {
  auto parsed = parseDeb822Sources(
      "Types: deb deb-src\n"
      "# http://snapshot.debian.org/archive/debian/20250520T000000Z\n"
      "URIs: http://deb.debian.org/debian\n"
      "Suites: bookworm bookworm-updates\n"
      "Components: main\n"
      "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n"
      "\n"
      "Types: deb\n"
      "URIs: http://disabled.example\n"
      "Suites: x\n"
      "Components: main\n"
      "Enabled: no\n"
      "\n"
      "Types: deb-src\n"
      "URIs: http://only-sources.example\n"
      "Suites: x\n"
      "Components: main\n"
      "\n"
      "Types: deb\n"
      "URIs: http://embedded-key.example\n"
      "Suites: y\n"
      "Components: main non-free\n"
      "Signed-By:\n"
      " -----BEGIN PGP PUBLIC KEY BLOCK-----\n"
      " .\n"
      " mQINBF...\n");
  ASSERT_TRUE(parsed.ok()) << parsed.status().toString();
  ASSERT_EQ(parsed->size(), 3u);
  EXPECT_EQ(debSrcList(*parsed),
            "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] "
            "http://deb.debian.org/debian bookworm main\n"
            "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] "
            "http://deb.debian.org/debian bookworm-updates main\n"
            "deb-src http://embedded-key.example y main non-free\n");
}

TEST(AptSourcesTest, Deb822StanzaWithoutSuitesIsAnError) {
  auto parsed = parseDeb822Sources("\n\nTypes: deb\nURIs: http://x\nComponents: main\n");
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("line 3"), std::string::npos)
      << parsed.status().message();
}

TEST(AptSourcesTest, DuplicatesAreWrittenOnce) {
  AptRepository main{"", "http://x", "bookworm", {"main"}};
  EXPECT_EQ(debSrcList({main, main}), "deb-src http://x bookworm main\n");
}

TEST(SourceVersionsTest, DebianOrder) {
  EXPECT_LT(compareDebianVersions("1.0~rc1-1", "1.0-1"), 0);
  EXPECT_LT(compareDebianVersions("1.0-1", "1.0-1+deb12u1"), 0);
  EXPECT_LT(compareDebianVersions("2.5.0-1+deb12u2", "2.5.0-1+deb12u5"), 0);
  EXPECT_LT(compareDebianVersions("1.9-1", "1.10-1"), 0);
  EXPECT_LT(compareDebianVersions("9.9-1", "1:0.1-1"), 0);  // the epoch wins
  EXPECT_EQ(compareDebianVersions("1.02-1", "1.2-1"), 0);   // numbers, not strings
  EXPECT_LT(compareDebianVersions("1.0a-1", "1.0+-1"), 0);  // letters before other characters
  EXPECT_GT(compareDebianVersions("1.0.1", "1.0"), 0);
}

TEST(SourceVersionsTest, ShowsrcVersionsOfThePackageNewestFirst) {
  const char* showsrc =
      "Package: expat\n"
      "Binary: libexpat1-dev, libexpat1, expat\n"
      "Version: 2.5.0-1+deb12u2\n"
      "\n"
      "Package: expat-other\n"
      "Binary: expat\n"
      "Version: 9.0-1\n"
      "\n"
      "Package: expat\n"
      "Version: 2.5.0-1+deb12u5\n"
      "\n"
      "Package: expat\n"
      "Version: 2.5.0-1+deb12u2\n";
  EXPECT_EQ(sourceVersionsNewestFirst(showsrc, "expat"),
            (std::vector<std::string>{"2.5.0-1+deb12u5", "2.5.0-1+deb12u2"}));
  EXPECT_TRUE(sourceVersionsNewestFirst("", "expat").empty());
  EXPECT_TRUE(sourceVersionsNewestFirst("garbage\nPackage:\n\n", "expat").empty());
}

}  // namespace
}  // namespace kiln::debian
