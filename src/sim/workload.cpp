#include "extender/sim/workload.h"

#include <algorithm>
#include <map>
#include <random>
#include <sstream>

namespace extender::sim {
namespace {

constexpr std::int64_t kMaxValue = std::int64_t{1} << 40;

Result<std::int64_t> whole_number(const std::string& text, const std::string& where, const std::string& column) {
  const bool digits = !text.empty() && text.size() <= 13 &&
                      std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits || std::stoll(text) > kMaxValue) {
    return Error{where + ": " + column + " \"" + text.substr(0, 32) + "\" is not a whole number up to 2^40"};
  }
  return static_cast<std::int64_t>(std::stoll(text));
}

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  std::stringstream ls(line);
  while (std::getline(ls, cell, ',')) cells.push_back(cell);
  if (!line.empty() && line.back() == ',') cells.emplace_back();
  return cells;
}

// A CSV file with a header: each data line's cells by the header's column names.
class Table {
 public:
  static Result<Table> read(const std::string& text, const std::string& source,
                            const std::vector<std::string>& needed) {
    Table t;
    t.source_ = source;
    std::istringstream in(text);
    std::string line;
    for (std::size_t number = 1; std::getline(in, line); ++number) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (number == 1) {
        t.header_ = split(line);
        for (const auto& column : needed) {
          if (std::find(t.header_.begin(), t.header_.end(), column) == t.header_.end()) {
            return Error{source + ":1: the header has no column " + column};
          }
        }
        continue;
      }
      if (line.empty()) continue;
      auto cells = split(line);
      if (cells.size() != t.header_.size()) {
        return Error{source + ":" + std::to_string(number) + ": expected " + std::to_string(t.header_.size()) +
                     " fields, found " + std::to_string(cells.size())};
      }
      t.rows_.push_back({number, std::move(cells)});
    }
    if (t.header_.empty()) return Error{source + ": empty file"};
    return t;
  }
  std::size_t size() const { return rows_.size(); }
  bool has(const std::string& column) const {
    return std::find(header_.begin(), header_.end(), column) != header_.end();
  }
  std::string where(std::size_t row) const { return source_ + ":" + std::to_string(rows_[row].first); }
  const std::string& cell(std::size_t row, const std::string& column) const {
    const auto at = std::find(header_.begin(), header_.end(), column) - header_.begin();
    return rows_[row].second[static_cast<std::size_t>(at)];
  }
  Result<std::int64_t> number(std::size_t row, const std::string& column) const {
    return whole_number(cell(row, column), where(row), column);
  }

 private:
  std::string source_;
  std::vector<std::string> header_;
  std::vector<std::pair<std::size_t, std::vector<std::string>>> rows_;
};

bool plain_name(const std::string& name) {
  return !name.empty() && name.size() <= 253 && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
           c == '_';
  });
}

// A label value as Kubernetes validates it: at most 63 characters of [A-Za-z0-9-_.], starting and
// ending alphanumeric.
bool label_value(const std::string& v) {
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); };
  return !v.empty() && v.size() <= 63 && alnum(v.front()) && alnum(v.back()) &&
         std::all_of(v.begin(), v.end(), [&](char c) { return alnum(c) || c == '-' || c == '_' || c == '.'; });
}

// gpu_spec: empty, or models separated by '|'.
Result<std::vector<std::string>> gpu_models(const std::string& spec, const std::string& where) {
  std::vector<std::string> models;
  if (spec.empty()) return models;
  std::string model;
  std::stringstream in(spec);
  while (std::getline(in, model, '|')) {
    if (!label_value(model) || models.size() >= 64) {
      return Error{where + ": gpu_spec \"" + spec.substr(0, 64) + "\" is not GPU models separated by '|'"};
    }
    models.push_back(model);
  }
  if (spec.back() == '|') return Error{where + ": gpu_spec \"" + spec.substr(0, 64) + "\" ends with '|'"};
  std::sort(models.begin(), models.end());
  models.erase(std::unique(models.begin(), models.end()), models.end());
  return models;
}

