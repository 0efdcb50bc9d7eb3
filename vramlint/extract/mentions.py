"""Files that plainly mention vLLM but yield no server: where they mention it and why no server was read, so a
scan never ends in a silent "No vLLM server found" for them.

Plain mentions: a vLLM image (under an image key, or a whole image reference under any key), a vLLM command
(`vllm serve`, `python -m vllm.entrypoints...`), an engine or backend setting naming vLLM (`engine: vllm`,
`backend: vllm`, `backendType: vllm`), or a custom resource of an operator kind that mentions vLLM. A file that
only names vLLM in prose (a comment, a description) is not one. The settings of an operator vramlint reads (the
images KubeAI's chart pins for its Models) are no mention: they deploy no server of their own.
"""

from __future__ import annotations

import re

from vramlint.lean_dataclass import dataclass

_COMMAND = re.compile(r"(?<![\w/.-])(vllm\s+serve\b|-m\s+vllm\.entrypoints\.[\w.]+|vllm\.entrypoints\.openai\.api_server)")
_IMAGE = re.compile(r"^\s*(?:-\s*)?(image|repository|imageName|image_name|newName)\s*:\s*[\"']?([^\s\"'#]*vllm[^\s\"'#]*)",
                    re.IGNORECASE)
# Any key whose value is a whole image reference (a repository path with a tag or a digest): charts name the image
# under keys of their own (`service.image.version: vllm/vllm-openai:v0.19.0`); a bare word is not one.
_KEY_VALUE = re.compile(r"^\s*(?:-\s*)?[\w.-]+\s*:\s*[\"']?([^\s\"'#]+?)[\"']?\s*(#.*)?$")
_FULL_REFERENCE = re.compile(r"^[a-z0-9][a-z0-9._-]*(:\d+)?(/[a-z0-9._-]+)+(:[\w][\w.-]{0,127}|@sha256:[0-9a-f]{64})$")
_ENGINE = re.compile(r"^\s*(?:-\s*)?(engine|backend|backendType|backend_type|inferenceEngine|runtime|framework)\s*:\s*"
                     r"[\"']?(vllm)[\"']?\s*(#.*)?$", re.IGNORECASE)
# `engine: {type: vllm}` written as a block: `type: vllm` under an engine-like key
_NESTED_ENGINE = re.compile(r"^(\s*)(?:-\s*)?(type|name|kind)\s*:\s*[\"']?vllm[\"']?\s*(#.*)?$", re.IGNORECASE)
_PARENT = re.compile(r"^(\s*)(?:-\s*)?(engine|backend|backendType|backend_type|inferenceEngine|runtime|framework)\s*:"
                     r"\s*(#.*)?$", re.IGNORECASE)
# Kustomize's helmCharts (its HelmChartInflationGenerator): `- name: <chart>` entries, a chart whose name says vLLM
_HELM_CHART_NAME = re.compile(r"^(\s*)-\s*name\s*:\s*[\"']?([\w.-]*vllm[\w.-]*)[\"']?\s*(#.*)?$", re.IGNORECASE)
_HELM_CHARTS_KEY = re.compile(r"^(\s*)helmCharts\s*:\s*(#.*)?$")
# A Ray Serve application whose import path names vLLM (KubeRay's serveConfigV2, and operators that embed it)
_SERVE_APP = re.compile(r"^\s*(?:-\s*)?import_path\s*:\s*[\"']?([^\s\"'#]*vllm[^\s\"'#]*)", re.IGNORECASE)
# a command that only names vLLM's command line (stops, finds, prints or waits for it), written before it on its line
_NAMES_ONLY = re.compile(r"(?:^|[\s;&|(`'\"])(?:pkill|pgrep|killall|kill|grep|egrep|fgrep|ps|echo|printf|tail|"
                         r"curl|wget)\b[^;&|]*$")
