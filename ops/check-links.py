#!/usr/bin/env python3
"""Checks the repository's Markdown: every relative link and #anchor resolves.

For each *.md file under the repository (build folders and .git left out):
- a link [text](target) or a reference definition [name]: target whose target is not a URL must
  name a file or folder that exists, relative to the Markdown file;
- its #anchor, if any, must be a heading of the file it names (GitHub's slugs: lower case,
  punctuation dropped, spaces to hyphens, -1, -2 ... for repeats), or of the same file for a
  bare #anchor;
- a repository path written in backticks (`docs/farm.md`, `ops/bench-farm.sh`,
  `Sources/ReelCore/...`) must exist too, so prose that names a file cannot point nowhere.
Fenced code blocks are skipped. Prints one line per problem and exits 1 if there is any.

Usage: ops/check-links.py [REPOSITORY]   (default: the repository this script is in)
"""
import os
import re
import sys
import unicodedata

SKIP_DIRS = {".git", ".build", ".build-release", ".swiftpm", "sample", "node_modules"}
# Top-level folders whose paths, written in backticks, must exist.
PATH_ROOTS = ("Sources/", "Tests/", "docs/", "ops/", "proto/", "deploy/", ".ci/")
URL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def markdown_files(root):
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith(".build"))
        for name in sorted(files):
            if name.endswith(".md"):
                yield os.path.join(directory, name)


def prose_lines(text):
    """(line number, line) outside fenced code blocks."""
    fence = None
    for number, line in enumerate(text.split("\n"), 1):
        stripped = line.strip()
        if fence:
            if stripped.startswith(fence) and stripped.strip("`~") == "":
                fence = None
            continue
        match = re.match(r"^(```+|~~~+)", stripped)
        if match:
            fence = match.group(1)
            continue
        yield number, line


def slug(heading):
    """GitHub's anchor for a heading's text."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links: their text
    text = text.replace("`", "").replace("*", "").replace("<", "").replace(">", "")
    text = text.strip().lower()
    kept = []
    for char in text:
        category = unicodedata.category(char)
        if char in "-_ " or category[0] in "LNM":
            kept.append(char)
    return "".join(kept).replace(" ", "-")


_anchors = {}


def anchors(path):
    if path not in _anchors:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        seen, found = {}, set()
        for _, line in prose_lines(text):
            match = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
            if not match:
                continue
            base = slug(match.group(2))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
        # Explicit anchors: <a id="..."> or <a name="...">.
        found.update(re.findall(r"<a\s+(?:id|name)=\"([^\"]+)\"", text))
        _anchors[path] = found
    return _anchors[path]


def strip_code_spans(line):
    return re.sub(r"(`+)(.+?)\1", lambda m: " " * len(m.group(0)), line)


def links(line):
    """Targets of inline links and reference definitions on one line, code spans left out."""
    bare = strip_code_spans(line)
    targets = [m.group(1) for m in re.finditer(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)", bare)]
    definition = re.match(r"^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$", bare)
    if definition:
        targets.append(definition.group(1))
    return targets


def code_paths(line):
    """Repository paths written alone in a code span: `docs/farm.md`, `ops/test.sh`."""
    for match in re.finditer(r"(`+)(.+?)\1", line):
        span = match.group(2).strip()
        if not span.startswith(PATH_ROOTS) or re.search(r"[\s*{}$<>|…]|\.\.\.", span):
            continue
        yield span.split("#")[0].rstrip(",.:;")


def check(root):
    problems = []
    for path in markdown_files(root):
        relative = os.path.relpath(path, root)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for number, line in prose_lines(text):
            for target in links(line):
                if URL.match(target):
                    continue
                file_part, _, anchor = target.partition("#")
                destination = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
                if not os.path.exists(destination):
                    problems.append(f"{relative}:{number}: link to {target}: no such file")
                    continue
                if anchor and destination.endswith(".md") and anchor not in anchors(destination):
                    problems.append(f"{relative}:{number}: link to {target}: no heading #{anchor} in {os.path.relpath(destination, root)}")
            for mentioned in code_paths(line):
                if not os.path.exists(os.path.join(root, mentioned)):
                    problems.append(f"{relative}:{number}: `{mentioned}` does not exist")
    return problems


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    problems = check(root)
    for problem in problems:
        print(problem)
    if problems:
        print(f"check-links: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