Result<std::vector<WorkloadRow>> rows_of(const Table& t, const std::vector<std::string>& columns) {
  std::vector<WorkloadRow> rows;
  rows.reserve(t.size());
  for (std::size_t i = 0; i < t.size(); ++i) {
    WorkloadRow r;
    r.name = t.cell(i, columns[0]);
    if (!plain_name(r.name)) return Error{t.where(i) + ": name \"" + r.name.substr(0, 32) + "\" is not a plain name"};
    std::int64_t* out[] = {&r.num_gpu, &r.gpu_milli, &r.cpu_milli, &r.memory_mib};
    for (std::size_t k = 0; k < 4; ++k) {
      auto v = t.number(i, columns[k + 1]);
      if (!v) return v.error();
      *out[k] = *v;
    }
    if (r.num_gpu > 1024 || r.gpu_milli > 1000 * std::max<std::int64_t>(r.num_gpu, 1)) {
      return Error{t.where(i) + ": " + std::to_string(r.num_gpu) + " GPUs of " + std::to_string(r.gpu_milli) +
                   " thousandths is not a GPU request"};
    }
    if (t.has("gpu_spec")) {
      auto models = gpu_models(t.cell(i, "gpu_spec"), t.where(i));
      if (!models) return models.error();
      r.gpu_models = std::move(*models);
    }
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace

bool is_share(const WorkloadRow& r) { return r.num_gpu == 1 && r.gpu_milli > 0 && r.gpu_milli < 1000; }

std::int64_t gpu_milli_requested(const WorkloadRow& r) { return is_share(r) ? r.gpu_milli : 1000 * r.num_gpu; }

Result<std::vector<WorkloadRow>> parse_workload(const std::string& text, const std::string& source) {
  std::string header = text.substr(0, text.find('\n'));
  if (!header.empty() && header.back() == '\r') header.pop_back();
  if (header != "name,num_gpu,gpu_milli,cpu_milli,memory_mib" &&
      header != "name,num_gpu,gpu_milli,cpu_milli,memory_mib,gpu_spec") {
    return Error{source + ":1: expected the header name,num_gpu,gpu_milli,cpu_milli,memory_mib[,gpu_spec]"};
  }
  auto t = Table::read(text, source, {});
  if (!t) return t.error();
  return rows_of(*t, {"name", "num_gpu", "gpu_milli", "cpu_milli", "memory_mib"});
}

Result<std::vector<WorkloadRow>> parse_trace_pods(const std::string& text, const std::string& source) {
  const std::vector<std::string> columns = {"name", "num_gpu", "gpu_milli", "cpu_milli", "memory_mib"};
  auto t = Table::read(text, source, columns);
  if (!t) return t.error();
  return rows_of(*t, columns);
}

Result<std::vector<model::NodeSupply>> parse_trace_nodes(const std::string& text, const std::string& source,
                                                         const std::string& whole_resource,
                                                         std::int64_t gpu_memory_bytes) {
  auto t = Table::read(text, source, {"sn", "cpu_milli", "memory_mib", "gpu"});
  if (!t) return t.error();
  std::vector<model::NodeSupply> nodes;
  std::map<std::string, std::size_t> seen;
  for (std::size_t i = 0; i < t->size(); ++i) {
    model::NodeSupply n;
    n.name = t->cell(i, "sn");
    if (!plain_name(n.name)) return Error{t->where(i) + ": sn \"" + n.name.substr(0, 32) + "\" is not a plain name"};
    if (!seen.emplace(n.name, i).second) return Error{t->where(i) + ": node " + n.name + " is listed twice"};
    auto cpu = t->number(i, "cpu_milli");
    auto memory = t->number(i, "memory_mib");
    auto gpus = t->number(i, "gpu");
    if (!cpu) return cpu.error();
    if (!memory) return memory.error();
    if (!gpus) return gpus.error();
    if (*gpus > 1024) return Error{t->where(i) + ": " + std::to_string(*gpus) + " GPUs on one node"};
    n.cpu_milli = *cpu;
    n.memory_bytes = *memory << 20;
    if (t->has("model")) {
      const std::string& model = t->cell(i, "model");
      if (!model.empty() && !label_value(model)) {
        return Error{t->where(i) + ": model \"" + model.substr(0, 64) + "\" is not a label value"};
      }
      if (!model.empty()) n.labels[kGpuModelLabel] = model;
      n.gpu_model = model;
      n.labels_known = true;
    }
    if (*gpus > 0) {
      n.gpus[whole_resource] = *gpus;
      n.gpu_memory_bytes[whole_resource] = gpu_memory_bytes;
      n.gpu_devices = {whole_resource, *gpus, gpu_memory_bytes};
    }
    nodes.push_back(std::move(n));
  }
  return nodes;
}

std::vector<WorkloadRow> paper_workload(std::vector<WorkloadRow> pods, std::int64_t capacity_gpus, std::uint64_t seed,
                                        std::int64_t arrival_percent) {
  std::mt19937_64 rng(seed);
  std::shuffle(pods.begin(), pods.end(), rng);
  std::int64_t requested = 0;
  for (const auto& p : pods) requested += gpu_milli_requested(p);
  const std::int64_t target = capacity_gpus * 10 * arrival_percent;
  const std::size_t listed = pods.size();
  bool any_gpu = std::any_of(pods.begin(), pods.end(), [](const WorkloadRow& p) { return gpu_milli_requested(p) > 0; });
  std::uniform_int_distribution<std::size_t> draw(0, listed > 0 ? listed - 1 : 0);
  while (any_gpu && requested < target) {
    WorkloadRow copy = pods[draw(rng)];
    requested += gpu_milli_requested(copy);
    pods.push_back(std::move(copy));
  }
  return pods;
}

}  // namespace extender::sim