_KIND = re.compile(r"^kind:\s*[\"']?(\w+)", re.MULTILINE)
_API = re.compile(r"^apiVersion:\s*[\"']?([\w./-]+)", re.MULTILINE)
_WORKFLOW = re.compile(r"^(jobs|steps|stages|pipeline|tasks)\s*:", re.MULTILINE)
# GitHub Actions (vramlint.extract.github_actions reads their `run:` steps): a workflow's jobs, a composite action
_GITHUB_JOBS = re.compile(r"^(?:jobs\s*:|runs\s*:\s*$)", re.MULTILINE)
_GITHUB_STEPS = re.compile(r"^\s+(?:runs-on|using)\s*:", re.MULTILINE)
# a compose file: services at the top level; an image given only by a variable (`${VLLM_IMAGE}`, `$VLLM_IMAGE`)
_COMPOSE_SERVICES = re.compile(r"^services\s*:", re.MULTILINE)
_IMAGE_VARIABLE = re.compile(r"^-?\s*image\s*:\s*[\"']?\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?[\"']?\s*(#.*)?$")


# A container image written as a template expression or a variable, and options only vLLM's server takes: the
# container's arguments are vLLM's, but whether its image runs vLLM is not known (a Jinja2/Helm/compose value)
_IMAGE_UNKNOWN = re.compile(r"^\s*(?:-\s*)?image\s*:\s*[\"']?(\{\{|\$\{?[A-Za-z_]|\u2983)")
_VLLM_ONLY_OPTION = re.compile(r"(?<![\w-])--(gpu-memory-utilization|max-model-len|tool-call-parser|"
                               r"enable-auto-tool-choice|max-num-batched-tokens|enable-prefix-caching)(?![\w-])")
ARGS_ONLY = "a container whose arguments are vLLM's options"


@dataclass
class Mention:
    line: int
    what: str  # "a vLLM image", "a vLLM command line", "an engine setting naming vLLM"
    text: str  # the line as written (trimmed)


def first_mention(text: str) -> Mention | None:
    """The first line that plainly mentions vLLM (comments skipped), or None."""
    if "vllm" not in text.lower():
        return _args_only_mention(text.splitlines()) if has_vllm_only_option(text) else None
    from vramlint.cmdline import is_vllm_image

    lines = text.splitlines()
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or "vllm" not in line.lower():
            continue
        code = line.split(" #", 1)[0]
        image = _IMAGE.match(code)
        # vLLM's image by is_vllm_image's rule, as everywhere: not a stand-in, not a companion (proxy, gateway, UI)
        if image and is_vllm_image(image.group(2)):
            return Mention(number, "a vLLM image", stripped)
        reference = _KEY_VALUE.match(code)
        if reference and _FULL_REFERENCE.match(reference.group(1)) and is_vllm_image(reference.group(1)):
            return Mention(number, "a vLLM image", stripped)
        command = _COMMAND.search(code)
        if command and _NAMES_ONLY.search(code[:command.start()]):
            # `pkill -f vllm.entrypoints...`, `pgrep`, `echo "vllm serve ..."`: no server starts on this line (a
            # file that only stops, finds or prints it starts none, as extract/shell_scripts `_may_run_vllm` says)
            continue
        if command:
            return Mention(number, "a vLLM command line", stripped)
        if _ENGINE.match(line):
            return Mention(number, "an engine setting naming vLLM", stripped)
        nested = _NESTED_ENGINE.match(line)
        if nested and _under_engine_key(lines, number - 1, len(nested.group(1))):
            return Mention(number, "an engine setting naming vLLM", stripped)
        if _SERVE_APP.match(code):
            return Mention(number, "a Ray Serve application naming vLLM", stripped)
        chart = _HELM_CHART_NAME.match(code)
        if chart and _under_helm_charts(lines, number - 1, len(chart.group(1))):
            return Mention(number, "a vLLM Helm chart that Kustomize inflates", stripped)
    return _args_only_mention(lines)


def has_vllm_only_option(text: str) -> bool:
    return _VLLM_ONLY_OPTION.search(text) is not None


def _args_only_mention(lines: list[str]) -> Mention | None:
    """The image line of a container whose image is unknown (a template expression, a variable) and whose
    arguments hold an option only vLLM takes, or None."""
    option = next((m.group(0) for line in lines if not line.lstrip().startswith("#")
                   for m in [_VLLM_ONLY_OPTION.search(line)] if m), None)
    if option is None:
        return None
    for number, line in enumerate(lines, start=1):
        if _IMAGE_UNKNOWN.match(line):
            return Mention(number, ARGS_ONLY, f"{line.strip()}, and {option}")
    return None


