#pragma once
// FakeCluster: a small emulation of the API server's storage over FakeApiServer, for the tests
// that run KubeCluster and the binder end to end. Nodes, pods, persistentvolumeclaims,
// persistentvolumes and storageclasses (and storage.k8s.io/v1's csidrivers and csistoragecapacities) are kept as JSON
// objects; every write takes the next resourceVersion (one counter for all kinds, as etcd's revision) and becomes an
// event in that kind's history. Lists are paged (limit/continue) from a snapshot; watches replay the history after
// their resourceVersion and then follow live writes. Faults on request: cut every open watch of a kind, forget history
// (watches from before it get 410, as an ERROR event or an HTTP 410), expire continue tokens, forbid a kind, hold a
// kind's events back. POST .../pods/{name}/binding binds a pending pod (checking its uid) and emits the MODIFIED event,
// unless a test's binding hook answers instead. A merge patch of a pod's or claim's annotations is applied and emitted
// as MODIFIED (a patch naming another uid is refused, 422, as the API server refuses to change it), unless patches of
// that kind are set to be refused with a status. The DRA kinds of resource.k8s.io/v1 (resourceslices, resourceclaims,
// deviceclasses) are served the same way, and answer 404 for the group, its discovery document included, once
// serve_dra(false) makes the server an old one (before v1.34).
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include "extender/sources/watched_kinds.h"
#include "support/fake_api_server.h"

namespace extender::kube::testing {

// The kinds the daemon watches (sources/watched_kinds.h): every row is served.
using Kind = sources::Kind;
inline constexpr std::size_t kKindCount = sources::kWatchedKinds.size();
inline constexpr const char* kDraGroupPath = "/apis/resource.k8s.io/v1";

inline bool is_dra(Kind k) { return sources::watched(k).group == sources::KindGroup::kDra; }

inline std::string kind_path(Kind k) { return sources::collection_path(sources::watched(k)); }

inline std::string key_of(const json& object) {
  const json& meta = object.at("metadata");
  std::string name = meta.at("name").get<std::string>();
  if (meta.contains("namespace")) return meta.at("namespace").get<std::string>() + "/" + name;
  return name;
}

// What a test's binding hook may answer instead of the default behaviour.
struct BindingReply {
  int status = 201;
  json body;
  bool hang = false;  // never answer (until the server stops or releases hangs)
};

struct BindingRequest {
  std::string ns;
  std::string name;
  json body;
  int attempt = 0;  // 1 for the first POST for this pod, 2 for the next, ...
};

class FakeCluster {
 public:
  enum class ExpiredAs { kErrorEvent, kHttp410 };
  using BindingHook = std::function<std::optional<BindingReply>(const BindingRequest&)>;

  explicit FakeCluster(FakeApiServer& server) : server_(server) {
    for (const sources::WatchedKind& row : sources::kWatchedKinds) {
      const Kind k = row.kind;
      server_.route("GET", kind_path(k),
                    [this, k](const httplib::Request& req, httplib::Response& res) { get(k, req, res); });
    }
    server_.route("GET", kDraGroupPath, [this](const httplib::Request&, httplib::Response& res) { discovery(res); });
    server_.route("POST", "/api/v1/namespaces/*/pods/*/binding",
                  [this](const httplib::Request& req, httplib::Response& res) { bind(req, res); });
    server_.route("PATCH", "/api/v1/namespaces/*/persistentvolumeclaims/*",
                  [this](const httplib::Request& req, httplib::Response& res) { patch(Kind::kClaims, req, res); });
    server_.route("PATCH", "/api/v1/namespaces/*/pods/*",
                  [this](const httplib::Request& req, httplib::Response& res) { patch(Kind::kPods, req, res); });
    // csi-baremetal's reservations: created, read, replaced (guarded by resourceVersion), deleted.
    const Kind acr = Kind::kCapacityReservations;
    server_.route("POST", kind_path(acr),
                  [this, acr](const httplib::Request& req, httplib::Response& res) { write(acr, req, res); });
    for (const char* method : {"GET", "PUT", "DELETE"}) {
      server_.route(method, kind_path(acr) + "/*",
                    [this, acr](const httplib::Request& req, httplib::Response& res) { write(acr, req, res); });
    }
  }

