// Reflector against a scripted fake API server: paged lists, watch streams cut into arbitrary
// pieces, resumption after a cut, bookmarks, 410 in its two forms, expired continue tokens,
// refusals that later clear, oversized and malformed lines, and a rotated token.
#include "extender/kube/reflector.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <set>

#include "support/fake_api_server.h"
#include "support/temp_files.h"

namespace extender::kube {
namespace {

using namespace std::chrono_literals;
using testing::eventually;
using testing::FakeApiServer;
using testing::json;
using testing::WatchDesk;

json object(const std::string& name, int rv, const std::string& note = {}) {
  json o{
      {"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", name}, {"resourceVersion", std::to_string(rv)}}}};
  if (!note.empty()) o["metadata"]["labels"] = {{"note", note}};
  return o;
}

json list_body(std::vector<json> items, const std::string& rv, const std::string& cont = {}) {
  json body{{"apiVersion", "v1"}, {"kind", "NodeList"}, {"metadata", {{"resourceVersion", rv}}}, {"items", items}};
  if (!cont.empty()) body["metadata"]["continue"] = cont;
  return body;
}

std::string name_of(const json& o) { return o.is_object() ? o["metadata"]["name"].get<std::string>() : "?"; }
std::string rv_of(const json& o) { return o.is_object() ? o["metadata"].value("resourceVersion", "") : ""; }

// A sink that keeps a store as an informer would (a list replaces everything, events apply on
// top) and a log of every call.
class RecordingSink : public ReflectorSink {
 public:
  struct Event {
    std::string type;
    json object;
  };

  void begin_list() override {
    std::lock_guard lock(mu_);
    staging_.clear();
    log_.push_back("begin");
  }
  void list_item(const json& o) override {
    std::lock_guard lock(mu_);
    staging_[name_of(o)] = o;
    log_.push_back("item " + name_of(o));
  }
  void end_list() override {
    std::lock_guard lock(mu_);
    objects_ = std::move(staging_);
    staging_.clear();
    log_.push_back("end");
    ++lists_;
  }
  void event(std::string_view type, const json& o) override {
    std::lock_guard lock(mu_);
    events_.push_back({std::string(type), o});
    log_.push_back(std::string(type) + " " + name_of(o) + "@" + rv_of(o));
    if (type == "DELETED") {
      objects_.erase(name_of(o));
    } else {
      objects_[name_of(o)] = o;
    }
  }

  std::map<std::string, json> objects() const {
    std::lock_guard lock(mu_);
    return objects_;
  }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& [n, o] : objects()) out.push_back(n);
    return out;
  }
  std::vector<Event> events() const {
    std::lock_guard lock(mu_);
    return events_;
  }
  std::vector<std::string> event_log() const {
    std::lock_guard lock(mu_);
    std::vector<std::string> out;
    for (const auto& l : log_) {
      if (l != "begin" && l != "end" && l.rfind("item ", 0) != 0) out.push_back(l);
    }
    return out;
  }
  std::vector<std::string> log() const {
    std::lock_guard lock(mu_);
    return log_;
  }
  int lists() const {
    std::lock_guard lock(mu_);
    return lists_;
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, json> staging_;
  std::map<std::string, json> objects_;
  std::vector<Event> events_;
  std::vector<std::string> log_;
  int lists_ = 0;
};

using Handler = FakeApiServer::Handler;

// A reflector for /api/v1/nodes over a fake server whose list and watch answers the test sets.
// Watches go to `desk` unless the test routes them elsewhere.
class Harness {
 public:
  explicit Harness(const std::function<void(ReflectorOptions&)>& tweak = {}, ClusterAccess access = {}) {
    server.route("GET", "/api/v1/nodes", [this](const httplib::Request& req, httplib::Response& res) {
      const bool watch = req.get_param_value("watch") == "1";
      Handler h;
      {
        std::lock_guard lock(mu_);
        h = watch ? watch_ : list_;
      }
      if (h) {
        h(req, res);
      } else if (watch) {
        desk.accept(server, req, res);
      } else {
        FakeApiServer::reply(res, 500, testing::status_body(500, "InternalError", "no list scripted"));
      }
    });
    access.server = server.url();
    auto c = ApiClient::create(access, {});
    if (!c) throw std::runtime_error(c.message());
    client = std::move(*c);
    options.resource = "nodes";
    options.path = "/api/v1/nodes";
    options.watch_timeout = 1s;
    options.request_timeout = 5s;
    options.backoff_initial = 10ms;
    options.backoff_max = 100ms;
    if (tweak) tweak(options);
  }
  ~Harness() {
    if (reflector) reflector->stop();
    if (thread.joinable()) thread.join();
    reflector.reset();
    client.reset();
    server.stop();
  }

