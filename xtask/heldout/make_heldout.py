#!/usr/bin/env python3
"""Build held-out code-localisation sets from fix commits in bare git mirrors.

Output format matches the dev set of `cargo xtask bench localize` (../shared/bench/localize-dev.jsonl): one JSON object per
line with keys instance_id, repo, base_commit, problem_statement, gold_files and patch (the fix
commit's diff of the gold files against its parent, from which the bench reads the gold
functions and lines).

For every configured repo:
  * walk `git log --first-parent HEAD` over the 4 years before HEAD's commit date
    (window anchored on HEAD, not on the wall clock, so reruns are reproducible);
  * keep non-merge commits (one parent) whose subject looks like a bug fix;
  * problem_statement = full commit message minus trailer lines
    (Signed-off-by:, Co-authored-by:, Change-Id:, "Fixes: #123", ...), >= 40 chars;
  * base_commit = first (only) parent;
  * gold_files = status-M files (renames detected and dropped) that are source
    files of the repo's language and not tests/docs/examples/benches/fixtures/
    vendored/generated; 1..3 files required;
  * drop commits whose message contains a gold file's full path verbatim;
  * order candidates by sha1(commit hex id) and take the first N;
  * patch = `git diff PARENT COMMIT -- GOLD_FILES` (the commit's short id ends instance_id).

`--add-patches` writes the patch into the sets as they are, without picking again (a mirror's
HEAD moves, and with it the four-year window).

stdlib only.  Usage:
    python3 xtask/heldout/make_heldout.py [--mirror-root ../.mirror] [--out-dir xtask/heldout]
                            [--sets python,rust,...] [--years 4] [--check-only | --add-patches]
"""
import argparse
import hashlib
import json
import os
import re
import statistics
import subprocess
import sys

# ---------------------------------------------------------------------------
# Configuration.  (repo, N, extra excluded path prefixes)
# django/django, scikit-learn/scikit-learn and matplotlib/matplotlib could not be
# mirrored (snapshots exceed the 500 MB fetch limit); substituted by
# sqlalchemy/sqlalchemy, pydantic/pydantic and aio-libs/aiohttp respectively.
# ---------------------------------------------------------------------------
SETS = {
    "python": {
        "exts": (".py",),
        "repos": [
            ("sqlalchemy/sqlalchemy", 15, ()),   # substitute for django/django
            ("pydantic/pydantic", 8, ()),        # substitute for scikit-learn/scikit-learn
            ("aio-libs/aiohttp", 7, ()),         # substitute for matplotlib/matplotlib
        ],
    },
    "rust": {
        "exts": (".rs",),
        "repos": [
            ("BurntSushi/ripgrep", 10, ()),
            ("clap-rs/clap", 10, ()),
            ("tokio-rs/tokio", 10, ()),
        ],
        # clap merges PRs with merge commits, so its first-parent history has few
        # non-merge fix commits; any shortfall is topped up from these repos.
        "fill": [("rust-lang/regex", ()), ("sharkdp/fd", ())],
    },
    "go": {
        "exts": (".go",),
        "repos": [
            ("cli/cli", 15, ()),
            ("gin-gonic/gin", 15, ()),
        ],
    },
    "ts": {
        "exts": (".ts", ".js"),
        "repos": [
            ("vuejs/core", 15, ()),
            ("sveltejs/svelte", 15, ()),
        ],
    },
    "java": {
        "exts": (".java",),
        "repos": [
            ("google/gson", 15, ("metrics/",)),  # gson/metrics = benchmarks
            ("mockito/mockito", 15, ()),
        ],
    },
    "cpp": {
        "exts": (".h", ".hpp", ".hh", ".cc", ".cpp", ".cxx", ".c"),
        "repos": [
            ("fmtlib/fmt", 15, ()),
            ("nlohmann/json", 15, ("single_include/",)),  # generated amalgamation
        ],
    },
}

