#!/usr/bin/env python3
"""Checks the module rules of docs/architecture.md ("Layers", the include-rules table) against the
code, and refuses whatever it cannot classify. Exit 0 when all hold; otherwise one line per
violation, exit 1.

usage: include_rules.py REPO_DIR [STAMP_FILE]   (the stamp is touched on success, for the build)

Files: every file under src/ and include/ is a .h or .cpp of a module: src/<module>/*, files
directly in src/ (main.cpp, the daemon's), include/extender/<module>/*.h. The one exception is the
generated version header's template, include/extender/version.h.in. Anything else (a .hpp, a
nested folder, a header directly under include/extender/) is refused.

Includes: every `#include` is one of
- `"extender/<module>/<name>.h"`: a header of include/ that exists, of the file's own module or one
  the table lets it include;
- `"extender/version.h"`: the generated version header (any module);
- `"<name>.h"`: a private header of src/ that exists in the including file's folder (never from
  include/, whose headers are public);
- `<name>`: a standard C++ header, a POSIX or Linux header of the list below, or a header of a
  third-party library the table lets the module include ("(.cpp)": in .cpp files only).
Relative paths, project headers in <>, third-party headers in quotes, unknown libraries and
computed includes are refused.

CMake: each module's DEPS in CMakeLists.txt are exactly the table's modules, and its LIBS exactly
the targets of the table's third-party libraries.
"""
import os
import re
import sys

# Third-party libraries: the headers each provides, and the CMake targets that link it.
THIRD_PARTY = {
    "simdjson": (r"simdjson\.h", {"simdjson::simdjson"}),
    "httplib": (r"httplib\.h", {"PkgConfig::HTTPLIB"}),
    "nlohmann": (r"nlohmann/[\w/]+\.hpp", {"nlohmann_json::nlohmann_json"}),
    "spdlog": (r"spdlog/[\w/]+\.h", {"spdlog::spdlog"}),
    "yaml-cpp": (r"yaml-cpp/[\w/]+\.h", {"yaml-cpp"}),
    "openssl": (r"openssl/\w+\.h", {"OpenSSL::SSL", "OpenSSL::Crypto"}),
    "zlib": (r"zlib\.h", {"ZLIB::ZLIB"}),
    "prometheus": (r"prometheus/[\w/]+\.h", {"prometheus-cpp::core"}),
}

STANDARD = set("""
algorithm any array atomic barrier bit bitset cassert cctype cerrno cfenv cfloat charconv chrono
cinttypes climits clocale cmath compare complex concepts condition_variable coroutine csetjmp
csignal cstdarg cstddef cstdint cstdio cstdlib cstring ctime cuchar cwchar cwctype deque exception
execution filesystem format forward_list fstream functional future initializer_list iomanip ios
iosfwd iostream istream iterator latch limits list locale map memory memory_resource mutex new
numbers numeric optional ostream queue random ranges ratio regex scoped_allocator semaphore set
shared_mutex source_location span sstream stack stdexcept stop_token streambuf string string_view
syncstream system_error thread tuple type_traits typeindex typeinfo unordered_map unordered_set
utility valarray variant vector version
""".split())

SYSTEM = set("""
arpa/inet.h dirent.h dlfcn.h emmintrin.h errno.h fcntl.h malloc.h netdb.h netinet/in.h
netinet/tcp.h poll.h pthread.h sched.h signal.h sys/epoll.h sys/eventfd.h sys/ioctl.h sys/mman.h
sys/resource.h sys/socket.h sys/stat.h sys/time.h sys/timerfd.h sys/types.h sys/uio.h sys/un.h
sys/wait.h time.h unistd.h
""".split())

GENERATED = {"extender/version.h"}
VERSION_TEMPLATE = "include/extender/version.h.in"

DIRECTIVE = re.compile(r"^\s*#\s*(include\w*|import)\b\s*(.*)$")
FORM = re.compile(r'^([<"])([^>"]*)([>"])$')


def parse_table(doc_text):
    block = re.search(r"<!-- include-rules.*?-->(.*?)<!-- end include-rules -->", doc_text, re.S)
    if not block:
        sys.exit("docs/architecture.md has no include-rules table")
    rules = {}
    for line in block.group(1).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or cells[0] in ("module", "") or set(cells[0]) <= set("-"):
            continue
        module, deps, libs = cells
        allowed = set() if deps == "—" else {d.strip() for d in deps.split(",")}
        third = {}
        if libs != "—":
            for item in libs.split(","):
                name, _, where = item.strip().partition(" ")
                if name not in THIRD_PARTY:
                    sys.exit(f"docs/architecture.md: {module}'s third-party library {name} is unknown to "
                             "tests/include_rules.py (add its headers and CMake targets to THIRD_PARTY)")
                third[name] = "cpp" if where == "(.cpp)" else "any"
        rules[module] = (allowed, third)
    return rules


def module_of(rel):
    """The module a file belongs to, or None when it belongs to none."""
    parts = rel.split("/")
    if parts[0] == "src":
        if len(parts) == 2:
            return "daemon"
        return parts[1] if len(parts) == 3 else None
    if parts[0] == "include" and len(parts) == 4 and parts[1] == "extender":
        return parts[2]
    return None


