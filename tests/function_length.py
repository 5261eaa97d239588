#!/usr/bin/env python3
"""Fails when a function in src/ or include/ is longer than 60 lines ("functions a reader can hold").

usage: function_length.py REPO [--max N] [--allow FILE]

Scans src/**/*.cpp, src/**/*.h and include/**/*.h; any other file there (a .hpp, a .cc) is a
finding, since it would go unread (include/extender/version.h.in, a template, is skipped). A
function's length runs from the line of its name (the signature) to the line of its closing
brace, both included. Prints `path:line name (N lines)` for
each function over the limit that the allow-list does not name, and exit status 1 when there is
any. The optional allow-list holds `path name` lines (# starts a comment); an entry that no longer
names a long function is also an error, so the list can only shrink.

The heuristic, without a C++ parser:
- comments, string literals (raw ones too), character literals and preprocessor lines are blanked
  first, keeping line breaks (a digit separator such as 1'000 is not a character literal);
- access specifiers (`public:` ...) are dropped from that text first, so a member function defined
  in its class body counts like any other;
- braces are then matched. A `{` opened at namespace or class scope is classified by the text that
  precedes it since the last `;` or block at that scope: it opens a function when that text, after
  dropping trailing `const`, `override`, `final`, `noexcept(...)`, `mutable`, `-> type` and a
  constructor's initializer list, ends with `)` (a `{` right after a member's name in that list
  is the member's brace initializer, skipped over); it opens a namespace (or `extern "C"`) scope after
  `namespace`/`extern`, a class scope after `class`/`struct`/`union` (not `enum`; a base clause may
  hold parentheses), and anything else (an initializer, an enum) is skipped over;
- everything inside a function's braces (lambdas, local types) counts toward that function.
"""
import os
import re
import sys

LIMIT = 60
QUALIFIERS = re.compile(
    r"(\s*(const|override|final|mutable|constexpr|noexcept\s*(\(\))?|&&?|->\s*[\w:<>,\s*&]+?))*\s*$")


