"""Rank the Hub model ids that public vLLM deployment files name, by an evidence that is not the wild answer key:
the number of distinct public repositories (bare git mirrors fetched by earlier sessions, the wild benchmark's own
repositories left out) whose vLLM files name the id, and the mentions in vLLM's recipes (vllm-project/recipes, counted
apart: a few of its files are in the wild set, its choice of models is not). Writes
benchmarks/catalog_candidates.tsv, the list catalog additions are chosen from (docs/catalog.md, twenty-second round).

    python3 benchmarks/catalog_candidates.py MIRRORS_DIR [--min-repos 2]

MIRRORS_DIR holds one bare repository per public repository, named OWNER+NAME (as the search tool's `fetch`
leaves them). A file counts when git calls it text, it mentions vllm, and its name is a deployment file's (YAML,
shell, env, Terraform, TOML, JSON, Dockerfile, Makefile, systemd unit, template). An id is ORG/NAME whose ORG is a
Hugging Face organisation the catalog or the list below knows; container images and hosted API names are dropped.
"""

from __future__ import annotations

import argparse
import collections
import csv
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEPLOY_SUFFIXES = (".yaml", ".yml", ".sh", ".bash", ".env", ".tf", ".tfvars", ".toml", ".j2", ".tpl", ".service",
                   ".conf", ".txt", ".json", "Dockerfile", "Makefile")
# organisations that publish checkpoints deployments serve, beyond those the catalog already names
EXTRA_ORGS = """Qwen meta-llama mistralai google microsoft deepseek-ai nvidia RedHatAI neuralmagic TheBloke hugging-quants
unsloth cyankiwi ibm-granite openai moonshotai zai-org THUDM MiniMaxAI tiiuae HuggingFaceTB allenai baidu tencent 01-ai
internlm CohereForAI CohereLabs NousResearch facebook bigcode BAAI intfloat Salesforce casperhansen Intel amd nm-testing
TinyLlama lmsys HuggingFaceH4 cognitivecomputations deepcogito XiaomiMiMo inclusionAI LiquidAI ServiceNow-AI arcee-ai
upstage stepfun-ai ByteDance-Seed OpenGVLab llava-hf Snowflake EleutherAI bigscience openbmb jinaai nomic-ai
Alibaba-NLP speakleash stelterlab QuantTrio warshanks mgoin LGAI-EXAONE sarvamai meetkai""".split()
NOT_MODELS = re.compile(r"^(nvidia/(cuda|dcgm-exporter|containers|k8s-device-plugin|gpu-operator|amd)|google/(cloud-sdk|"
                        r"gemini-.*)|openai/gpt-3\.5-turbo|intel/vllm|amd/tpu)$", re.I)
ID = re.compile(r"(?<![\w./@-])([A-Za-z0-9][A-Za-z0-9_.-]{1,40})/([A-Za-z0-9][A-Za-z0-9_.-]{1,100}[A-Za-z0-9])(?![\w/-])")
NOT_NAME = re.compile(r"\.(ya?ml|json|sh|py|txt|md|html|gguf|safetensors|bin|png|jpg|git|tar|gz|zip|js|ts)$|^v?\d", re.I)


def git_dir(path: str) -> str:
    return os.path.join(path, "repo") if os.path.isdir(os.path.join(path, "repo")) else path


def ids_in(text: str, orgs: set[str]) -> set[str]:
    found = set()
    for m in ID.finditer(text):
        org, name = m.group(1), m.group(2)
        model = f"{org}/{name}"
        if org.lower() in orgs and len(name) >= 3 and not NOT_NAME.search(name) and not NOT_MODELS.match(model):
            found.add(model.lower())
    return found


def repo_ids(gdir: str, orgs: set[str]) -> set[str]:
    grep = subprocess.run(["git", "-C", gdir, "grep", "-I", "-l", "-i", "vllm", "HEAD"], capture_output=True,
                          text=True, timeout=300)
    files = [f.split(":", 1)[1] for f in grep.stdout.splitlines() if ":" in f]
    files = [f for f in files if f.endswith(DEPLOY_SUFFIXES)]
    found: set[str] = set()
    for i in range(0, len(files), 200):
        batch = "".join(f"HEAD:{f}\n" for f in files[i:i + 200])
        out = subprocess.run(["git", "-C", gdir, "cat-file", "--batch"], input=batch, capture_output=True, text=True,
                             errors="replace", timeout=300).stdout
        found |= ids_in(out, orgs)
    return found


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mirrors")
    ap.add_argument("--min-repos", type=int, default=2)
    ap.add_argument("--out", default=os.path.join(HERE, "catalog_candidates.tsv"))
    args = ap.parse_args()
    with open(os.path.join(HERE, "wild", "INDEX.tsv"), encoding="utf-8") as f:
        wild_repos = {row["repo"] for row in csv.DictReader(f, delimiter="\t")}
    with open(os.path.join(ROOT, "vramlint", "data", "model_index.json"), encoding="utf-8") as f:
        catalog = set(json.load(f)["files"])
    with open(os.path.join(ROOT, "vramlint", "data", "unmodelled_models.json"), encoding="utf-8") as f:
        unmodelled = {m.lower() for m in json.load(f)["models"]}
    orgs = {m.split("/")[0] for m in catalog} | {o.lower() for o in EXTRA_ORGS}
    repos_naming: dict[str, set[str]] = collections.defaultdict(set)
    recipes: collections.Counter[str] = collections.Counter()
    counted = 0
    for entry in sorted(os.listdir(args.mirrors)):
        repo = entry.replace("+", "/", 1)
        gdir = git_dir(os.path.join(args.mirrors, entry))
        if repo == "vllm-project/recipes":
            # the recipes are Markdown; every mention counts, as the recipes' own choice of what to show
            out = subprocess.run(["git", "-C", gdir, "grep", "-h", "-I", "-E", "/", "HEAD", "--", "*.md", "*.yaml",
                                  "*.sh"], capture_output=True, text=True, errors="replace").stdout
            for line in out.splitlines():
                for model in ids_in(line, orgs):
                    recipes[model] += 1
        if repo in wild_repos:
            continue
        try:
            ids = repo_ids(gdir, orgs)
        except (subprocess.SubprocessError, OSError):
            continue
        counted += 1
        for model in ids:
            repos_naming[model].add(repo)
    rows = []
    for model in set(repos_naming) | set(recipes):
        n = len(repos_naming.get(model, ()))
        if n < args.min_repos and not recipes.get(model):
            continue
        status = "in-catalog" if model in catalog else ("not-modelled" if model in unmodelled else "missing")
        rows.append((model, n, recipes.get(model, 0), status))
    rows.sort(key=lambda r: (-r[1], -r[2], r[0]))
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(f"# {counted} public repositories (the wild set's {len(wild_repos)} left out); "
                "repos = distinct repositories whose vLLM deployment files name the id; "
                "recipes = mentions in vllm-project/recipes; status before this round's additions\n")
        f.write("model_id\trepos\trecipes\tstatus\n")
        for model, n, r, status in rows:
            f.write(f"{model}\t{n}\t{r}\t{status}\n")
    missing = sum(1 for r in rows if r[3] == "missing")
    print(f"{args.out}: {len(rows)} ids from {counted} repositories, {missing} outside the catalog", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