  // ADDED or MODIFIED, by namespace/name; sets metadata.resourceVersion. Returns the version.
  std::uint64_t put(Kind k, json object) {
    std::lock_guard lock(mu_);
    return put_locked(k, std::move(object));
  }
  void remove(Kind k, const std::string& key) {
    std::lock_guard lock(mu_);
    remove_locked(k, key);
  }
  std::map<std::string, json> objects(Kind k) const {
    std::lock_guard lock(mu_);
    return stores_[static_cast<int>(k)].objects;
  }
  std::optional<json> object(Kind k, const std::string& key) const {
    std::lock_guard lock(mu_);
    const Store& s = stores_[static_cast<int>(k)];
    auto it = s.objects.find(key);
    if (it == s.objects.end()) return std::nullopt;
    return it->second;
  }
  std::uint64_t resource_version() const {
    std::lock_guard lock(mu_);
    return rv_;
  }

  // Whether the server has the resource.k8s.io/v1 group (default: yes). Without it, requests to
  // the group answer 404 as an old API server does.
  void serve_dra(bool served) {
    std::lock_guard lock(mu_);
    serve_dra_ = served;
  }

  // Faults.
  void cut_watches(Kind k) {
    std::lock_guard lock(mu_);
    for (auto& f : store(k).watches) f->cut();
    store(k).watches.clear();
  }
  // Forgets the history of kind k (held events included, which open watches then never see): a
  // watch from an older version is told 410.
  void compact(Kind k, ExpiredAs as = ExpiredAs::kErrorEvent) {
    std::lock_guard lock(mu_);
    Store& s = store(k);
    s.history.clear();
    s.pending.clear();
    s.held = false;
    s.compacted = rv_;
    s.expired_as = as;
  }
  // Tells every open watch of kind k that its version expired (an ERROR 410 event), and ends it.
  void expire_watches(Kind k) {
    std::lock_guard lock(mu_);
    for (auto& f : store(k).watches) {
      f->send_event("ERROR", status_body(410, "Expired", "too old resource version"));
      f->end();
    }
    store(k).watches.clear();
  }
  void expire_continue_tokens() {
    std::lock_guard lock(mu_);
    pages_.clear();
  }
  // Lists of kind k answer 403 while forbidden.
  void forbid(Kind k, bool forbidden) {
    std::lock_guard lock(mu_);
    store(k).forbidden = forbidden;
  }
  // While held, writes of kind k change the objects but their events wait for release().
  void hold(Kind k) {
    std::lock_guard lock(mu_);
    store(k).held = true;
  }
  void release(Kind k) {
    std::lock_guard lock(mu_);
    Store& s = store(k);
    s.held = false;
    auto pending = std::move(s.pending);
    s.pending.clear();
    for (auto& [rv, type, object] : pending) emit(s, rv, type, std::move(object));
  }
  int open_watches(Kind k) {
    std::lock_guard lock(mu_);
    Store& s = store(k);
    s.watches.erase(std::remove_if(s.watches.begin(), s.watches.end(), [](auto& f) { return f->closed(); }),
                    s.watches.end());
    return static_cast<int>(s.watches.size());
  }
  void set_page_size_cap(std::size_t n) {
    std::lock_guard lock(mu_);
    page_cap_ = n;
  }
  // Patches of kind k answer `status` (a Status body) while it is not 0.
  // Each create, replace or delete of a cluster-scoped object answers only after `delay`.
  void delay_writes(std::chrono::milliseconds delay) { write_delay_ = delay; }
  void refuse_patches(Kind k, int status) {
    std::lock_guard lock(mu_);
    store(k).patch_refusal = status;
  }
  void set_binding_hook(BindingHook hook) {
    std::lock_guard lock(mu_);
    binding_hook_ = std::move(hook);
  }

 private:
  struct Store {
    std::map<std::string, json> objects;
    std::vector<std::tuple<std::uint64_t, std::string, json>> history;
    std::vector<std::tuple<std::uint64_t, std::string, json>> pending;
    std::uint64_t compacted = 0;
    ExpiredAs expired_as = ExpiredAs::kErrorEvent;
    std::vector<std::shared_ptr<WatchFeed>> watches;
    bool forbidden = false;
    bool held = false;
    int patch_refusal = 0;
  };
  struct Page {
    std::uint64_t rv;
    std::vector<json> items;
  };