# Subject must look like a bug fix.
FIX_RE = re.compile(
    r"\bfix(e[sd])?\b|\bbug\b|\bbug-?fix|Fixed #|\bcorrect|\bcrash|\berror\b|\bregression",
    re.I,
)
# ...but not like a cosmetic / docs / test / lint / infrastructure change.
NOT_FIX_RE = re.compile(
    r"\btypos?\b|\bspelling\b|\blint(er|ing)?\b|\bclippy\b|\bci\b|\bchangelog\b"
    r"|\bdocs?\b|\bdocumentation\b|\bdocstrings?\b|\bjavadoc\b|\bcomments?\b|\breadme\b"
    r"|\b(doc)?tests?\b|\bexamples?\b|\berror ?prone\b|\bwarnings?\b|^\s*revert\b",
    re.I,
)
# Conventional-commit types that are not bug fixes ("chore(deps): fix ...").
NON_FIX_TYPE_RE = re.compile(
    r"^\s*(chore|refactor|tests?|style|build|ci|docs?|perf|release|deps|types?)(\([^)]*\))?!?:",
    re.I,
)
HTML_COMMENT_RE = re.compile(r"<!--.*?-->", re.S)

# Path components (case-insensitive, exact) that mark non-source trees.
EXCLUDED_DIRS = {
    "test", "tests", "testing", "testdata", "test_data", "testutils", "test_utils",
    "__tests__", "__test__", "__mocks__", "__snapshots__", "snapshots", "spec", "specs",
    "e2e", "docs", "doc", "documentation", "examples", "example", "samples", "sample",
    "benches", "bench", "benchmark", "benchmarks", "fixtures", "fixture",
    "vendor", "vendored", "third_party", "thirdparty", "third-party", "external",
    "node_modules", "dist", "build", "generated", "gen",
    "scripts", "script", "tools", "ci", ".github", ".circleci",
    "site", "sites", "website", "playground", "playgrounds", "sandbox",
    "changes", "changelog", "changelog.d", "news",
}
# Path components matched by pattern (test crates/packages, benches, playgrounds).
EXCLUDED_DIR_RE = re.compile(
    r"^(tests?[-_].+|.+[-_]tests?|.*bench.*|.*playground.*|test-.*|.*-test-.*)$", re.I
)
# File names that are tests or tooling.
EXCLUDED_FILE_RE = re.compile(
    r"(^test_.*\.py$|.*_tests?\.py$|^conftest\.py$|^setup\.py$|^noxfile\.py$|^conf\.py$"
    r"|.*_test\.go$|.*_mock\.go$|^mock_.*\.go$"
    r"|.*\.(test|spec|bench)\.[cm]?[jt]sx?$|.*\.d\.ts$"
    r"|.*Tests?\.java$|.*TestCase\.java$|^Test[A-Z].*\.java$"
    r"|.*_tests?\.rs$|^tests\.rs$"
    r"|.*[_-]test\.(c|cc|cpp|cxx|h|hpp)$|^test[_-].*\.(c|cc|cpp|cxx|h|hpp)$)"
)
GENERATED_RE = re.compile(
    r"@generated|code generated|auto-?generated|do not edit|generated by", re.I
)

# Trailer lines removed from commit messages.
TRAILER_RE = re.compile(
    r"^\s*(?:[A-Za-z][A-Za-z-]*-by|Change-Id|Reviewed-on|PR-URL|Backport-PR-URL"
    r"|Pull-request(?:-[A-Za-z]+)?|Gerrit-[A-Za-z-]+|Cc|Signed-off|Co-authored)\s*:",
    re.I,
)
# "Fixes: #123", "Closes: https://...", "References: #1, #2" -> pure issue-reference trailers
REF_TRAILER_RE = re.compile(
    r"^\s*(?:Fix(?:es|ed)?|Close[sd]?|Resolve[sd]?|Ref(?:s|erences?)?|See(?:-also)?|Issue)"
    r"\s*:\s*(?:(?:[\w.-]+/[\w.-]+)?#\d+|https?://\S+|[\w.-]+/[\w.-]+#\d+)"
    r"(?:\s*[,;]?\s*(?:(?:[\w.-]+/[\w.-]+)?#\d+|https?://\S+))*\s*$",
    re.I,
)