def blank(text):
    """Comments, literals and preprocessor lines replaced by spaces; line breaks kept."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c in " \t":
            out.append(c)
            i += 1
            continue
        if line_start and c == "#":
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append(" \n")
                    i += 2
                    continue
                out.append(" ")
                i += 1
            continue
        line_start = False
        if c == "\n":
            line_start = True
            out.append(c)
            i += 1
        elif text.startswith("//", i):
            while i < n and text[i] != "\n":
                out.append(" ")
                i += 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
        elif c == '"' or (c == "R" and text.startswith('R"', i) and not re.match(r"\w", text[i - 1:i] or " ")):
            if c == "R":
                m = re.match(r'R"([^(\s]*)\(', text[i:])
                end = text.find(")" + m.group(1) + '"', i) if m else -1
                end = n if end < 0 else end + len(m.group(1)) + 2
            else:
                end = i + 1
                while end < n and text[end] not in '"\n':
                    end += 2 if text[end] == "\\" else 1
                end = min(end + 1, n)
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
        elif c == "'" and not re.search(r"\b\d[\w']*$", text[max(0, i - 40):i]):
            end = i + 1
            while end < n and text[end] not in "'\n":
                end += 2 if text[end] == "\\" else 1
            end = min(end + 1, n)
            out.append(" " * (end - i))
            i = end
        else:
            out.append(c)
            i += 1
    return "".join(out)


def split_initializers(header):
    """(the header before a constructor's `: member(...), member{...}` list, the list)."""
    depth = 0
    for k, c in enumerate(header):
        if c in "(<[":
            depth += 1
        elif c in ")>]":
            depth -= 1
        elif c == ":" and depth == 0 and header[k - 1:k] != ":" and header[k + 1:k + 2] != ":":
            return header[:k], header[k + 1:]
    return header, ""


ACCESS = re.compile(r"\b(public|protected|private)\s*:(?!:)")
CLASS_HEAD = re.compile(r"^(template\s*<.*>\s*)?(class|struct|union)\b[^(=]*?(\s*:(?!:).*)?$")


def classify(header):
    h = ACCESS.sub(" ", re.sub(r"\s+", " ", header)).strip()
    if CLASS_HEAD.match(h) and not re.match(r"^(template\s*<.*>\s*)?(class|struct|union)\s+[\w:]+\s+[\w:]+\s*\(", h):
        return "scope"
    words = set(re.findall(r"[A-Za-z_]\w*", h))
    if "namespace" in words or (h.startswith("extern") and "(" not in h):
        return "scope"
    sig, initializers = split_initializers(h) if "(" in h else ("", "")
    if re.search(r"[\w>]$", initializers.strip()):
        return "other"  # a member's brace initializer: `: member{`
    if QUALIFIERS.sub("", sig).endswith(")"):
        return "function"
    if "enum" not in words and words & {"class", "struct", "union"} and "=" not in h:
        return "scope"
    return "other"


NAME = re.compile(r"((?:[\w~]+(?:<[^()]*?>)?::)*(?:operator\s*(?:\(\)|[^\s(]+)|~?[A-Za-z_]\w*))\s*\(")
NOT_NAMES = {"decltype", "alignas", "noexcept", "requires", "sizeof", "__attribute__", "static_assert"}


def function_name(header):
    for m in NAME.finditer(header):
        if m.group(1).split("::")[-1] not in NOT_NAMES:
            return m.group(1), m.start(1)
    lam = re.search(r"([A-Za-z_]\w*)\s*=\s*\[", header)
    if lam:
        return lam.group(1), lam.start(1)
    return "?", len(header) - len(header.lstrip())


def functions(text):
    """(name, first line, last line) of each function defined in the text."""
    code = blank(text)
    found = []
    stack = []          # per open brace: "scope", "function" or "other"
    header_start = 0    # where the text before the next brace at this scope begins
    for k, c in enumerate(code):
        in_function = any(kind != "scope" for kind in stack)
        if c == ";" and not in_function:
            header_start = k + 1
        elif c == "{":
            if in_function:
                stack.append("other")
                continue
            header = code[header_start:k]
            kind = classify(header)
            stack.append(kind)
            if kind == "function":
                name, offset = function_name(header)
                found.append([name, code.count("\n", 0, header_start + offset) + 1, None])
            if kind != "other":
                header_start = k + 1
        elif c == "}":
            if not stack:
                continue
            kind = stack.pop()
            if kind == "function" and not any(s != "scope" for s in stack):
                open_ones = [f for f in found if f[2] is None]
                open_ones[-1][2] = code.count("\n", 0, k) + 1
            if kind != "other" and not any(s != "scope" for s in stack):
                header_start = k + 1
    return [(name, first, last) for name, first, last in found if last is not None]


def main(argv):
    repo = argv[1]
    limit = LIMIT
    allow_file = None
    args = argv[2:]
    while args:
        if args[0] == "--max":
            limit = int(args[1])
        elif args[0] == "--allow":
            allow_file = args[1]
        else:
            sys.exit(__doc__)
        args = args[2:]
    allowed = set()
    if allow_file:
        for line in open(allow_file, encoding="utf-8"):
            line = line.split("#")[0].strip()
            if line:
                path, name = line.split(None, 1)
                allowed.add((path, name.strip()))
    long_ones = []
    errors = 0
    for top in ("src", "include"):
        for root, dirs, names in os.walk(os.path.join(repo, top)):
            dirs.sort()
            for file_name in sorted(names):
                path = os.path.join(root, file_name)
                rel = os.path.relpath(path, repo)
                if not file_name.endswith((".cpp", ".h")):
                    if not rel.endswith(".h.in"):
                        print(f"{rel}: not a .cpp or .h file, which this check cannot read")
                        errors += 1
                    continue
                for name, first, last in functions(open(path, encoding="utf-8").read()):
                    if last - first + 1 > limit:
                        long_ones.append((rel, first, name, last - first + 1))
    for rel, first, name, length in long_ones:
        if (rel, name) not in allowed:
            print(f"{rel}:{first} {name} ({length} lines)")
            errors += 1
    for rel, name in sorted(allowed - {(r, n) for r, _, n, _ in long_ones}):
        print(f"{allow_file}: {rel} {name} is not over {limit} lines any more: drop it from the list")
        errors += 1
    if errors:
        print(f"function length: {errors} finding(s); functions in src/ and include/ are at most {limit} lines", file=sys.stderr)
        return 1
    print(f"function length: every function in src/ and include/ is at most {limit} lines"
          + (f" ({len(allowed)} allowed by {os.path.basename(allow_file)})" if allowed else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
