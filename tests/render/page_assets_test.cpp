// The pages' assets (src/render/page) as the build embedded them: each text equals its file (a
// stale embedding would draw an old page), every asset file there is embedded, and the templates
// fill as the pages need. NSEL_PAGE_DIR, the folder, comes from cmake/NselPageAssets.cmake.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

#include "render/html_page.hpp"
#include "render/page/assets.hpp"

namespace {

namespace fs = std::filesystem;

const std::map<std::string, std::string_view>& embedded() {
  static const std::map<std::string, std::string_view> assets = {
      {"page.css", nsel::page_assets::page_css},
      {"diff.css", nsel::page_assets::diff_css},
      {"report.js", nsel::page_assets::report_js},
      {"diff.js", nsel::page_assets::diff_js},
      {"page.html", nsel::page_assets::page_html},
      {"timeline.html", nsel::page_assets::timeline_html},
  };
  return assets;
}

std::string file_text(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(PageAssets, EachEmbeddedTextEqualsItsFile) {
  for (const auto& [name, text] : embedded()) {
    const fs::path file = fs::path(NSEL_PAGE_DIR) / name;
    ASSERT_TRUE(fs::is_regular_file(file)) << file;
    const std::string on_disk = file_text(file);
    EXPECT_FALSE(on_disk.empty()) << file;
    // Not EXPECT_EQ: a difference would print both whole files.
    std::size_t differs = 0;
    while (differs < text.size() && differs < on_disk.size() && text[differs] == on_disk[differs]) {
      ++differs;
    }
    EXPECT_TRUE(text == on_disk) << file << ": the embedded text (" << text.size()
                                 << " bytes) differs from the file (" << on_disk.size()
                                 << " bytes) from byte " << differs;
  }
}

TEST(PageAssets, EveryStyleSheetScriptAndTemplateOfTheFolderIsEmbedded) {
  std::set<std::string> files;
  for (const fs::directory_entry& entry : fs::directory_iterator(NSEL_PAGE_DIR)) {
    const std::string extension = entry.path().extension().string();
    if (extension == ".css" || extension == ".js" || extension == ".html") {
      files.insert(entry.path().filename().string());
    }
  }
  std::set<std::string> names;
  for (const auto& [name, text] : embedded()) names.insert(name);
  EXPECT_EQ(files, names) << "each asset is listed in NSEL_PAGE_ASSETS "
                             "(cmake/NselPageAssets.cmake), in render/page/assets.hpp and here";
}

TEST(PageAssets, FillReplacesEveryPlaceholderAndNeverReadsAValueAsOne) {
  EXPECT_EQ(nsel::html_page::fill("<p>{{a}} and {{b}}, {{a}}</p>", {{"a", "{{b}}"}, {"b", "2"}}),
            "<p>{{b}} and 2, {{b}}</p>");
  EXPECT_EQ(nsel::html_page::fill("no placeholder", {}), "no placeholder");
  EXPECT_EQ(nsel::html_page::fill("{{a}}", {{"a", ""}}), "");
}

TEST(PageAssets, FillRefusesAPlaceholderWithoutAValueAndAValueWithoutItsPlaceholder) {
  EXPECT_THROW(nsel::html_page::fill("{{a}} {{b}}", {{"a", "1"}}), std::logic_error);
  EXPECT_THROW(nsel::html_page::fill("{{a}}", {{"a", "1"}, {"c", "3"}}), std::logic_error);
  EXPECT_THROW(nsel::html_page::fill("{{a", {{"a", "1"}}), std::logic_error);
}

TEST(PageAssets, APageHoldsTheSharedStyleSheetThenItsOwnBodyAndScript) {
  const std::string page = nsel::html_page::page("nsel x", ".own{}\n", "<p>body</p>\n", "run();\n");
  EXPECT_EQ(page,
            "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8><title>nsel x</title>"
            "<style>\n" +
                std::string(nsel::page_assets::page_css) +
                ".own{}\n</style></head><body>\n<p>body</p>\n<script>\nrun();\n</script>\n"
                "</body></html>\n");
}

}  // namespace