  void on_list(Handler h) {
    std::lock_guard lock(mu_);
    list_ = std::move(h);
  }
  void on_watch(Handler h) {
    std::lock_guard lock(mu_);
    watch_ = std::move(h);
  }
  // Lists answer `body` (whatever the query).
  void list_answers(json body) {
    on_list([body](const httplib::Request&, httplib::Response& res) { FakeApiServer::reply(res, 200, body); });
  }

  void start() {
    reflector = std::make_unique<Reflector>(*client, options, sink);
    thread = std::thread([this] { reflector->run(); });
  }
  ReflectorStatus status() const { return reflector->status(); }

  // The next watch, asserting it resumes from `rv`.
  WatchDesk::Accepted next_watch(const std::string& rv) {
    auto w = desk.take();
    if (!w) throw std::runtime_error("no watch request arrived");
    EXPECT_EQ(w->request.param("resourceVersion"), rv);
    return *w;
  }

  FakeApiServer server;
  WatchDesk desk;
  std::unique_ptr<ApiClient> client;
  ReflectorOptions options;
  RecordingSink sink;
  std::unique_ptr<Reflector> reflector;
  std::thread thread;

 private:
  std::mutex mu_;
  Handler list_;
  Handler watch_;
};

TEST(Reflector, PagedListAcrossThreePagesThenWatchFromItsVersion) {
  Harness h([](ReflectorOptions& o) { o.page_size = 2; });
  h.on_list([](const httplib::Request& req, httplib::Response& res) {
    const std::string cont = req.get_param_value("continue");
    if (cont.empty()) {
      FakeApiServer::reply(res, 200, list_body({object("a", 1), object("b", 2)}, "30", "page-2"));
    } else if (cont == "page-2") {
      FakeApiServer::reply(res, 200, list_body({object("c", 3), object("d", 4)}, "30", "page-3"));
    } else if (cont == "page-3") {
      FakeApiServer::reply(res, 200, list_body({object("e", 5)}, "30"));
    } else {
      FakeApiServer::reply(res, 400, testing::status_body(400, "BadRequest", "unknown continue " + cont));
    }
  });
  h.start();
  auto watch = h.next_watch("30");
  EXPECT_EQ(watch.request.param("watch"), "1");
  EXPECT_EQ(watch.request.param("allowWatchBookmarks"), "true");
  EXPECT_EQ(watch.request.param("timeoutSeconds"), "1");
  EXPECT_FALSE(watch.request.has("limit"));
  EXPECT_FALSE(watch.request.has("continue"));

  const auto lists = h.server.lists("/api/v1/nodes");
  ASSERT_EQ(lists.size(), 3u);
  const std::vector<std::string> continues = {"", "page-2", "page-3"};
  for (std::size_t i = 0; i < lists.size(); ++i) {
    EXPECT_EQ(lists[i].param("limit"), "2");
    EXPECT_EQ(lists[i].param("continue"), continues[i]);
    EXPECT_FALSE(lists[i].has("watch"));
  }
  EXPECT_EQ(h.sink.log(), (std::vector<std::string>{"begin", "item a", "item b", "item c", "item d", "item e", "end"}));
  const ReflectorStatus st = h.status();
  EXPECT_TRUE(st.synced);
  EXPECT_EQ(st.lists, 1u);
  EXPECT_EQ(st.resource_version, "30");
  EXPECT_EQ(st.last_error, "");
}