  Store& store(Kind k) { return stores_[static_cast<int>(k)]; }

  std::uint64_t put_locked(Kind k, json object) {
    Store& s = store(k);
    const std::string key = key_of(object);
    object["metadata"]["resourceVersion"] = std::to_string(++rv_);
    const bool existed = s.objects.count(key) > 0;
    s.objects[key] = object;
    emit(s, rv_, existed ? "MODIFIED" : "ADDED", std::move(object));
    return rv_;
  }

  void remove_locked(Kind k, const std::string& key) {
    Store& s = store(k);
    auto it = s.objects.find(key);
    if (it == s.objects.end()) return;
    json object = it->second;
    s.objects.erase(it);
    object["metadata"]["resourceVersion"] = std::to_string(++rv_);
    emit(s, rv_, "DELETED", std::move(object));
  }

  void emit(Store& s, std::uint64_t rv, std::string type, json object) {
    if (s.held) {
      s.pending.emplace_back(rv, std::move(type), std::move(object));
      return;
    }
    const std::string line = event_line(type, object);
    s.history.emplace_back(rv, std::move(type), std::move(object));
    s.watches.erase(std::remove_if(s.watches.begin(), s.watches.end(), [](auto& f) { return f->closed(); }),
                    s.watches.end());
    for (auto& f : s.watches) f->send(line);
  }

  void get(Kind k, const httplib::Request& req, httplib::Response& res) {
    const bool watch = req.get_param_value("watch") == "1" || req.get_param_value("watch") == "true";
    std::unique_lock lock(mu_);
    Store& s = store(k);
    if (is_dra(k) && !serve_dra_) {
      lock.unlock();
      FakeApiServer::reply(res, 404, status_body(404, "NotFound", "the server could not find the requested resource"));
      return;
    }
    if (s.forbidden) {
      lock.unlock();
      FakeApiServer::reply(
          res, 403,
          status_body(403, "Forbidden",
                      std::string(kind_path(k)) + " is forbidden: User \"system:serviceaccount:"
                                                  "kube-system:scheduler-extender\" cannot list or watch it"));
      return;
    }
    if (!watch) {
      list(k, req, res);
      return;
    }
    std::uint64_t from = 0;
    const std::string rv_text = req.get_param_value("resourceVersion");
    if (!rv_text.empty()) from = std::stoull(rv_text);
    auto feed = std::make_shared<WatchFeed>();
    if (from < s.compacted) {
      const json st = status_body(410, "Expired",
                                  "too old resource version: " + rv_text + " (" + std::to_string(s.compacted) + ")");
      if (s.expired_as == ExpiredAs::kHttp410) {
        lock.unlock();
        FakeApiServer::reply(res, 410, st);
        return;
      }
      feed->send_event("ERROR", st);
      feed->end();
    } else {
      for (const auto& [rv, type, object] : s.history) {
        if (rv > from) feed->send_event(type, object);
      }
      s.watches.push_back(feed);
    }
    lock.unlock();
    server_.serve_watch(res, feed);
  }

  void discovery(httplib::Response& res) {
    std::lock_guard lock(mu_);
    if (!serve_dra_) {
      FakeApiServer::reply(res, 404, status_body(404, "NotFound", "the server could not find the requested resource"));
      return;
    }
    json resources = json::array();
    for (const auto& [name, kind, namespaced] :
         {std::tuple{"resourceslices", "ResourceSlice", false}, std::tuple{"resourceclaims", "ResourceClaim", true},
          std::tuple{"deviceclasses", "DeviceClass", false}}) {
      resources.push_back({{"name", name},
                           {"singularName", ""},
                           {"namespaced", namespaced},
                           {"kind", kind},
                           {"verbs", {"create", "delete", "get", "list", "patch", "update", "watch"}}});
    }
    FakeApiServer::reply(res, 200,
                         json{{"kind", "APIResourceList"},
                              {"apiVersion", "v1"},
                              {"groupVersion", "resource.k8s.io/v1"},
                              {"resources", resources}});
  }