def _under_helm_charts(lines: list[str], index: int, indent: int) -> bool:
    """Whether the list item at line ``index`` (its dash at ``indent``) is an entry of a `helmCharts:` list."""
    for back in range(index - 1, max(-1, index - 200), -1):
        line = lines[back]
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        lead = len(line) - len(line.lstrip())
        if lead < indent or (lead == indent and not line.lstrip().startswith("-")):
            return _HELM_CHARTS_KEY.match(line) is not None
    return False


def _helm_chart_entry(lines: list[str], index: int) -> dict[str, str]:
    """The scalar fields (repo, version, valuesFile ...) of the helmCharts entry whose `- name:` is line ``index``."""
    first = lines[index]
    dash = len(first) - len(first.lstrip())
    fields = {}
    for line in lines[index + 1: index + 60]:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        lead = len(line) - len(line.lstrip())
        if lead <= dash:
            break
        m = re.match(r"^\s*([A-Za-z]+)\s*:\s*[\"']?([^\s\"'#]+)", line)
        if m:
            fields[m.group(1)] = m.group(2)
    return fields


def _under_engine_key(lines: list[str], index: int, indent: int) -> bool:
    """Whether line ``index`` (indented ``indent``) sits in a mapping whose key names an engine or backend."""
    for back in range(index - 1, max(-1, index - 50), -1):
        line = lines[back]
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        lead = len(line) - len(line.lstrip())
        if lead < indent:
            return _PARENT.match(line) is not None
    return False


# said of an Ansible variables file's vLLM image; a server read with that file's values answers it (scan.py)
ANSIBLE_VARIABLES_UNREAD = "which deploy nothing themselves"


def ansible_variables(file: str | None) -> tuple[str, str] | None:
    """("role", the role's folder) for a role's `defaults/` or `vars/` file (`roles/NAME/defaults/main.yml`, the
    role having tasks/ or templates/ beside it), ("inventory", the folder) for a `group_vars/` or `host_vars/`
    file; else None."""
    import os

    if not file:
        return None
    folder = os.path.dirname(file)
    for _ in range(3):  # defaults/main.yml, defaults/main/x.yml, group_vars/all/x.yml
        base = os.path.basename(folder)
        parent = os.path.dirname(folder)
        if base in ("group_vars", "host_vars"):
            return "inventory", folder
        if base in ("defaults", "vars") and any(os.path.isdir(os.path.join(parent or ".", sub))
                                                 for sub in ("tasks", "templates")):
            return "role", parent or "."
        if not folder or parent == folder:
            return None
        folder = parent
    return None


_RAY_KINDS = ("RayService", "RayCluster")
_IMPORT_PATH = re.compile(r"^\s*(?:-\s*)?import_path\s*:\s*[\"']?([^\s\"'#]+)", re.MULTILINE)
_WORKING_DIR = re.compile(r"^\s*(?:-\s*)?working_dir\s*:\s*[\"']?([^\s\"'#]+)", re.MULTILINE)


def unread_shape(docs: list, mention: Mention) -> str | None:
    """What the read documents of a file that gave no server do hold, said in place of "the file's shape is not
    one vramlint reads" where vramlint does read that shape: a RayService/RayCluster (extract/ray.py) with no
    vLLM command or model found, or a pod spec / compose service whose vLLM-image container runs something else
    (the container on the mention's line first). None when neither is there."""
    from vramlint.cmdline import is_vllm_image

    ray = next((d.data for d in docs if isinstance(d.data, dict) and d.data.get("kind") in _RAY_KINDS
                and str(d.data.get("apiVersion", "")).startswith("ray.io/")), None)
    if ray is not None:
        return _ray_shape(ray)
    runs = []  # (line of the image, what it is, its name, its command words)
    for doc in docs:
        data = doc.data
        if not isinstance(data, dict):
            continue
        if isinstance(data.get("services"), dict):
            containers = [("compose service", str(name), svc) for name, svc in data["services"].items()
                          if isinstance(svc, dict)]
        else:
            from vramlint.extract.podspec import find_podspecs

            containers = [("container", str(c.get("name") or "?"), c) for hit in find_podspecs(data)
                          for c in (hit.node.get("containers") or []) + (hit.node.get("initContainers") or [])
                          if isinstance(c, dict)]
        for what, name, container in containers:
            image = container.get("image")
            if not isinstance(image, str) or not is_vllm_image(image):
                continue
            lc = getattr(container, "lc", None)
            line = lc.data.get("image", (None,))[0] + 1 if lc is not None and "image" in lc.data else None
            words = _words_of(container.get("entrypoint")) + _words_of(container.get("command")) + \
                _words_of(container.get("args"))
            runs.append((line, what, name, words))
    if not runs:
        return None
    line, what, name, words = next((r for r in runs if r[0] == mention.line), runs[0])
    return _runs_instead(what, name, words)