def git(repo_dir, *args, **kw):
    return subprocess.run(
        ["git", "-C", repo_dir, "-c", "core.quotepath=off"] + list(args),
        check=True, capture_output=True, **kw,
    ).stdout


def mirror_dir(root, repo):
    owner, name = repo.split("/")
    return os.path.join(root, f"{owner}+{name}", "repo")


def clean_message(msg):
    msg = HTML_COMMENT_RE.sub("", msg.replace("\r\n", "\n"))  # PR-template comments
    lines = [l.rstrip() for l in msg.split("\n")]
    out = [l for l in lines if not TRAILER_RE.match(l) and not REF_TRAILER_RE.match(l)]
    # drop GitHub squash separators left dangling at the end and collapse blank runs
    while out and (not out[-1].strip() or set(out[-1].strip()) <= set("-")):
        out.pop()
    text, prev_blank = [], False
    for l in out:
        blank = not l.strip()
        if blank and prev_blank:
            continue
        text.append(l)
        prev_blank = blank
    return "\n".join(text).strip()


def is_source(path, exts, extra_prefixes):
    if not path.endswith(exts):
        return False
    if any(path.startswith(p) for p in extra_prefixes):
        return False
    parts = path.split("/")
    for comp in parts[:-1]:
        if comp.lower() in EXCLUDED_DIRS or EXCLUDED_DIR_RE.match(comp):
            return False
    if EXCLUDED_FILE_RE.match(parts[-1]):
        return False
    return True