  // Caller holds mu_.
  void list(Kind k, const httplib::Request& req, httplib::Response& res) {
    std::size_t limit = req.has_param("limit") ? std::stoul(req.get_param_value("limit")) : 0;
    if (page_cap_ > 0 && (limit == 0 || limit > page_cap_)) limit = page_cap_;
    const std::string token = req.get_param_value("continue");
    std::uint64_t rv = 0;
    std::size_t offset = 0;
    std::vector<json> items;
    std::string id;
    if (!token.empty()) {
      auto colon = token.find(':');
      id = token.substr(0, colon);
      auto it = pages_.find(id);
      if (colon == std::string::npos || it == pages_.end()) {
        FakeApiServer::reply(res, 410,
                             status_body(410, "Expired",
                                         "The provided continue parameter is too old to display a consistent "
                                         "list result. You can start a new list without the continue parameter."));
        return;
      }
      offset = std::stoul(token.substr(colon + 1));
      rv = it->second.rv;
      items = it->second.items;
    } else {
      rv = rv_;
      for (const auto& [key, object] : store(k).objects) items.push_back(object);
      id = std::to_string(++next_page_id_);
    }
    const std::size_t end = limit == 0 ? items.size() : std::min(items.size(), offset + limit);
    json body{{"kind", "List"},
              {"apiVersion", "v1"},
              {"metadata", {{"resourceVersion", std::to_string(rv)}}},
              {"items", json::array()}};
    for (std::size_t i = offset; i < end; ++i) body["items"].push_back(items[i]);
    if (end < items.size()) {
      body["metadata"]["continue"] = id + ":" + std::to_string(end);
      pages_[id] = Page{rv, std::move(items)};
    } else {
      pages_.erase(id);
    }
    FakeApiServer::reply(res, 200, body);
  }

  void bind(const httplib::Request& req, httplib::Response& res) {
    BindingRequest b;
    const auto parts = FakeApiServer::segments(req.path);  // "", api, v1, namespaces, ns, pods, name, binding
    if (parts.size() == 8) {
      b.ns = parts[4];
      b.name = parts[6];
    }
    b.body = json::parse(req.body, nullptr, false);
    BindingHook hook;
    {
      std::lock_guard lock(mu_);
      b.attempt = ++binding_attempts_[b.ns + "/" + b.name];
      hook = binding_hook_;
    }
    if (hook) {
      if (auto answer = hook(b)) {
        if (answer->hang) {
          server_.hang();
          FakeApiServer::reply(res, 504, status_body(504, "Timeout", "gave up"));
          return;
        }
        FakeApiServer::reply(res, answer->status, answer->body);
        return;
      }
    }
    std::lock_guard lock(mu_);
    Store& pods = store(Kind::kPods);
    auto it = pods.objects.find(b.ns + "/" + b.name);
    if (it == pods.objects.end()) {
      FakeApiServer::reply(res, 404, status_body(404, "NotFound", "pods \"" + b.name + "\" not found"));
      return;
    }
    json pod = it->second;
    const std::string uid = pod["metadata"].value("uid", "");
    const std::string asked_uid = b.body.is_object() ? b.body["metadata"].value("uid", "") : "";
    if (!asked_uid.empty() && asked_uid != uid) {
      FakeApiServer::reply(
          res, 409,
          status_body(409, "Conflict",
                      "Precondition failed: UID in precondition: " + asked_uid + ", UID in object meta: " + uid));
      return;
    }
    const std::string target = b.body.is_object() ? b.body["target"].value("name", "") : "";
    if (pod.contains("spec") && pod["spec"].contains("nodeName") &&
        !pod["spec"]["nodeName"].get<std::string>().empty()) {
      FakeApiServer::reply(
          res, 409,
          status_body(409, "Conflict",
                      "Operation cannot be fulfilled on pods/binding \"" + b.name + "\": pod " + b.name +
                          " is already assigned to node \"" + pod["spec"]["nodeName"].get<std::string>() + "\""));
      return;
    }
    pod["spec"]["nodeName"] = target;
    put_locked(Kind::kPods, std::move(pod));
    FakeApiServer::reply(res, 201,
                         json{{"kind", "Status"},
                              {"apiVersion", "v1"},
                              {"metadata", json::object()},
                              {"status", "Success"},
                              {"code", 201}});
  }