def _words_of(value: object) -> list[str]:
    if isinstance(value, str):
        return value.split()
    if isinstance(value, list):
        return [str(w) for w in value if isinstance(w, (str, int, float))]
    return []


def _runs_instead(what: str, name: str, words: list[str]) -> str:
    from vramlint.cmdline import joins_ray_cluster

    if not words:
        return (f"the {what} {name} runs the image's own entrypoint with no arguments, from which no vLLM server "
                "could be read")
    shown = _short(" ".join(words), 50)
    if joins_ray_cluster(words):
        return (f"the {what} {name} joins a Ray cluster as a worker (`{shown}`) and starts no server: its GPUs "
                "serve the engine that the cluster's head starts, whose command is not in this file")
    steps = " ".join(words).replace(";", " ").replace("&&", " ").split()
    if steps[:1] and steps[0].rsplit("/", 1)[-1] in ("tail", "sleep") or "/dev/null" in steps or "infinity" in steps:
        return (f"the {what} {name} runs `{shown}`, which keeps the container idle: a server started in it by "
                "hand (`kubectl exec` / `docker exec`) is in no file, so there is no vLLM command line to check")
    if "ray" in steps and "start" in steps and "--head" in steps:
        return (f"the {what} {name} starts a Ray head (`{shown}`) and no vLLM server: the server started on that "
                "cluster later (`ray job submit`, `docker exec`, a RayJob) is not in this file")
    return f"the {what} {name} runs `{shown}`, which is not vLLM's server, so no server was read from it"


def _ray_shape(obj: dict) -> str:
    """Of a RayService/RayCluster that gave no server: its Ray Serve applications (code vramlint does not read)
    or, without any, that its pods run Ray and no vLLM command."""
    kind = obj.get("kind")
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    config = spec.get("serveConfigV2") or spec.get("serveConfig")
    # the embedded Serve config's lines (extract/ray.py parsed it and found no llm_configs nor model to read)
    paths = _IMPORT_PATH.findall(config) if isinstance(config, str) else []
    if paths:
        homes = sorted(set(_WORKING_DIR.findall(config)))
        home = f" (its working_dir {', '.join(homes[:2])})" if homes else ""
        many = len(paths) > 1
        return (f"the {kind}'s Ray Serve application{'s' if many else ''} ({', '.join(paths[:3])}) "
                f"{'are' if many else 'is'} code{home} that vramlint does not read (a module of the image, a ConfigMap mounted in, a "
                "working_dir), with no llm_configs and no model in runtime_env.env_vars (MODEL_ID, MODEL_NAME, "
                "MODEL): its vLLM engine arguments are not visible, so its server is not checked")
    return (f"no container of the {kind} runs a vLLM command (KubeRay runs `ray start` in its head and worker pods) "
            "and it has no Ray Serve application: a server started on the cluster later (`ray job submit`, a "
            "RayJob, `kubectl exec`) is not in this file, so nothing is checked")


