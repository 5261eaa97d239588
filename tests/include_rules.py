#!/usr/bin/env python3
"""Checks the module rules of docs/architecture.md ("Layers", the include-rules table) against the
code: every #include of a project header in src/ and include/ names a module its file's module may
include, every third-party header is one its module may include (and "(.cpp)" ones appear in no
header), and each module's DEPS in CMakeLists.txt are exactly the table's. Files directly in src/
(main.cpp) belong to daemon. Exit 0 when all hold; otherwise one line per violation, exit 1.

usage: include_rules.py REPO_DIR [STAMP_FILE]   (the stamp is touched on success, for the build)
"""
import os
import re
import sys

THIRD_PARTY = {
    "simdjson": r"simdjson",
    "httplib": r"httplib",
    "nlohmann": r"nlohmann/",
    "spdlog": r"spdlog/",
    "yaml-cpp": r"yaml-cpp/",
    "openssl": r"openssl/",
    "zlib": r"zlib\.h",
    "prometheus": r"prometheus/",
    "fmt": r"fmt/",
    "gtest": r"gtest/",
}
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


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
                third[name] = "cpp" if where == "(.cpp)" else "any"
        rules[module] = (allowed, third)
    return rules


def module_of(rel):
    parts = rel.split("/")
    if parts[0] == "src":
        return "daemon" if len(parts) == 2 else parts[1]
    if parts[:2] == ["include", "extender"] and len(parts) > 3:
        return parts[2]
    return None


def check_includes(repo, rules):
    errors = []
    for top in ("src", "include"):
        for dirpath, _, files in os.walk(os.path.join(repo, top)):
            for name in sorted(files):
                if not name.endswith((".h", ".cpp")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, repo)
                module = module_of(rel)
                if module is None:
                    continue
                if module not in rules:
                    errors.append(f"{rel}: module {module} has no row in the include-rules table")
                    continue
                allowed, third = rules[module]
                is_header = name.endswith(".h")
                for number, line in enumerate(open(path, encoding="utf-8"), 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    target = m.group(2)
                    where = f"{rel}:{number}: {module} includes {target}"
                    own = re.match(r"extender/([a-z_]+)/", target)
                    if own and own.group(1) != module and own.group(1) not in allowed:
                        errors.append(f"{where}, but {module} may include only: {', '.join(sorted(allowed)) or 'nothing'}")
                    if m.group(1) != "<":
                        continue
                    for lib, pattern in THIRD_PARTY.items():
                        if re.match(pattern, target):
                            if lib not in third:
                                errors.append(f"{where}: {lib} is not among {module}'s third-party headers")
                            elif third[lib] == "cpp" and is_header:
                                errors.append(f"{where}: {lib} may appear in {module}'s .cpp files only")
    return errors


def check_cmake(repo, rules):
    text = open(os.path.join(repo, "CMakeLists.txt")).read()
    declared = {}
    for m in re.finditer(r"extender_module\((\w+)([^)]*)\)", text):
        words = m.group(2).split()
        deps = words[words.index("DEPS") + 1:] if "DEPS" in words else []
        declared[m.group(1)] = set(deps[:deps.index("LIBS")] if "LIBS" in deps else deps)
    errors = []
    for module, (allowed, _) in rules.items():
        if module not in declared:
            errors.append(f"CMakeLists.txt: no extender_module({module} ...)")
        elif declared[module] != allowed:
            errors.append(f"CMakeLists.txt: {module} DEPS {sorted(declared[module])} differ from the table's {sorted(allowed)}")
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
    print(f"include rules: {len(rules)} modules, all includes and CMake DEPS as docs/architecture.md states")
    if len(sys.argv) > 2:
        open(sys.argv[2], "w").close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