  // A cluster-scoped object by name: POST creates it (409 when it exists), GET reads it, PUT
  // replaces it when its metadata.resourceVersion is the stored one (else 409), DELETE removes it;
  // 404 for one that does not exist.
  void write(Kind k, const httplib::Request& req, httplib::Response& res) {
    const auto parts = FakeApiServer::segments(req.path);
    const bool collection = req.path == kind_path(k);
    json object = req.body.empty() ? json() : json::parse(req.body, nullptr, false);
    std::string name = collection ? std::string() : parts.back();
    if (collection) {
      if (!object.is_object() || !object.contains("metadata") || !object["metadata"].contains("name")) {
        FakeApiServer::reply(res, 400, status_body(400, "BadRequest", "no metadata.name"));
        return;
      }
      name = object["metadata"]["name"].get<std::string>();
    }
    if (const auto delay = write_delay_.load(); req.method != "GET" && delay.count() > 0)
      std::this_thread::sleep_for(delay);
    std::lock_guard lock(mu_);
    Store& s = store(k);
    auto it = s.objects.find(name);
    auto not_found = [&] {
      FakeApiServer::reply(res, 404, status_body(404, "NotFound", "\"" + name + "\" not found"));
    };
    if (req.method == "POST") {
      if (it != s.objects.end()) {
        FakeApiServer::reply(res, 409, status_body(409, "AlreadyExists", "\"" + name + "\" already exists"));
        return;
      }
      object["metadata"].erase("resourceVersion");
      put_locked(k, object);
      FakeApiServer::reply(res, 201, s.objects.at(name));
    } else if (it == s.objects.end()) {
      not_found();
    } else if (req.method == "GET") {
      FakeApiServer::reply(res, 200, it->second);
    } else if (req.method == "DELETE") {
      remove_locked(k, name);
      FakeApiServer::reply(res, 200, status_body(200, "Success", "deleted"));
    } else if (!object.is_object() ||
               object["metadata"].value("resourceVersion", "") != it->second["metadata"]["resourceVersion"]) {
      FakeApiServer::reply(
          res, 409,
          status_body(409, "Conflict",
                      "the object has been modified; please apply your changes to the latest version"));
    } else {
      put_locked(k, object);
      FakeApiServer::reply(res, 200, s.objects.at(name));
    }
  }

  // A merge patch of an object's annotations (what the binder writes), emitted as MODIFIED.
  void patch(Kind k, const httplib::Request& req, httplib::Response& res) {
    const auto parts = FakeApiServer::segments(req.path);  // "", api, v1, namespaces, ns, <resource>, name
    const json patch = json::parse(req.body, nullptr, false);
    if (parts.size() != 7 || req.get_header_value("Content-Type") != "application/merge-patch+json" ||
        !patch.is_object()) {
      FakeApiServer::reply(res, 400, status_body(400, "BadRequest", "not a merge patch of " + parts.back()));
      return;
    }
    std::lock_guard lock(mu_);
    Store& s = store(k);
    if (s.patch_refusal != 0) {
      FakeApiServer::reply(res, s.patch_refusal,
                           status_body(s.patch_refusal, "Forbidden",
                                       parts[5] + " \"" + parts[6] +
                                           "\" is forbidden: User \"system:"
                                           "serviceaccount:kube-system:scheduler-extender\" cannot "
                                           "patch resource \"" +
                                           parts[5] + "\""));
      return;
    }
    auto it = s.objects.find(parts[4] + "/" + parts[6]);
    if (it == s.objects.end()) {
      FakeApiServer::reply(res, 404, status_body(404, "NotFound", parts[5] + " \"" + parts[6] + "\" not found"));
      return;
    }
    json object = it->second;
    const json meta = patch.value("metadata", json::object());
    if (meta.contains("uid") && meta["uid"] != object["metadata"].value("uid", "")) {
      FakeApiServer::reply(res, 422, status_body(422, "Invalid", "metadata.uid: Invalid value: field is immutable"));
      return;
    }
    if (meta.contains("annotations")) {
      for (const auto& [key, value] : meta["annotations"].items()) object["metadata"]["annotations"][key] = value;
    }
    put_locked(k, object);
    FakeApiServer::reply(res, 200, object);
  }