TEST(Reflector, EventsCutIntoArbitraryPiecesArriveIntactAndInOrder) {
  Harness h;
  h.list_answers(list_body({}, "10"));
  h.start();
  auto watch = h.next_watch("10");

  // Names and labels with 2-, 3- and 4-byte UTF-8 sequences.
  const std::vector<std::pair<std::string, json>> sent = {
      {"ADDED", object("nöde-ä", 11, "grüße")},
      {"ADDED", object("节点-二", 12, "日本語のラベル")},
      {"MODIFIED", object("nöde-ä", 13, "🚀🚀 launch")},
      {"ADDED", object("plain", 14, std::string(700, 'x'))},
      {"DELETED", object("节点-二", 15)},
      {"MODIFIED", object("plain", 16, "€uro ✓ 𝄞")},
  };
  std::string text;
  for (const auto& [type, o] : sent) text += testing::event_line(type, o);
  // Cut points: a cycle of piece sizes, plus one byte into every other multi-byte character.
  std::set<std::size_t> cuts;
  const std::vector<std::size_t> sizes = {1, 2, 3, 1, 5, 8, 13, 1, 1, 21, 64, 2, 300, 7};
  for (std::size_t at = 0, i = 0; at < text.size(); at += sizes[i++ % sizes.size()]) cuts.insert(at);
  bool take = true;
  for (std::size_t at = 1; at < text.size(); ++at) {
    const auto lead = static_cast<unsigned char>(text[at - 1]);
    if ((lead & 0xC0) == 0xC0) {  // text[at] continues a sequence that starts at at-1
      if (take) cuts.insert(at);
      take = !take;
    }
  }
  cuts.insert(text.size());
  std::vector<std::string> pieces;
  for (auto it = cuts.begin(); std::next(it) != cuts.end(); ++it)
    pieces.push_back(text.substr(*it, *std::next(it) - *it));
  // The cuts do fall inside multi-byte sequences and inside lines.
  int inside_utf8 = 0;
  for (std::size_t i = 0; i + 1 < pieces.size(); ++i) {
    if ((static_cast<unsigned char>(pieces[i + 1][0]) & 0xC0) == 0x80) ++inside_utf8;
  }
  ASSERT_GT(inside_utf8, 10);
  for (auto& p : pieces) watch.feed->send(p);

  ASSERT_TRUE(eventually([&] { return h.sink.events().size() == sent.size(); })) << h.sink.events().size();
  const auto got = h.sink.events();
  for (std::size_t i = 0; i < sent.size(); ++i) {
    EXPECT_EQ(got[i].type, sent[i].first) << i;
    EXPECT_EQ(got[i].object, sent[i].second) << i;
  }
  EXPECT_EQ(h.sink.names(), (std::vector<std::string>{"nöde-ä", "plain"}));
  EXPECT_EQ(h.sink.objects()["plain"]["metadata"]["labels"]["note"], "€uro ✓ 𝄞");

  // The server ends the watch (its timeoutSeconds): the next one resumes from the last event.
  watch.feed->end();
  h.next_watch("16");
  EXPECT_EQ(h.status().resource_version, "16");
  EXPECT_EQ(h.status().lists, 1u);
}