class BlobReader:
    """Persistent `git cat-file --batch` to read file heads cheaply."""

    def __init__(self, repo_dir):
        self.p = subprocess.Popen(
            ["git", "-C", repo_dir, "cat-file", "--batch"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        )

    def read(self, rev, path):
        self.p.stdin.write(f"{rev}:{path}\n".encode())
        self.p.stdin.flush()
        header = self.p.stdout.readline().decode()
        if header.endswith("missing\n"):
            return None
        size = int(header.split()[2])
        data = self.p.stdout.read(size)
        self.p.stdout.read(1)  # trailing LF
        return data

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def iter_commits(repo_dir, since_ts):
    """Yield (sha, parents, message, [(status, path), ...]) on first-parent history."""
    raw = git(
        repo_dir, "log", "--first-parent", f"--since={since_ts}", "--no-renames",
        "--name-status", "--no-color", "--format=%x1e%H%x1f%P%x1f%B%x1f", "HEAD",
    ).decode("utf-8", "replace")
    for chunk in raw.split("\x1e")[1:]:
        sha, parents, msg, files = chunk.split("\x1f", 3)
        changes = []
        for line in files.strip("\n").split("\n"):
            if not line.strip():
                continue
            fields = line.split("\t")
            changes.append((fields[0], fields[-1]))
        yield sha, parents.split(), msg, changes


def candidates_for(repo, repo_dir, exts, extra_prefixes, years):
    head_ts = int(git(repo_dir, "log", "-1", "--format=%ct", "HEAD").decode().strip())
    since = head_ts - int(years * 365.25 * 86400)
    blobs = BlobReader(repo_dir)
    stats = dict(commits=0, merges=0, not_fix=0, short_msg=0, gold_count=0, path_leak=0, kept=0)
    out = []
    try:
        for sha, parents, msg, changes in iter_commits(repo_dir, since):
            stats["commits"] += 1
            if len(parents) != 1:
                stats["merges"] += 1
                continue
            subject = msg.strip().split("\n", 1)[0]
            if (not FIX_RE.search(subject) or NOT_FIX_RE.search(subject)
                    or NON_FIX_TYPE_RE.match(subject)):
                stats["not_fix"] += 1
                continue
            text = clean_message(msg)
            if len(text) < 40:
                stats["short_msg"] += 1
                continue
            gold = sorted(
                p for st, p in changes
                if st == "M" and not p.startswith('"') and is_source(p, exts, extra_prefixes)
            )
            # drop generated files (header marker at the base revision)
            gold = [
                p for p in gold
                if not GENERATED_RE.search(
                    (blobs.read(parents[0], p) or b"")[:1024].decode("utf-8", "replace"))
            ]
            if not 1 <= len(gold) <= 3:
                stats["gold_count"] += 1
                continue
            if any(p in msg for p in gold):
                stats["path_leak"] += 1
                continue
            stats["kept"] += 1
            out.append({
                "instance_id": f"{repo.replace('/', '__')}-{sha[:12]}",
                "repo": repo,
                "base_commit": parents[0],
                "problem_statement": text,
                "gold_files": gold,
                "_key": hashlib.sha1(sha.encode()).hexdigest(),
            })
    finally:
        blobs.close()
    out.sort(key=lambda r: r["_key"])
    return out, stats


def tree_complete(repo_dir, rev):
    """True if every blob of rev's tree is present (mirrors are partial clones that
    may omit some large blobs; a base we cannot fully check out is useless)."""
    t = git(repo_dir, "ls-tree", "-r", "--format=%(objecttype) %(objectname)", rev).decode()
    blobs = [l.split()[1] for l in t.splitlines() if l.startswith("blob ")]
    out = subprocess.run(
        ["git", "-C", repo_dir, "cat-file", "--batch-check"],
        input="\n".join(blobs) + "\n", capture_output=True, text=True, check=True,
    ).stdout
    return " missing" not in out


def pick(repo, repo_dir, cfg, extra, n, args, set_name):
    cands, st = candidates_for(repo, repo_dir, cfg["exts"], extra, args.years)
    picked, incomplete = [], 0
    for r in cands:
        if len(picked) >= n:
            break
        if not tree_complete(repo_dir, r["base_commit"]):
            incomplete += 1
            continue
        r.pop("_key")
        r["patch"] = fix_patch(repo_dir, r)
        picked.append(r)
    st["base_tree_incomplete_skipped"] = incomplete
    print(f"[{set_name}] {repo}: {st} -> picked {len(picked)}/{n}", file=sys.stderr)
    return picked


def fix_patch(repo_dir, r):
    """The diff of r's gold files from its base to its fix commit, whose short id ends its
    instance_id (the base is the fix's only parent)."""
    short = r["instance_id"].rsplit("-", 1)[1]
    fix = git(repo_dir, "rev-parse", "--verify", short + "^{commit}").decode().strip()
    parent = git(repo_dir, "rev-parse", fix + "^").decode().strip()
    if parent != r["base_commit"]:
        raise SystemExit(f"{r['instance_id']}: {fix}'s parent is {parent}, not its base")
    return git(repo_dir, "diff", "--no-color", "--no-ext-diff", "--no-renames",
               r["base_commit"], fix, "--", *r["gold_files"]).decode("utf-8", "replace")


def add_patches(args):
    wanted = args.sets.split(",") if args.sets else list(SETS)
    for set_name in wanted:
        path = os.path.join(args.out_dir, f"{set_name}.jsonl")
        with open(path) as f:
            rows = [json.loads(line) for line in f]
        for r in rows:
            r["patch"] = fix_patch(mirror_dir(args.mirror_root, r["repo"]), r)
        with open(path, "w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
        print(f"wrote {path} ({len(rows)} instances, with patches)", file=sys.stderr)


def build(args):
    wanted = args.sets.split(",") if args.sets else list(SETS)
    for set_name in wanted:
        cfg = SETS[set_name]
        rows = []
        target = sum(n for _, n, _ in cfg["repos"])
        for repo, n, extra in cfg["repos"]:
            rd = mirror_dir(args.mirror_root, repo)
            if not os.path.isdir(rd):
                print(f"[{set_name}] SKIP {repo}: no mirror at {rd}", file=sys.stderr)
                continue
            rows.extend(pick(repo, rd, cfg, extra, n, args, set_name))
        for repo, extra in cfg.get("fill", []):
            need = target - len(rows)
            if need <= 0:
                break
            rd = mirror_dir(args.mirror_root, repo)
            if not os.path.isdir(rd):
                print(f"[{set_name}] SKIP fill {repo}: no mirror at {rd}", file=sys.stderr)
                continue
            rows.extend(pick(repo, rd, cfg, extra, need, args, set_name + " fill"))
        path = os.path.join(args.out_dir, f"{set_name}.jsonl")
        with open(path, "w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
        print(f"wrote {path} ({len(rows)} instances)", file=sys.stderr)


def check(args):
    wanted = args.sets.split(",") if args.sets else list(SETS)
    ok_all = True
    for set_name in wanted:
        path = os.path.join(args.out_dir, f"{set_name}.jsonl")
        errors, per_repo, lens, ids = [], {}, [], set()
        with open(path) as f:
            for i, line in enumerate(f, 1):
                try:
                    r = json.loads(line)
                except Exception as e:  # noqa: BLE001
                    errors.append(f"line {i}: bad json: {e}")
                    continue
                keys = {"instance_id", "repo", "base_commit", "problem_statement", "gold_files",
                        "patch"}
                if set(r) != keys:
                    errors.append(f"line {i}: keys {sorted(r)}")
                if r["instance_id"] in ids:
                    errors.append(f"line {i}: duplicate id {r['instance_id']}")
                ids.add(r["instance_id"])
                if not re.fullmatch(r"[0-9a-f]{40}", r["base_commit"]):
                    errors.append(f"line {i}: bad base_commit")
                if not 1 <= len(r["gold_files"]) <= 3 or len(r["problem_statement"]) < 40:
                    errors.append(f"line {i}: gold/msg size")
                patched = set(re.findall(r"^\+\+\+ b/(.+)$", r.get("patch", ""), re.M))
                if patched != set(r["gold_files"]):
                    errors.append(f"line {i}: patch changes {sorted(patched)}, not the gold files")
                rd = mirror_dir(args.mirror_root, r["repo"])
                try:
                    t = git(rd, "cat-file", "-t", r["base_commit"]).decode().strip()
                    if t != "commit":
                        errors.append(f"line {i}: base_commit is a {t}")
                except subprocess.CalledProcessError:
                    errors.append(f"line {i}: base_commit missing in {rd}")
                for p in r["gold_files"]:
                    rc = subprocess.run(
                        ["git", "-C", rd, "cat-file", "-e", f"{r['base_commit']}:{p}"],
                        capture_output=True).returncode
                    if rc != 0:
                        errors.append(f"line {i}: {p} missing at base")
                per_repo[r["repo"]] = per_repo.get(r["repo"], 0) + 1
                lens.append(len(r["problem_statement"]))
        med = statistics.median(lens) if lens else 0
        print(f"{path}: {len(lens)} instances; repos {per_repo}; "
              f"median message length {med:.0f} chars; errors {len(errors)}")
        for e in errors:
            print("   ", e)
        ok_all &= not errors
    return ok_all


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirror-root", default="../.mirror")
    ap.add_argument("--out-dir", default=os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--sets", default="", help="comma list of " + ",".join(SETS))
    ap.add_argument("--years", type=float, default=4.0)
    ap.add_argument("--check-only", action="store_true")
    ap.add_argument("--add-patches", action="store_true",
                    help="write each instance's patch into the sets as they are")
    args = ap.parse_args()
    if args.add_patches:
        add_patches(args)
    elif not args.check_only:
        build(args)
    sys.exit(0 if check(args) else 1)


if __name__ == "__main__":
    main()