  FakeApiServer& server_;
  mutable std::mutex mu_;
  std::atomic<std::chrono::milliseconds> write_delay_{std::chrono::milliseconds(0)};
  std::uint64_t rv_ = 100;
  std::array<Store, kKindCount> stores_;
  bool serve_dra_ = true;
  std::map<std::string, Page> pages_;
  std::uint64_t next_page_id_ = 0;
  std::size_t page_cap_ = 0;
  std::map<std::string, int> binding_attempts_;
  BindingHook binding_hook_;
};

// Object builders.
inline json node_object(const std::string& name, std::int64_t gpus, std::map<std::string, std::string> annotations = {},
                        std::map<std::string, std::string> labels = {}) {
  json node{{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", name}, {"uid", "node-" + name}}}};
  if (!annotations.empty()) node["metadata"]["annotations"] = annotations;
  if (!labels.empty()) node["metadata"]["labels"] = labels;
  node["status"]["allocatable"] = {{"cpu", "64"}, {"memory", "512Gi"}, {"nvidia.com/gpu", std::to_string(gpus)}};
  node["status"]["capacity"] = node["status"]["allocatable"];
  return node;
}

inline json pod_object(const std::string& ns, const std::string& name, const std::string& uid, std::int64_t gpus,
                       const std::string& node = {}, const std::string& phase = "Running") {
  json container{{"name", "main"}, {"image", "busybox"}};
  if (gpus > 0) {
    container["resources"]["requests"] = {{"nvidia.com/gpu", std::to_string(gpus)}};
    container["resources"]["limits"] = {{"nvidia.com/gpu", std::to_string(gpus)}};
  }
  json pod{{"apiVersion", "v1"},
           {"kind", "Pod"},
           {"metadata", {{"name", name}, {"namespace", ns}, {"uid", uid}}},
           {"spec", {{"containers", json::array({container})}, {"schedulerName", "default-scheduler"}}},
           {"status", {{"phase", node.empty() ? "Pending" : phase}}}};
  if (!node.empty()) pod["spec"]["nodeName"] = node;
  return pod;
}

inline json claim_object(const std::string& ns, const std::string& name, const std::string& uid, const std::string& cls,
                         const std::string& size, const std::string& selected_node = {}) {
  json pvc{{"apiVersion", "v1"},
           {"kind", "PersistentVolumeClaim"},
           {"metadata", {{"name", name}, {"namespace", ns}, {"uid", uid}}},
           {"spec",
            {{"accessModes", {"ReadWriteOnce"}},
             {"storageClassName", cls},
             {"resources", {{"requests", {{"storage", size}}}}}}},
           {"status", {{"phase", "Pending"}}}};
  if (!selected_node.empty()) pvc["metadata"]["annotations"] = {{"volume.kubernetes.io/selected-node", selected_node}};
  return pvc;
}

inline json storage_class_object(const std::string& name, bool is_default) {
  json sc{{"apiVersion", "storage.k8s.io/v1"},
          {"kind", "StorageClass"},
          {"metadata", {{"name", name}}},
          {"provisioner", "kubernetes.io/no-provisioner"},
          {"volumeBindingMode", "WaitForFirstConsumer"}};
  if (is_default) sc["metadata"]["annotations"] = {{"storageclass.kubernetes.io/is-default-class", "true"}};
  return sc;
}

inline json csi_driver_object(const std::string& name, bool storage_capacity) {
  return {{"apiVersion", "storage.k8s.io/v1"},
          {"kind", "CSIDriver"},
          {"metadata", {{"name", name}}},
          {"spec", {{"storageCapacity", storage_capacity}, {"attachRequired", false}}}};
}

// A StorageClass provisioned by a CSI driver (WaitForFirstConsumer, as local storage is).
inline json csi_class_object(const std::string& name, const std::string& driver) {
  json sc = storage_class_object(name, false);
  sc["provisioner"] = driver;
  return sc;
}

// What external-provisioner publishes for one node: topology.<driver>/node=<node>.
inline json capacity_object(const std::string& name, const std::string& cls, const std::string& topology_key,
                            const std::string& node, const std::string& capacity, const std::string& max_volume = {}) {
  json c{{"apiVersion", "storage.k8s.io/v1"},
         {"kind", "CSIStorageCapacity"},
         {"metadata", {{"name", name}, {"namespace", "kube-system"}}},
         {"storageClassName", cls},
         {"nodeTopology", {{"matchLabels", {{topology_key, node}}}}},
         {"capacity", capacity}};
  if (!max_volume.empty()) c["maximumVolumeSize"] = max_volume;
  return c;
}

}  // namespace extender::kube::testing