TEST(Reflector, StreamCutMidLineResumesFromTheLastVersionSeen) {
  Harness h;
  h.list_answers(list_body({object("a", 5)}, "10"));
  h.start();
  auto first = h.next_watch("10");
  first.feed->send_event("ADDED", object("b", 11));
  const std::string modified_a = testing::event_line("MODIFIED", object("a", 12, "changed"));
  first.feed->send(modified_a.substr(0, modified_a.size() / 2));  // half a line, then the connection drops
  ASSERT_TRUE(eventually([&] { return h.sink.events().size() == 1; }));
  first.feed->cut();

  // The server replays everything after the version the client asks for.
  auto second = h.next_watch("11");
  second.feed->send(modified_a);
  second.feed->send_event("ADDED", object("c", 13));
  ASSERT_TRUE(eventually([&] { return h.sink.events().size() >= 3; }));
  EXPECT_EQ(h.sink.event_log(), (std::vector<std::string>{"ADDED b@11", "MODIFIED a@12", "ADDED c@13"}));
  const auto objects = h.sink.objects();
  EXPECT_EQ(h.sink.names(), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(objects.at("a")["metadata"]["labels"]["note"], "changed");
  EXPECT_EQ(h.sink.lists(), 1) << "a cut is not a reason to list again";

  // A cut right after a complete line loses nothing either.
  second.feed->cut();
  auto third = h.next_watch("13");
  third.feed->send_event("DELETED", object("b", 14));
  ASSERT_TRUE(eventually([&] { return h.sink.events().size() == 4; }));
  EXPECT_EQ(h.sink.names(), (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(h.sink.lists(), 1);
}

TEST(Reflector, BookmarksMoveTheVersionWithoutReachingTheSink) {
  Harness h;
  h.list_answers(list_body({object("a", 5)}, "10"));
  h.start();
  auto first = h.next_watch("10");
  first.feed->send_event("BOOKMARK",
                         json{{"kind", "Node"}, {"apiVersion", "v1"}, {"metadata", {{"resourceVersion", "20"}}}});
  first.feed->end();
  auto second = h.next_watch("20");
  EXPECT_EQ(h.status().resource_version, "20");
  // A bookmark then a cut: resumed from the bookmark too.
  second.feed->send_event("ADDED", object("b", 21));
  second.feed->send_event("BOOKMARK", json{{"kind", "Node"}, {"metadata", {{"resourceVersion", "25"}}}});
  ASSERT_TRUE(eventually([&] { return h.sink.events().size() == 1; }));
  second.feed->cut();
  auto third = h.next_watch("25");
  // An event type this client does not know is skipped; the stream goes on.
  third.feed->send_event("SOMETHING-NEW", object("zzz", 26));
  third.feed->send_event("ADDED", object("c", 27));
  ASSERT_TRUE(eventually([&] { return h.sink.events().size() == 2; }));
  EXPECT_EQ(h.sink.event_log(), (std::vector<std::string>{"ADDED b@21", "ADDED c@27"}));
  EXPECT_EQ(h.sink.lists(), 1);
}

TEST(Reflector, ExpiredErrorEventListsAgainAndTheNewListReplacesTheStore) {
  Harness h;
  std::atomic<int> lists{0};
  h.on_list([&](const httplib::Request&, httplib::Response& res) {
    if (++lists == 1) {
      FakeApiServer::reply(res, 200, list_body({object("a", 1), object("b", 2)}, "10"));
    } else {
      FakeApiServer::reply(res, 200, list_body({object("b", 2), object("c", 15)}, "20"));
    }
  });
  h.start();
  auto first = h.next_watch("10");
  ASSERT_EQ(h.sink.names(), (std::vector<std::string>{"a", "b"}));
  first.feed->send_event("ERROR", testing::status_body(410, "Expired", "too old resource version: 10 (15)"));
  // The reflector lists again and watches from the new list's version.
  auto second = h.next_watch("20");
  EXPECT_EQ(h.sink.lists(), 2);
  EXPECT_EQ(h.sink.names(), (std::vector<std::string>{"b", "c"})) << "a is gone from the server, so from the sink";
  EXPECT_TRUE(h.sink.events().empty());
  EXPECT_EQ(h.status().lists, 2u);
  EXPECT_EQ(h.status().resource_version, "20");
  EXPECT_EQ(h.status().last_error, "");
  EXPECT_TRUE(first.feed->wait_closed(5s)) << "the expired watch is abandoned";
}

TEST(Reflector, ExpiredWithOnlyAReasonOrGoneAlsoListsAgain) {
  for (const json& status : {json{{"kind", "Status"}, {"reason", "Expired"}, {"message", "no code"}},
                             json{{"kind", "Status"}, {"code", 410}, {"reason", "Gone"}}}) {
    SCOPED_TRACE(status.dump());
    Harness h;
    std::atomic<int> lists{0};
    h.on_list([&](const httplib::Request&, httplib::Response& res) {
      const int n = ++lists;
      FakeApiServer::reply(res, 200, list_body({object("x" + std::to_string(n), n)}, std::to_string(10 * n)));
    });
    h.start();
    h.next_watch("10").feed->send_event("ERROR", status);
    h.next_watch("20");
    EXPECT_EQ(h.sink.names(), (std::vector<std::string>{"x2"}));
  }
}

TEST(Reflector, Http410OnTheWatchListsAgain) {
  Harness h;
  std::atomic<int> lists{0};
  h.on_list([&](const httplib::Request&, httplib::Response& res) {
    if (++lists == 1) {
      FakeApiServer::reply(res, 200, list_body({object("a", 1)}, "10"));
    } else {
      FakeApiServer::reply(res, 200, list_body({object("b", 12)}, "20"));
    }
  });
  std::atomic<int> watches{0};
  h.on_watch([&](const httplib::Request& req, httplib::Response& res) {
    if (++watches == 1) {
      FakeApiServer::reply(res, 410, testing::status_body(410, "Gone", "too old resource version: 10 (12)"));
    } else {
      h.desk.accept(h.server, req, res);
    }
  });
  h.start();
  h.next_watch("20");
  EXPECT_EQ(h.sink.lists(), 2);
  EXPECT_EQ(h.sink.names(), (std::vector<std::string>{"b"}));
  const auto watch_requests = h.server.watches("/api/v1/nodes");
  ASSERT_EQ(watch_requests.size(), 2u);
  EXPECT_EQ(watch_requests[0].param("resourceVersion"), "10");
}

TEST(Reflector, ForbiddenListIsReportedThenRecovers) {
  Harness h;
  std::atomic<bool> allowed{false};
  const std::string message =
      "nodes is forbidden: User \"system:serviceaccount:kube-system:scheduler-extender\" cannot list resource "
      "\"nodes\" "
      "in API group \"\" at the cluster scope";
  h.on_list([&](const httplib::Request&, httplib::Response& res) {
    if (!allowed) {
      FakeApiServer::reply(res, 403, testing::status_body(403, "Forbidden", message));
    } else {
      FakeApiServer::reply(res, 200, list_body({object("a", 1)}, "10"));
    }
  });
  h.start();
  ASSERT_TRUE(eventually([&] { return !h.status().last_error.empty(); }));
  ReflectorStatus st = h.status();
  EXPECT_FALSE(st.synced);
  EXPECT_EQ(st.lists, 0u);
  EXPECT_NE(st.last_error.find("HTTP 403"), std::string::npos) << st.last_error;
  EXPECT_NE(st.last_error.find(message), std::string::npos) << st.last_error;
  EXPECT_TRUE(h.sink.log().empty()) << "nothing reaches the sink from a refused list";
  EXPECT_TRUE(st.down_since.has_value());
  // It keeps trying (with backoff), and the RBAC fix is picked up.
  ASSERT_TRUE(eventually([&] { return h.server.lists("/api/v1/nodes").size() >= 3; }));
  allowed = true;
  h.next_watch("10");
  st = h.status();
  EXPECT_TRUE(st.synced);
  EXPECT_EQ(st.last_error, "");
  EXPECT_FALSE(st.down_since.has_value());
  EXPECT_EQ(h.sink.names(), (std::vector<std::string>{"a"}));
}

TEST(Reflector, ExpiredContinueTokenRestartsTheListFromTheFirstPage) {
  Harness h([](ReflectorOptions& o) { o.page_size = 2; });
  std::atomic<int> first_pages{0};
  h.on_list([&](const httplib::Request& req, httplib::Response& res) {
    const std::string cont = req.get_param_value("continue");
    if (cont.empty()) {
      if (++first_pages == 1) {
        FakeApiServer::reply(res, 200, list_body({object("a", 1), object("x", 2)}, "30", "old-token"));
      } else {
        FakeApiServer::reply(res, 200, list_body({object("a", 1), object("b", 33)}, "40", "new-2"));
      }
    } else if (cont == "old-token") {
      FakeApiServer::reply(res, 410,
                           testing::status_body(410, "Expired",
                                                "The provided continue parameter is too old to display a "
                                                "consistent list result."));
    } else if (cont == "new-2") {
      FakeApiServer::reply(res, 200, list_body({object("c", 3), object("d", 4)}, "40", "new-3"));
    } else if (cont == "new-3") {
      FakeApiServer::reply(res, 200, list_body({object("e", 5)}, "40"));
    }
  });
  h.start();
  h.next_watch("40");
  std::vector<std::string> continues;
  for (const auto& r : h.server.lists("/api/v1/nodes")) continues.push_back(r.param("continue"));
  EXPECT_EQ(continues, (std::vector<std::string>{"", "old-token", "", "new-2", "new-3"}));
  EXPECT_EQ(h.sink.names(), (std::vector<std::string>{"a", "b", "c", "d", "e"})) << "nothing of the abandoned list (x)";
  EXPECT_EQ(h.sink.lists(), 1);
  EXPECT_EQ(h.status().lists, 1u);
  EXPECT_EQ(h.status().last_error, "");
}

TEST(Reflector, OversizedLineFailsTheWatchWhichResumesFromTheSameVersion) {
  Harness h([](ReflectorOptions& o) { o.max_line_bytes = 256; });
  h.list_answers(list_body({object("a", 1)}, "10"));
  h.start();
  auto first = h.next_watch("10");
  const std::string big = testing::event_line("ADDED", object("big", 11, std::string(1000, 'b')));
  for (std::size_t at = 0; at + 1 < big.size(); at += 100)
    first.feed->send(big.substr(at, std::min<std::size_t>(100, big.size() - 1 - at)));
  ASSERT_TRUE(eventually([&] { return h.status().last_error.find("longer than 256 bytes") != std::string::npos; }))
      << h.status().last_error;
  auto second = h.next_watch("10");
  second.feed->send_event("ADDED", object("small", 12));
  ASSERT_TRUE(eventually([&] { return h.sink.events().size() == 1; }));
  EXPECT_EQ(h.sink.names(), (std::vector<std::string>{"a", "small"}));
}

TEST(Reflector, OversizedLineIsRefusedHoweverTheNetworkCutsIt) {
  // The same line, once in many pieces and once in a single piece with its newline: the bound
  // is on the line, not on how the bytes happened to arrive.
  for (bool whole : {false, true}) {
    SCOPED_TRACE(whole ? "one piece" : "many pieces");
    Harness h([](ReflectorOptions& o) { o.max_line_bytes = 256; });
    h.list_answers(list_body({}, "10"));
    h.start();
    auto first = h.next_watch("10");
    const std::string big = testing::event_line("ADDED", object("big", 11, std::string(1000, 'b')));
    if (whole) {
      first.feed->send(big);
    } else {
      for (std::size_t at = 0; at < big.size(); at += 64) first.feed->send(big.substr(at, 64));
    }
    ASSERT_TRUE(eventually([&] { return h.status().last_error.find("longer than 256 bytes") != std::string::npos; }))
        << h.status().last_error;
    auto second = h.next_watch("10");
    second.feed->send_event("ADDED", object("small", 12));
    ASSERT_TRUE(eventually([&] { return h.sink.events().size() >= 1; }));
    EXPECT_EQ(h.sink.event_log(), (std::vector<std::string>{"ADDED small@12"}));
  }
}

TEST(Reflector, MalformedLinesAndErrorEventsFailThenTheWatchResumes) {
  Harness h;
  h.list_answers(list_body({object("a", 1)}, "10"));
  h.start();
  struct Case {
    std::string line;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"this is not json\n", "not a JSON event"},
      {"[1,2,3]\n", "not a JSON event"},
      {testing::event_line("ERROR", testing::status_body(500, "InternalError", "etcd is sad")),
       "error event: etcd is sad"},
      // Odd Status fields are a failure like any other, not a crash.
      {testing::event_line("ERROR", json{{"kind", "Status"}, {"code", "500"}, {"message", "code as text"}}),
       "error event: code as text"},
      {testing::event_line("ERROR",
                           json{{"kind", "Status"}, {"code", nullptr}, {"reason", nullptr}, {"message", "nulls"}}),
       "error event: nulls"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.line);
    auto w = h.next_watch("10");
    w.feed->send(c.line);
    ASSERT_TRUE(eventually([&] { return h.status().last_error.find(c.error) != std::string::npos; }))
        << h.status().last_error;
    EXPECT_TRUE(w.feed->wait_closed(5s));
  }
  auto w = h.next_watch("10");
  w.feed->send_event("ADDED", object("b", 11));
  ASSERT_TRUE(eventually([&] { return h.sink.events().size() == 1; }));
  EXPECT_EQ(h.sink.names(), (std::vector<std::string>{"a", "b"}));
}

std::string nested(std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST(Reflector, DeeplyNestedEventFailsTheWatchWhichResumesFromTheSameVersion) {
  Harness h;
  h.list_answers(list_body({object("a", 1)}, "10"));
  h.start();
  auto first = h.next_watch("10");
  first.feed->send_event("ADDED", object("b", 11));
  ASSERT_TRUE(eventually([&] { return h.sink.events().size() == 1; }));
  // About 100 KB, far below the line bound: only the nesting is hostile.
  first.feed->send("{\"type\":\"ADDED\",\"object\":" + nested(50'000) + "}\n");
  ASSERT_TRUE(eventually([&] {
    return h.status().last_error.find("nested deeper than 128 levels") != std::string::npos;
  })) << h.status().last_error;
  EXPECT_TRUE(first.feed->wait_closed(5s));
  auto second = h.next_watch("11");
  second.feed->send_event("ADDED", object("c", 12));
  ASSERT_TRUE(eventually([&] { return h.sink.events().size() == 2; }));
  EXPECT_EQ(h.sink.event_log(), (std::vector<std::string>{"ADDED b@11", "ADDED c@12"}));
  EXPECT_EQ(h.sink.lists(), 1);
}

TEST(Reflector, DeeplyNestedListPageFailsTheListWhichIsRetried) {
  Harness h;
  std::atomic<int> lists{0};
  h.on_list([&](const httplib::Request&, httplib::Response& res) {
    if (++lists == 1) {
      res.status = 200;
      res.set_content(
          "{\"kind\":\"NodeList\",\"metadata\":{\"resourceVersion\":\"9\"},\"items\":[" + nested(50'000) + "]}",
          "application/json");
    } else {
      FakeApiServer::reply(res, 200, list_body({object("a", 1)}, "10"));
    }
  });
  h.start();
  ASSERT_TRUE(eventually([&] {
    return h.status().last_error.find("nested deeper than 128 levels") != std::string::npos;
  })) << h.status().last_error;
  EXPECT_TRUE(h.sink.log().empty()) << "nothing of the refused page reaches the sink";
  h.next_watch("10");
  EXPECT_EQ(h.sink.names(), (std::vector<std::string>{"a"}));
  EXPECT_EQ(h.status().lists, 1u);
}

TEST(Reflector, DeeplyNestedStatusBodyOnAFailedWatchIsAFailureNotACrash) {
  Harness h;
  h.list_answers(list_body({object("a", 1)}, "10"));
  std::atomic<int> watches{0};
  h.on_watch([&](const httplib::Request& req, httplib::Response& res) {
    if (++watches == 1) {
      res.status = 500;
      res.set_content("{\"kind\":\"Status\",\"code\":410,\"details\":" + nested(50'000) + "}", "application/json");
    } else {
      h.desk.accept(h.server, req, res);
    }
  });
  h.start();
  auto w = h.next_watch("10");
  EXPECT_EQ(watches.load(), 2);
  EXPECT_EQ(h.sink.lists(), 1) << "a body too deep to read is not a 410";
  w.feed->send_event("ADDED", object("b", 11));
  ASSERT_TRUE(eventually([&] { return h.sink.events().size() == 1; }));
}

TEST(Reflector, OddStatusBodiesOnAFailedWatchAreFailuresNotCrashes) {
  Harness h;
  h.list_answers(list_body({object("a", 1)}, "10"));
  std::atomic<int> watches{0};
  h.on_watch([&](const httplib::Request& req, httplib::Response& res) {
    const int n = ++watches;
    if (n == 1) {
      FakeApiServer::reply(res, 500,
                           json{{"kind", "Status"}, {"code", "410"}, {"reason", nullptr}, {"message", "odd"}});
    } else if (n == 2) {
      res.status = 503;
      res.set_content("upstream connect error", "text/plain");
    } else {
      h.desk.accept(h.server, req, res);
    }
  });
  h.start();
  auto w = h.next_watch("10");
  EXPECT_EQ(watches.load(), 3);
  w.feed->send_event("ADDED", object("b", 11));
  ASSERT_TRUE(eventually([&] { return h.sink.events().size() == 1; }));
}

TEST(Reflector, WatchRefusedWith401ReadsTheRotatedTokenAgain) {
  testing::TempDir dir;
  ClusterAccess access;
  access.token_file = dir.write("token", "old-token");
  Harness h({}, access);
  h.list_answers(list_body({object("a", 1)}, "10"));
  h.on_watch([&](const httplib::Request& req, httplib::Response& res) {
    if (req.get_header_value("Authorization") != "Bearer new-token") {
      FakeApiServer::reply(res, 401, testing::status_body(401, "Unauthorized", "Unauthorized"));
    } else {
      h.desk.accept(h.server, req, res);
    }
  });
  h.start();
  ASSERT_TRUE(eventually([&] { return h.status().synced; }));
  dir.write("token", "new-token");
  auto w = h.next_watch("10");
  std::vector<std::string> auths;
  for (const auto& r : h.server.watches("/api/v1/nodes")) auths.push_back(r.authorization);
  ASSERT_GE(auths.size(), 2u);
  EXPECT_EQ(auths.back(), "Bearer new-token");
  EXPECT_EQ(auths.front(), "Bearer old-token");
}

TEST(Reflector, SilentWatchIsDroppedAtTheBoundAndResumesFromTheLastVersion) {
  // The server keeps the connection open and sends nothing: no event, no end, no newline.
  Harness h([](ReflectorOptions& o) { o.watch_grace = 500ms; });
  h.list_answers(list_body({object("a", 1)}, "10"));
  h.start();
  auto first = h.next_watch("10");
  EXPECT_EQ(first.request.param("timeoutSeconds"), "1");
  first.feed->send_event("ADDED", object("b", 11));
  ASSERT_TRUE(eventually([&] { return h.sink.events().size() == 1; }));
  EXPECT_FALSE(h.status().down_since.has_value());
  const auto frozen_at = std::chrono::steady_clock::now();
  first.feed->freeze();

  auto second = h.desk.take(5s);
  ASSERT_TRUE(second) << "the silent stream was never dropped";
  const auto dropped_after = std::chrono::steady_clock::now() - frozen_at;
  EXPECT_EQ(second->request.param("resourceVersion"), "11");
  EXPECT_GE(dropped_after, 1400ms) << "dropped before timeoutSeconds (1s) plus the grace (0.5s)";
  EXPECT_LE(dropped_after, 3500ms);
  ReflectorStatus st = h.status();
  EXPECT_NE(st.last_error.find("nothing received for 1.5s"), std::string::npos) << st.last_error;
  EXPECT_NE(st.last_error.find("resuming from resourceVersion 11"), std::string::npos) << st.last_error;
  // Down since the drop, and still down on the new stream until something arrives on it.
  ASSERT_TRUE(st.down_since.has_value());
  EXPECT_GE(*st.down_since, frozen_at);
  second->feed->send_event("ADDED", object("c", 12));
  ASSERT_TRUE(eventually([&] { return h.sink.events().size() == 2; }));
  ASSERT_TRUE(eventually([&] { return !h.status().down_since.has_value(); }));
  EXPECT_EQ(h.sink.event_log(), (std::vector<std::string>{"ADDED b@11", "ADDED c@12"}));
  EXPECT_EQ(h.sink.lists(), 1) << "a silent stream is not a reason to list again";
}

TEST(Reflector, StreamsThatKeepGoingSilentStayDown) {
  Harness h([](ReflectorOptions& o) {
    o.watch_grace = 200ms;
    o.backoff_max = 10s;  // no relist in between (a list that works is a way back up)
  });
  h.list_answers(list_body({object("a", 1)}, "10"));
  h.start();
  h.next_watch("10").feed->freeze();
  auto second = h.next_watch("10");
  ASSERT_TRUE(h.status().down_since.has_value());
  const auto first_drop = *h.status().down_since;
  second.feed->freeze();
  auto third = h.next_watch("10");
  // The second stream was answered 200 and then went silent too: down since the first drop.
  ASSERT_TRUE(h.status().down_since.has_value());
  EXPECT_EQ(*h.status().down_since, first_drop);
  third.feed->end();  // a clean end, as the server's timeoutSeconds: up again
  h.next_watch("10");
  EXPECT_FALSE(h.status().down_since.has_value());
}

TEST(Reflector, AWatchThatBreaksOffIsDownUntilTheNextStreamIsUp) {
  Harness h([](ReflectorOptions& o) {
    o.backoff_initial = 300ms;
    o.backoff_max = 300ms;
  });
  h.list_answers(list_body({object("a", 1)}, "10"));
  h.start();
  auto first = h.next_watch("10");
  ASSERT_TRUE(eventually([&] { return h.status().synced; }));
  EXPECT_FALSE(h.status().down_since.has_value());
  const auto cut_at = std::chrono::steady_clock::now();
  first.feed->cut();
  ASSERT_TRUE(eventually([&] { return h.status().down_since.has_value(); }));
  EXPECT_GE(*h.status().down_since, cut_at);
  EXPECT_NE(h.status().last_error.find("broke off"), std::string::npos) << h.status().last_error;
  // A fresh 200 after a reset connection is enough: the stream is up before any event.
  h.next_watch("10");
  EXPECT_TRUE(eventually([&] { return !h.status().down_since.has_value(); }));
}

TEST(Reflector, AServerThatNeverAnswersTheWatchIsDroppedAtTheBound) {
  Harness h([](ReflectorOptions& o) { o.watch_grace = 500ms; });
  h.list_answers(list_body({object("a", 1)}, "10"));
  std::atomic<int> watches{0};
  h.on_watch([&](const httplib::Request& req, httplib::Response& res) {
    if (++watches == 1) {
      h.server.hang();  // no status line, no headers
      FakeApiServer::reply(res, 500, testing::status_body(500, "InternalError", "too late"));
    } else {
      h.desk.accept(h.server, req, res);
    }
  });
  h.start();
  ASSERT_TRUE(eventually([&] { return h.server.hanging() == 1; }));
  const auto hung_at = std::chrono::steady_clock::now();
  auto w = h.desk.take(5s);
  ASSERT_TRUE(w);
  EXPECT_GE(std::chrono::steady_clock::now() - hung_at, 1400ms);
  EXPECT_EQ(w->request.param("resourceVersion"), "10");
  EXPECT_NE(h.status().last_error.find("timeout"), std::string::npos) << h.status().last_error;
  h.server.release_hangs();
}

TEST(Reflector, StopEndsAQuietWatchPromptly) {
  auto h = std::make_unique<Harness>();
  h->list_answers(list_body({}, "10"));
  h->start();
  auto w = h->next_watch("10");
  w.feed->send("{\"type\":\"ADDED\",");  // mid-line: no heartbeats, nothing more comes
  ASSERT_TRUE(eventually([&] { return h->server.requests().size() == 2; }));
  std::atomic<bool> stopped{false};
  std::thread stopper([&] {
    h->reflector->stop();
    h->thread.join();
    stopped = true;
  });
  EXPECT_TRUE(eventually([&] { return stopped.load(); }, 5000ms)) << "stop() must not wait for the server";
  stopper.join();
  EXPECT_TRUE(h->sink.events().empty());
}

}  // namespace
}  // namespace extender::kube