def unread_reason(text: str, mention: Mention, templated: bool, known_values: bool = False,
                  dependencies: list[str] | tuple[str, ...] = (), own_chart: str | None = None,
                  ansible: tuple[str, str] | None = None, shape: str | None = None) -> str:
    """Why no server was read from a file that mentions vLLM at ``mention`` (one sentence, with the change that
    makes it read when there is one). ``known_values``: the file was read as values of a chart vramlint knows;
    ``dependencies``: the chart dependencies the values file's Chart.yaml declares that are not in the scanned
    files (`helm_known.missing_dependencies`); ``own_chart``: the folder of the chart (Chart.yaml and templates/)
    whose values.yaml the file is, which was evaluated with it and rendered no server; ``ansible``: what
    `ansible_variables` says of the file (a role's variables, an inventory's group_vars), whose vLLM image is
    deployed by the tasks and templates that use it, not by a chart; ``shape``: what `unread_shape` says the
    file's documents hold, a shape vramlint reads that gave no server."""
    kinds = _KIND.findall(text)
    objects = []  # (kind, apiVersion) of each YAML document
    for chunk in re.split(r"^---.*$", text, flags=re.MULTILINE):
        kind, api = _KIND.search(chunk), _API.search(chunk)
        if kind and api:
            objects.append((kind.group(1), api.group(1)))
    where = f"{mention.what} at line {mention.line} ({_short(mention.text)})"
    if mention.what == ARGS_ONLY:
        return (f"{where}: its image is a template expression or a variable whose value the scanned files do not "
                "give, so whether it runs vLLM could not be told (a container given only arguments runs its image's "
                "entrypoint), and it is not checked; give the value where the file's renderer takes it from (an "
                "Ansible role's defaults/main.yml, a chart's values, a .env file) or write the image")
    if templated:
        return (f"{where}, but no vLLM server could be read: the file is a template whose values are unknown until "
                "rendered (render it first, e.g. `helm template . | vramlint check -`)")
    if own_chart is not None:
        missing = (f"; its dependenc{'y' if len(dependencies) == 1 else 'ies'} {', '.join(dependencies)} "
                   "(not in the scanned files) are not rendered") if dependencies else ""
        return (f"{where}, but the chart in {own_chart} (its Chart.yaml and templates/), evaluated with these "
                "values, renders no container that vramlint reads as a vLLM server: a server its own code starts "
                "(a Ray Serve application, a launcher script of the chart's) has no vLLM command line to check, "
                f"and template expressions left unevaluated are said in the chart's note{missing}")
    if known_values:
        return (f"{where}, but these values, read as those of a chart vramlint knows, deploy no vLLM server as "
                "written (no model entry that the chart would render)")
    if "Kustomization" in kinds and mention.what == "a vLLM Helm chart that Kustomize inflates":
        entry = _helm_chart_entry(text.splitlines(), mention.line - 1)
        source = (f"from {entry['repo']}{' version ' + entry['version'] if 'version' in entry else ''}, not in the "
                  "repository" if "repo" in entry else "from its chartHome folder")
        values = f" with {entry['valuesFile']}" if "valuesFile" in entry else ""
        return (f"{where}: Kustomize renders that chart ({source}){values}, so the server it deploys is not "
                "checked here; run `kustomize build --enable-helm . | vramlint check -`, or lint the chart with "
                "those values (`vramlint check <chart> --values <values file>`)")
    if "Kustomization" in kinds:
        return (f"{where} in a Kustomization: the servers are in the resources and patches it lists; scan those "
                "files (or `kustomize build . | vramlint check -`)")
    custom = [(k, a) for k, a in objects if "/" in a and not _builtin_group(a.split("/")[0])]
    if mention.what == "a Ray Serve application naming vLLM":
        kind = f" of {custom[0][0]} ({custom[0][1]})" if custom else ""
        return (f"{where}{kind}: the application's own code starts vLLM, so its engine arguments are not "
                "visible, and no model is named where vramlint reads one (an llm_configs entry, or MODEL_ID / "
                "MODEL_NAME / MODEL in runtime_env.env_vars): its server is not checked")
    if shape is not None and any(k in _RAY_KINDS for k, _a in custom):
        return f"{where}: {shape}"
    if any(k == "HelmRelease" and a.startswith("helm.toolkit.fluxcd.io/") for k, a in custom):
        return (f"{where} in a Flux HelmRelease whose spec.values are not those of a chart vramlint knows (the "
                "vLLM production-stack chart, bjw-s's app-template, ...): the chart's templates make the pods, so "
                "its server is not checked; render it (`helm template NAME CHART -f values.yaml | vramlint check "
                "-`) to check it")
    if custom:
        kind, api = custom[0]
        return (f"{where}, but {kind} ({api}) is not a kind vramlint reads (no pod spec with a vLLM command line in "
                "it): its vLLM server is not checked")
    if _GITHUB_JOBS.search(text) and _GITHUB_STEPS.search(text):
        return (f"{where} in a GitHub Actions workflow or action, but no step's `run:` starts a vLLM server vramlint "
                "can read (`vllm serve`, `python -m vllm.entrypoints.openai.api_server` or `docker run` of a vLLM "
                "image); a server an action starts (`uses:`) is in that action's own files")
    if _WORKFLOW.search(text):
        return (f"{where} in a CI workflow or pipeline: commands in its steps are not read as deployments, so the "
                "server it starts is not checked")
    if mention.what == "a vLLM image" and dependencies:
        return (f"{where}, but no container running it was found: these are the values of a chart whose workload "
                f"comes from its dependenc{'y' if len(dependencies) == 1 else 'ies'} {', '.join(dependencies)}, "
                "whose templates are not in the scanned files, so the server they configure is not read; render "
                "it (`helm dependency build && helm template . | vramlint check -`)")
    variable = _IMAGE_VARIABLE.match(mention.text) if mention.what == "a vLLM image" else None
    if variable and _COMPOSE_SERVICES.search(text):
        name = variable.group(1)
        return (f"{where}: the compose service's image is the variable {name}, whose value the scanned files do "
                "not give (compose takes it from the environment or a .env file beside the compose file, often made "
                "from a committed template such as .env.example), so which image it runs, and whether that is "
                f"vLLM, is not known: its server is not checked; set {name} in .env (or the environment) to check it")
    if mention.what == "a vLLM image" and ansible is not None and ansible[0] == "role":
        role = ansible[1]
        return (f"{where} in the variables of the Ansible role {role}, {ANSIBLE_VARIABLES_UNREAD}: vramlint "
                f"reads them where the role's tasks ({role}/tasks/: docker_container / podman_container, and "
                "command / shell / raw tasks that run `docker run`, `podman run` or `vllm serve`), its YAML templates "
                f"({role}/templates/*.yaml.j2, *.yml.j2) and its systemd unit templates (*.service.j2) use them, "
                "and none of those started a vLLM server with them; a server the role starts otherwise (a script "
                "it copies, `docker exec`) is not checked")
    if mention.what == "a vLLM image" and ansible is not None:
        return (f"{where} in the Ansible inventory variables of {ansible[1]}, {ANSIBLE_VARIABLES_UNREAD}: the "
                "server is started by the roles and playbooks that use them; vramlint reads `group_vars/all`, and the "
                "group_vars of the one group a playbook beside roles/ applies a role to, where the roles' tasks and "
                "templates use them (other groups' and hosts' values apply only to the hosts in them, which the "
                "repository does not say), so scan the folder that holds roles/ and group_vars/")
    if shape is not None and mention.what == "a vLLM image":
        return f"{where}: {shape}"
    if mention.what == "a vLLM image":
        return (f"{where}, but no container running it was found: the file's shape is not one vramlint reads "
                "(a pod spec, a compose service, a known chart's values or operator kind); if it is the values "
                "of a chart, lint the chart itself")
    return (f"{where}, but no vLLM server could be read: the file's shape is not one vramlint reads (a pod spec, "
            "a compose service, a known chart's values or operator kind)")


def shared_reason(reason: str, mention: Mention) -> str:
    """The reason less the line it was seen on: "an engine setting naming vLLM, but no vLLM server could be read:
    ..." -- what the files of one repository share word for word (twelve benchmark configs each saying `engine:
    vllm`), said once for all of them (vramlint.fold)."""
    where = f"{mention.what} at line {mention.line} ({_short(mention.text)})"
    return mention.what + reason[len(where):] if reason.startswith(where) else reason


def _builtin_group(group: str) -> bool:
    return group in ("apps", "batch", "autoscaling", "policy", "v1") or group.endswith(".k8s.io")


def _short(line: str, limit: int = 60) -> str:
    return line if len(line) <= limit else line[: limit - 3] + "..."
