#include "extender/wire/object_json.h"

#include <gtest/gtest.h>

#include <string>

namespace extender::wire {
namespace {

TEST(ObjectJson, LeavesOutManagedFieldsOfEachMetadataAlone) {
  struct Row {
    const char* what;
    std::string text;
    std::string parsed;  // what parse_object_json gives, as nlohmann's compact dump
  };
  const Row rows[] = {
      {"a pod's own", R"({"metadata":{"name":"p","managedFields":[{"manager":"m","fieldsV1":{"f:spec":{}}}]},"spec":{}})",
       R"({"metadata":{"name":"p"},"spec":{}})"},
      {"after the fields that follow it too", R"({"metadata":{"managedFields":[],"uid":"u","labels":{"a":"b"}}})",
       R"({"metadata":{"labels":{"a":"b"},"uid":"u"}})"},
      {"a watch event's object", R"({"type":"ADDED","object":{"metadata":{"managedFields":[1],"name":"n"}}})",
       R"({"object":{"metadata":{"name":"n"}},"type":"ADDED"})"},
      {"every item of a list",
       R"({"items":[{"metadata":{"managedFields":[1],"name":"a"}},{"metadata":{"name":"b","managedFields":{}}}],"metadata":{"resourceVersion":"7"}})",
       R"({"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}],"metadata":{"resourceVersion":"7"}})"},
      {"a template's metadata", R"({"spec":{"template":{"metadata":{"managedFields":[],"name":"t"}}}})",
       R"({"spec":{"template":{"metadata":{"name":"t"}}}})"},
      {"kept outside metadata", R"({"spec":{"managedFields":1},"managedFields":2})",
       R"({"managedFields":2,"spec":{"managedFields":1}})"},
      {"kept deeper inside metadata", R"({"metadata":{"annotations":{"managedFields":"x"}}})",
       R"({"metadata":{"annotations":{"managedFields":"x"}}})"},
      {"kept in a sibling after metadata", R"({"metadata":{"name":"a"},"status":{"managedFields":3}})",
       R"({"metadata":{"name":"a"},"status":{"managedFields":3}})"},
      {"a metadata that is not an object", R"({"metadata":"x","managedFields":1})", R"({"managedFields":1,"metadata":"x"})"},
  };
  for (const auto& row : rows) {
    const nlohmann::json got = parse_object_json(row.text);
    ASSERT_FALSE(got.is_discarded()) << row.what;
    EXPECT_EQ(got.dump(), row.parsed) << row.what;
  }
}

TEST(ObjectJson, TextThatIsNotJsonIsDiscarded) {
  for (const char* text : {"", "{", R"({"metadata":{"managedFields":[}})", "[1,]", "nul"}) {
    EXPECT_TRUE(parse_object_json(text).is_discarded()) << text;
  }
}

}  // namespace
}  // namespace extender::wire