def classify(repo, rel, bracket, target):
    """('module', name) | ('generated',) | ('private',) | ('standard',) | ('system',) |
    ('third', lib) | ('refused', why)."""
    if bracket == '"':
        if target in GENERATED:
            return ("generated",)
        own = re.fullmatch(r"extender/([a-z_]+)/[a-z0-9_]+\.h", target)
        if own:
            if not os.path.isfile(os.path.join(repo, "include", target)):
                return ("refused", f"include/{target} does not exist")
            return ("module", own.group(1))
        if re.fullmatch(r"[a-z0-9_]+\.h", target):
            if not rel.startswith("src/"):
                return ("refused", "a public header includes a private one")
            if not os.path.isfile(os.path.join(repo, os.path.dirname(rel), target)):
                return ("refused", f"no {target} beside {rel} (third-party headers go in <>)")
            return ("private",)
        if ".." in target.split("/") or target.startswith("./"):
            return ("refused", "a relative path (name a project header extender/<module>/<name>.h)")
        if target.startswith("extender/"):
            return ("refused", "not a header extender/<module>/<name>.h")
        return ("refused", "a quoted include that is no project header (third-party headers go in <>)")
    if target in STANDARD:
        return ("standard",)
    if target in SYSTEM:
        return ("system",)
    for lib, (pattern, _) in THIRD_PARTY.items():
        if re.fullmatch(pattern, target):
            return ("third", lib)
    if target.startswith("extender/"):
        return ("refused", "a project header in <> (write \"extender/...\")")
    return ("refused", "a header of no known library (tests/include_rules.py lists the known ones)")


def check_file(repo, rel, module, rules):
    errors = []
    allowed, third = rules[module]
    is_header = rel.endswith(".h")
    for number, line in enumerate(open(os.path.join(repo, rel), encoding="utf-8"), 1):
        d = DIRECTIVE.match(line)
        if not d:
            continue
        text = re.sub(r"\s*(//|/\*).*$", "", d.group(2).strip())
        where = f"{rel}:{number}: {module} includes {text}"
        form = FORM.match(text)
        if d.group(1) != "include" or not form or form.group(1) + form.group(3) not in ('<>', '""'):
            errors.append(f"{where}: not an #include \"...\" or #include <...>")
            continue
        kind = classify(repo, rel, form.group(1), form.group(2))
        if kind[0] == "refused":
            errors.append(f"{where}: {kind[1]}")
        elif kind[0] == "module" and kind[1] != module and kind[1] not in allowed:
            errors.append(f"{where}, but {module} may include only: {', '.join(sorted(allowed)) or 'nothing'}")
        elif kind[0] == "third":
            if kind[1] not in third:
                errors.append(f"{where}: {kind[1]} is not among {module}'s third-party headers")
            elif third[kind[1]] == "cpp" and is_header:
                errors.append(f"{where}: {kind[1]} may appear in {module}'s .cpp files only")
    return errors


def check_includes(repo, rules):
    errors = []
    for top in ("src", "include"):
        for dirpath, dirs, files in os.walk(os.path.join(repo, top)):
            dirs.sort()
            for name in sorted(files):
                rel = os.path.relpath(os.path.join(dirpath, name), repo)
                if rel == VERSION_TEMPLATE:
                    continue
                module = module_of(rel)
                if not name.endswith((".h", ".cpp")) or (top == "include" and not name.endswith(".h")):
                    errors.append(f"{rel}: neither a module's .h nor its .cpp")
                elif module is None:
                    errors.append(f"{rel}: in no module's folder (src/<module>/ or include/extender/<module>/)")
                elif module not in rules:
                    errors.append(f"{rel}: module {module} has no row in the include-rules table")
                else:
                    errors += check_file(repo, rel, module, rules)
    return errors


def cmake_modules(text):
    """{module: (DEPS, LIBS, stray words)} of each extender_module(...) call."""
    declared = {}
    for m in re.finditer(r"^\s*extender_module\((\w+)([^)]*)\)", text, re.M):
        lists = {"": [], "DEPS": [], "LIBS": []}
        current = ""
        for word in re.sub(r"#[^\n]*", "", m.group(2)).split():
            if word in ("DEPS", "LIBS"):
                current = word
            else:
                lists[current].append(word)
        declared[m.group(1)] = (set(lists["DEPS"]), set(lists["LIBS"]), lists[""])
    return declared


def check_cmake(repo, rules):
    declared = cmake_modules(open(os.path.join(repo, "CMakeLists.txt"), encoding="utf-8").read())
    errors = []
    for module, (allowed, third) in rules.items():
        if module not in declared:
            errors.append(f"CMakeLists.txt: no extender_module({module} ...)")
            continue
        deps, libs, stray = declared[module]
        if stray:
            errors.append(f"CMakeLists.txt: {module} has {' '.join(stray)} before DEPS or LIBS")
        if deps != allowed:
            errors.append(f"CMakeLists.txt: {module} DEPS {sorted(deps)} differ from the table's {sorted(allowed)}")
        expected = set().union(*(THIRD_PARTY[lib][1] for lib in third)) if third else set()
        if libs != expected:
            errors.append(f"CMakeLists.txt: {module} LIBS {sorted(libs)} differ from the targets of the "
                          f"table's third-party headers {sorted(expected)}")
    for module in declared.keys() - rules.keys():
        errors.append(f"CMakeLists.txt: module {module} has no row in the include-rules table")
    return errors


def main():
    repo = sys.argv[1]
    rules = parse_table(open(os.path.join(repo, "docs/architecture.md"), encoding="utf-8").read())
    errors = check_includes(repo, rules) + check_cmake(repo, rules)
    for e in errors:
        print(f"include rules: {e}", file=sys.stderr)
    if errors:
        print(f"include rules: {len(errors)} violation(s) of docs/architecture.md (Layers)", file=sys.stderr)
        return 1
    print(f"include rules: {len(rules)} modules, all includes and CMake DEPS and LIBS as docs/architecture.md states")
    if len(sys.argv) > 2:
        open(sys.argv[2], "w").close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
