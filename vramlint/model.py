"""Plain data passed between the pipeline stages.

discover -> load -> extract (Server) -> resolve -> budget (Budget) -> rules (Finding) -> reports.

Everything here is a dataclass so importing it costs nothing at start-up; pydantic is kept for the
configuration file, which is the only input a user writes by hand for vramlint itself.

Convention for values that cannot be known statically (``valueFrom``, an unset ``${VAR}``, a Helm
template expression): the key is present and its value is ``None``. A key that is absent was not set.
"""

from __future__ import annotations

import re
import sys
from dataclasses import asdict, field
from functools import lru_cache
from typing import Any, Literal

from vramlint.lean_dataclass import dataclass
from vramlint.textsafe import mask_named, shortened, show_marks

Level = Literal["error", "warning", "note"]
LEVELS: tuple[Level, ...] = ("note", "warning", "error")


def fast_frozen_init(cls: type) -> type:
    """Give a frozen dataclass an ``__init__`` that sets its fields directly.

    The generated one calls ``object.__setattr__`` per field (frozen), twice the cost of a plain class: with a
    Location and a Token per command-line word, 100,000 args spent a fifth of their time there. Same
    signature, defaults and (frozen) behaviour after construction; only plain defaults are supported. A class
    with ``__slots__`` (``slots=True``) has its slots set through their descriptors, and pickles as a call
    with its fields (the standard one's ``__getstate__`` calls ``fields()`` for every object).
    """
    from dataclasses import MISSING, fields

    slots = "__slots__" in cls.__dict__
    params, body, namespace = [], [], {}
    names = []
    for f in fields(cls):
        if f.default_factory is not MISSING or not f.init:
            raise TypeError(f"{cls.__name__}.{f.name}: only plain defaults are supported")
        names.append(f.name)
        if f.default is MISSING:
            params.append(f.name)
        else:
            namespace[f"_d_{f.name}"] = f.default
            params.append(f"{f.name}=_d_{f.name}")
        if slots:
            namespace[f"_s_{f.name}"] = cls.__dict__[f.name].__set__  # the slot's own setter, past __setattr__
            body.append(f"    _s_{f.name}(self, {f.name})")
        else:
            body.append(f"    d[{f.name!r}] = {f.name}")
    post = "    self.__post_init__()\n" if hasattr(cls, "__post_init__") else ""
    src = f"def __init__(self, {', '.join(params)}):\n" + ("" if slots else "    d = self.__dict__\n") + \
        "\n".join(body) + "\n" + post
    if slots:
        namespace["_cls"] = cls
        src += f"def __reduce__(self):\n    return _cls, ({''.join(f'self.{n}, ' for n in names)})\n"
    made: dict[str, Any] = {}
    from vramlint.codecache import cached_exec

    cached_exec(src, namespace, made)  # source built above from the class's own field names
    for name, function in made.items():
        function.__qualname__ = f"{cls.__qualname__}.{name}"
        setattr(cls, name, function)
    return cls


def positional_reduce(cls: type) -> type:
    """Pickle a slots dataclass as a call with its field values in order (what a pool's worker sends back).

    The standard ``__getstate__`` of ``slots=True`` calls ``fields()`` and builds a list for every object, and
    its ``__setstate__`` sets each field with ``object.__setattr__``: for the servers of 3,000 files that was
    half of what pickling the workers' results cost on each side. The object made is the same: ``__init__``
    with every field given, so no default or factory runs; shared values stay shared (pickle's memo)."""
    from dataclasses import fields
    from operator import attrgetter

    getter = attrgetter(*(f.name for f in fields(cls)))  # two or more fields: a tuple

    def __reduce__(self: Any) -> Any:
        return cls, getter(self)

    __reduce__.__qualname__ = f"{cls.__qualname__}.__reduce__"
    cls.__reduce__ = __reduce__  # type: ignore[attr-defined]
    return cls


@fast_frozen_init
@dataclass(frozen=True, slots=True)  # 100,000s of them at 10,000 files: no __dict__ each
class Location:
    """Where something was written. Lines and columns are 1-based, as editors and SARIF count."""

    file: str
    line: int
    column: int = 1
    end_line: int | None = None
    end_column: int | None = None
    yaml_path: str = ""

    def to_json(self) -> dict[str, Any]:
        out = {"file": self.file, "line": self.line, "column": self.column}
        if self.end_line is not None:
            out["end_line"] = self.end_line
            out["end_column"] = self.end_column
        if self.yaml_path:
            out["yaml_path"] = self.yaml_path
        return out


def _location_from_worker(file: str, line: int, column: int, end_line: int | None, end_column: int | None,
                          yaml_path: str) -> Location:
    """A Location as a pool's worker sent it, its YAML path interned: the paths repeat from server to server and
    file to file (40,755 Locations of the servers of 3,000 corpus files held 34,962 path strings, 3.0 MB, of 726
    texts), and the servers of every file are alive together until the report."""
    if type(yaml_path) is str:
        yaml_path = sys.intern(yaml_path)
    return Location(file, line, column, end_line, end_column, yaml_path)


def _location_reduce(self: Location) -> Any:
    # interned as it is sent, too: pickle writes a string object once and refers to it after, so a path the files
    # of a chunk repeat (`spec.template.spec.containers[0].args[3]`) is sent once a chunk, not once a Location
    # (the YAML paths were most of the servers' 4.6 MB pickled at 3,000 corpus files)
    yaml_path = self.yaml_path
    if type(yaml_path) is str:
        yaml_path = sys.intern(yaml_path)
    return _location_from_worker, (self.file, self.line, self.column, self.end_line, self.end_column, yaml_path)


Location.__reduce__ = _location_reduce  # type: ignore[method-assign]


@positional_reduce
@dataclass(slots=True)  # one per server: no __dict__ each (unpickled from the workers, each was a full dict)
class GpuRequest:
    """What a server's deployment says about its accelerators.

    ``type`` is a canonical GPU catalog name when the hint resolved (``"T4"``, ``"H100-SXM"``), else the
    raw hint text; ``count`` is the number of devices the engine can see (None: not said).
    """

    type: str | None = None
    count: int | None = None
    evidence: str | None = None
    location: Location | None = None
    vendor: str = "nvidia"  # nvidia | amd | intel-gpu | intel-gaudi | google-tpu | aws-neuron | huawei-ascend | rebellions
    mig_profile: str | None = None  # e.g. "3g.40gb"
    memory_gib: float | None = None  # a memory cap stated by the deployment (MIG slice, fractional share)
    device_ids: list[str] | None = None  # physical devices named (compose device_ids, NVIDIA_VISIBLE_DEVICES)
    shared_key: str | None = None  # engines with the same key share physical GPUs (oversubscription check)
    count_location: Location | None = None  # where the count was written, when ``location`` is the type hint
    # the variables (`${VAR}`, ...) whose defaults placed the devices: the file's assumption, which the
    # deployment may override where it runs
    placement_assumed: str | None = None
    # several GPU types the pods may land on (node affinity `In` with several values): canonical names
    fleet: list[str] | None = None
    # the pod's nodeSelector / required affinity / tolerations (extract.node_pools.NodeSelection) while the GPU
    # model is not said: a NodePool among the scanned files may say it
    node_selection: Any = None
    # (variable, devices the container is given) when its environment shows the engine fewer of them
    # (CUDA_VISIBLE_DEVICES=0,1 with nvidia.com/gpu: 4): ``count`` is then what the engine sees
    visible_from: tuple[str, int] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type, "count": self.count, "evidence": self.evidence}
        if self.vendor != "nvidia":
            out["vendor"] = self.vendor
        if self.mig_profile:
            out["mig_profile"] = self.mig_profile
        if self.memory_gib is not None:
            out["memory_gib"] = self.memory_gib
        if self.device_ids is not None:
            out["device_ids"] = self.device_ids
        if self.fleet:
            out["fleet"] = list(self.fleet)
        return out


@dataclass
class GroupMember:
    """One kind of pod of a multi-pod engine group (a Ray head or worker group, an LWS leader or its workers)."""

    label: str  # "head", "worker group 'gpu-group'", "LWS leader", "LWS workers"
    pods: int | None  # how many such pods (None: not known)
    gpus_per_pod: int | None  # GPUs each one gives the group (None: not known)
    joins: bool = True  # False: the pods never join the group (see ``why``)
    why: str | None = None
    location: Location | None = None


@dataclass
class EngineGroup:
    """The pods whose GPUs one engine spreads tensor/pipeline parallelism over (KubeRay cluster, LWS group)."""

    kind: str  # "Ray cluster" | "LeaderWorkerSet group"
    members: list[GroupMember] = field(default_factory=list)
    source: str = ""  # which operator behaviour this follows (KubeRay / LWS version)
    fix: str = ""  # what gives the engine more GPUs, in the operator's terms (default: more workers or GPUs per pod)
    # YAML paths of containers whose command the operator writes (KubeRay's `ray start`): no vLLM server there
    # (the path -> the container's line, where a note about its image's entrypoint would go)
    ray_only: dict[str, int | None] = field(default_factory=dict)

    @property
    def gpus(self) -> int | None:
        """GPUs of the pods that join; None when any of them is not known."""
        total = 0
        for m in self.members:
            if not m.joins:
                continue
            if m.pods is None or m.gpus_per_pod is None:
                return None
            total += m.pods * m.gpus_per_pod
        return total

    def describe(self) -> str:
        parts = []
        for m in self.members:
            count = "?" if m.pods is None else str(m.pods)
            per = "?" if m.gpus_per_pod is None else str(m.gpus_per_pod)
            text = f"{m.label} {count} x {per} GPU" if m.pods != 1 else f"{m.label} {per} GPU"
            parts.append(text if m.joins else f"{text}, which never joins")
        return ", ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "gpus": self.gpus,
                "members": [{"label": m.label, "pods": m.pods, "gpus_per_pod": m.gpus_per_pod, "joins": m.joins}
                            for m in self.members]}


@positional_reduce
@dataclass(slots=True)  # 10,000s at 10,000 files: no __dict__ each (from the workers, each was a 1.5 KB dict)
class Server:
    """One vLLM engine as deployed, with where each of its settings was written."""

    file: str
    location: Location  # the container / service / modelSpec entry
    source_format: str  # kubernetes | compose | helm-values | vllm-config | command-line
    kind: str | None = None  # Deployment, InferenceService, compose service, ...
    name: str | None = None  # object or service name
    container: str | None = None
    image: str | None = None
    image_location: Location | None = None
    vllm_version: str | None = None  # from the image tag, when the tag says it
    model: str | None = None
    model_location: Location | None = None
    args: dict[str, Any] = field(default_factory=dict)  # vLLM dest names (snake_case), typed
    arg_locations: dict[str, Location] = field(default_factory=dict)
    unknown_args: dict[str, Location] = field(default_factory=dict)  # flags vLLM would reject, as written
    # Helm values: vLLM dest -> (YAML path of the mapping, key under it, dotted when nested) that the chart renders
    # as that flag, for flags not written yet (a fix adds the key there); a sentence instead when adding the key
    # would change more than the flag
    values_keys: dict[str, tuple[str, str] | str] = field(default_factory=dict)
    env: dict[str, str | None] = field(default_factory=dict)
    env_locations: dict[str, Location] = field(default_factory=dict)
    env_from_unseen: bool = False  # envFrom sources set variables the files do not show
    gpu: GpuRequest | None = None
    shm: bool | None = None  # shared memory large enough for NCCL (k8s /dev/shm Memory emptyDir, ipc: host, shm_size)
    # How this server's source gives it /dev/shm when that is not a pod spec's volumes (a chart's own values):
    # VRL008's advice there, with no edit
    shm_fix: str | None = None
    replicas: int | None = None
    ignore_rules: dict[str, Location] = field(default_factory=dict)  # vramlint.dev/ignore annotation
    notes: list[str] = field(default_factory=list)  # things said about this server (config in another file, ...)
    profiles: list[str] = field(default_factory=list)  # compose profiles (none: the service always runs)
    # What vLLM itself rejects when it parses this command line (an invalid choice, a malformed value, `--model`
    # with `vllm serve` where that fails): {"code", "message" (vLLM's text), "location", "arg", "fix"}.
    startup_errors: list[dict[str, Any]] = field(default_factory=list)
    # What vramlint could not read about this server (a word of the command line known only at run time, no
    # command or args at all): said once, in the server's "not checked" note, never as an input error.
    unchecked: list[str] = field(default_factory=list)
    # The first word of the command line known only at run time (`$EXTRA_ARGS`, a template, a placeholder): it may
    # hold any argument, so what rests on an argument being absent (its default) is not certain.
    opaque_args: Location | None = None
    # The multi-pod group whose GPUs the engine's parallelism spans (KubeRay cluster, LWS group), when it runs in one.
    engine_group: EngineGroup | None = None
    # The vLLM version an operator pins when the file names no image (KubeAI's chart, llmaz's chart), and which
    # operator release that pin is from: used instead of the newest vLLM, with version-dependent refusals kept as
    # warnings since the release actually installed is not known.
    assumed_version: str | None = None
    assumed_version_source: str | None = None
    # How notes name a `--config` file whose settings were not read (the ConfigMap is not scanned, not rendered,
    # has no such key): the model may be in it, so a server without one is not said to name no model.
    unread_config: str | None = None
    # Where vllm_version was read when it is not the image's tag (a Ray runtime_env's `vllm==X`): the version
    # source reports name
    vllm_version_source: str | None = None
    # What says the vLLM the server runs is a CPU build when no image says it (a CI job that builds vLLM with
    # VLLM_TARGET_DEVICE=cpu): vramlint.platforms.cpu_backend
    cpu_build: str | None = None
    # vLLM built from a git checkout of no release (a fork, a branch, a commit: extract.source_build.SourceBuild):
    # no release's arguments are its arguments, so VRL009 judges none of its flags and says so once per source build
    vllm_source_build: Any = None
    # Where the scanned tree starts this compose service alone (`docker compose -f FILE up SERVICE` in a script,
    # a llama-swap config): its file is not run as a whole, so what holds only for all services at once is uncertain
    started_alone: str | None = None
    # Why the engine's arguments are not known at all when they are set by code vramlint does not read (a custom
    # Ray Serve application's Python builds its engine): a budget at vLLM's defaults would be a guess, so none is made
    engine_args_in_code: str | None = None
    # The DRA claims its container uses (extract.resource_claims.ClaimUse), until the scan joins them with the
    # ResourceClaimTemplates and ResourceClaims among the scanned files (then cleared)
    device_claims: list[Any] = field(default_factory=list)
    # The command line names no model and hides none (cmdline.VllmInvocation.model_default): vLLM serves its
    # release's default model, which vramlint.assess takes once the version is resolved
    model_default: bool = False

    @property
    def key(self) -> str:
        """Stable identity for baselines and fingerprints: file and YAML path, never a line number."""
        return f"{self.file}#{self.location.yaml_path}"

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "line": self.location.line,
            "column": self.location.column,
            "yaml_path": self.location.yaml_path,
            "source_format": self.source_format,
            "kind": self.kind,
            "name": self.name,
            "container": self.container,
            "image": self.image,
            "vllm_version": self.vllm_version,
            "model": self.model,
            "args": _masked(self.args),
            "arg_locations": {k: _loc_short(v) for k, v in self.arg_locations.items()},
            "unknown_args": {k: _loc_short(v) for k, v in self.unknown_args.items()},
            "env": _masked(self.env),
            "gpu": self.gpu.to_json() if self.gpu else None,
            "shm": self.shm,
            "replicas": self.replicas,
            "notes": self.notes,
            **({"startup_errors": [{**e, "location": _loc_short(e["location"]) if e.get("location") else None}
                                   for e in self.startup_errors]} if self.startup_errors else {}),
            **({"unchecked": self.unchecked} if self.unchecked else {}),
            **({"engine_group": self.engine_group.to_json()} if self.engine_group is not None else {}),
        }


def _masked(values: Any) -> Any:
    """A server's args or env as the JSON report shows them: secrets masked (vramlint.textsafe.mask_named)."""
    if not isinstance(values, dict):
        return values
    out = {k: _reported(mask_named(k, v)) for k, v in values.items()}
    return out if any(out[k] is not values[k] for k in out) else values


# A value the JSON report shows of a server's args: a hostile file's megabyte string (one anchor gives it to 300
# servers: a 302 MB report) is cut, and a JSON argument nested deeper than the report's encoder recurses is not shown
MAX_REPORTED_CHARS = 4096
MAX_REPORTED_DEPTH = 32


def _reported(value: Any, depth: int = 0) -> Any:
    if isinstance(value, str):
        return shortened(value, 200) if len(value) > MAX_REPORTED_CHARS else value
    if not isinstance(value, (list, dict)):
        return value
    if depth >= MAX_REPORTED_DEPTH:
        return f"(nested more than {MAX_REPORTED_DEPTH} levels deep: not shown)"
    if isinstance(value, list):
        items = [_reported(v, depth + 1) for v in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    shown = {k: _reported(v, depth + 1) for k, v in value.items()}
    return value if all(shown[k] is v for k, v in value.items()) else shown


def _loc_short(loc: Location) -> dict[str, Any]:
    return {"file": loc.file, "line": loc.line, "column": loc.column}


# A message quotes the values it is about; a hostile file's value can be megabytes, repeated by every finding
# about it (3 MB aliased into 50 services made 1.4 GB of findings). Past this length, each long word of a
# message is cut, saying how long it was.
MAX_MESSAGE_CHARS = 4000
_LONG_WORD = re.compile(r"\S{200,}")


def short_message(message: str) -> str:
    message = show_marks(message)  # a file's own U+2983/U+2984 as written (textsafe.without_own_marks)
    if len(message) <= MAX_MESSAGE_CHARS:
        return message
    return _LONG_WORD.sub(lambda m: f"{m.group(0)[:80]}...[{len(m.group(0)):,} characters]", message)


@dataclass
class Problem:
    """Input that could not be read as intended (invalid YAML, a bad value): reported, never fatal."""

    file: str
    line: int | None
    column: int | None
    message: str
    level: Level = "error"  # "warning"/"note" for input read with a caveat (reported as VRL102 at that level)
    # the part of the message other files can share word for word (the message less where this file says it): what
    # vramlint.fold says once for all of them; None: the whole message
    advice: str | None = None
    # the path (as shown) of a link out of the scanned tree this problem is about, said on the line that names it
    # (a Terraform release's `chart`): the walk's own note on that link is the same root cause, not said again
    outside_link: str | None = None

    def __post_init__(self) -> None:
        self.message = short_message(self.message)
        # Command-line reading (vramlint.cmdline) starts a message with "line N: " for the line of the word it is
        # about (a script's 31st line), while an extractor places it on the server: it goes on the word's line.
        if self.message.startswith("line "):
            m = re.match(r"line (\d+): ", self.message)
            if m is not None:
                self.line, self.column, self.message = int(m.group(1)), None, self.message[m.end():]

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out.pop("advice")  # the message says it: the JSON contract of `problems` is unchanged
        out.pop("outside_link")
        return out


def add_new_problems(problems: list[Problem], more: Any) -> None:
    """Append to ``problems`` those of ``more`` it does not hold yet (equal fields), in linear time: a chart of
    many values sets says a template line's finding once, however many findings each set gives."""
    seen = {(p.file, p.line, p.column, p.message, p.level) for p in problems}
    for p in more:
        key = (p.file, p.line, p.column, p.message, p.level)
        if key not in seen:
            seen.add(key)
            problems.append(p)


@dataclass
class Skipped:
    """A file passed over on purpose (binary, empty, too large, unreadable), with the reason."""

    file: str
    reason: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Inventory:
    """What the extract stage found in the scanned paths."""

    servers: list[Server] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    files_scanned: int = 0
    notes: list[str] = field(default_factory=list)  # said once per run/chart (Helm rendering skipped, ...)
    # files the scan read whose text holds no "vramlint" (any case), so no suppression comment: not read again
    uncommented: frozenset[str] = field(default_factory=frozenset, repr=False, compare=False)

    def to_json(self) -> dict[str, Any]:
        out = {
            "servers": [s.to_json() for s in self.servers],
            "skipped": [s.to_json() for s in self.skipped],
            "problems": [p.to_json() for p in self.problems],
        }
        if self.notes:
            out["notes"] = list(self.notes)
        return out


@dataclass(frozen=True)
class Edit:
    """Replace the text from (line, column) up to (end_line, end_column), exclusive, of ``file`` with ``text``.

    1-based lines and columns counted in characters, as ``Location``; an insertion has an empty span."""

    file: str
    line: int
    column: int
    end_line: int
    end_column: int
    text: str

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "column": self.column, "end_line": self.end_line,
                "end_column": self.end_column, "replacement": self.text}


@dataclass
class Fix:
    """What removes a finding: text edits computed from the budget, or, when vramlint cannot write them
    exactly, no edits and the ``reason`` why.

    ``safe``: the edits change only the value the finding is about, and the budget says the result starts
    (``vramlint check --fix`` applies them); unsafe ones change behaviour a person approves (``--unsafe-fixes``).
    """

    description: str
    safe: bool
    edits: list[Edit] = field(default_factory=list)
    reason: str | None = None  # why there are no edits (the value is set in a way vramlint cannot rewrite)

    @property
    def applicable(self) -> bool:
        return bool(self.edits)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"description": self.description, "safe": self.safe,
                               "edits": [e.to_json() for e in self.edits]}
        if self.reason:
            out["reason"] = self.reason
        return out


HEADLINE_WIDTH = 120  # a finding's first line, as the text report prints it, where the content allows


@lru_cache(maxsize=4096)  # asked by every report of every finding; similar servers' findings say the same
def split_message(message: str, summary: str | None = None) -> tuple[str, str]:
    """(headline, detail) of a finding's message: the rule's ``summary`` when the message starts with it; else
    the whole message when it is short, else its first sentence (or clause, at a colon outside parentheses) when
    that fits on one line, else what comes before its first parenthesis, else its first words up to a word that
    fits, with "..." (the detail carries on); the message itself stays whole."""
    message = message.strip()
    if summary and message.startswith(summary):
        return summary.rstrip(), message[len(summary):].lstrip(" .;:").strip()
    if len(message) <= HEADLINE_WIDTH:
        return message, ""
    depth, first_colon, first_paren = 0, None, None
    for i, ch in enumerate(message[: HEADLINE_WIDTH + 1]):
        if ch in "([{":
            if ch == "(" and depth == 0 and first_paren is None and i >= 20 and message[i - 1] == " ":
                first_paren = i
            depth += 1
        elif ch in ")]}":
            depth = max(0, depth - 1)
        elif depth == 0 and ch in ".;" and message[i + 1: i + 2] == " " and i >= 20 \
                and not message[i - 1].isdigit():
            return message[:i], message[i + 1:].strip()
        elif depth == 0 and ch == ":" and message[i + 1: i + 2] == " " and first_colon is None and i >= 20:
            first_colon = i
    if first_colon is not None:
        return message[:first_colon], message[first_colon + 1:].strip()
    if first_paren is not None:
        # "X is not in the repository (why, at length): what follows": the headline is what comes before the aside
        return message[:first_paren].rstrip(), message[first_paren:].strip()
    cut = message.rfind(" ", 20, HEADLINE_WIDTH - 3)
    if cut > 0:
        # one long clause: the headline ends at a word, and the detail carries on from it
        return message[:cut].rstrip(" ,;:") + " ...", "... " + message[cut:].strip()
    return message, ""


@dataclass
class Finding:
    """One rule's verdict on one server, anchored on the line that set the value."""

    rule_id: str  # VRL001
    rule_name: str  # max-model-len-at-maximum
    level: Level
    message: str
    location: Location
    server_key: str | None = None
    suppressed: bool = False
    justification: str | None = None
    suppression: str | None = None  # how it was suppressed: "comment" | "annotation" | "baseline"
    fix: Fix | None = None  # what removes it (vramlint/fixes.py), computed by the rule
    related: list[Location] = field(default_factory=list)  # other lines the message names
    # the one-line headline (what is wrong and the number that proves it) when the rule wrote one: ``message``
    # starts with it and goes on with the detail; None: `split_message` finds the headline in the message
    summary: str | None = None
    # id() of the Server it was made for: servers of one multi-document file can share a key (file and YAML path),
    # and a report lists each server's own findings, not those of every server with its key
    server_id: int | None = field(default=None, repr=False, compare=False)
    # what vramlint.fold groups identical advice by (a Problem's ``advice``); None: the message
    advice: str | None = field(default=None, repr=False, compare=False)
    # the text says of every server it is on what it says of this one (an unknown the servers share, such as the
    # assumed vLLM version, or advice about their GPU), not a defect particular to its line: several servers with
    # the same text are said once (vramlint.fold)
    shared: bool = field(default=False, repr=False, compare=False)

    def headline(self) -> tuple[str, str]:
        """(the one-line headline, the rest of the message): what the text report prints on the finding's
        first line, and below it as a note."""
        return split_message(self.message, self.summary)

    def __post_init__(self) -> None:
        self.message = short_message(self.message)

    def to_json(self) -> dict[str, Any]:
        loc = self.location
        summary, detail = self.headline()
        out = {
            "rule": self.rule_id,
            "name": self.rule_name,
            "level": self.level,
            "file": loc.file,
            "line": loc.line,
            "column": loc.column,
            "end_line": loc.end_line if loc.end_line is not None else loc.line,
            "end_column": loc.end_column if loc.end_column is not None else loc.column,
            "yaml_path": loc.yaml_path,
            "message": self.message,
            "summary": summary,
            "detail": detail,
            "suppressed": self.suppressed,
            "justification": self.justification,
            "suppression": self.suppression,
        }
        if self.fix is not None:
            out["fix"] = self.fix.to_json()
        if self.related:
            out["related_locations"] = [r.to_json() for r in self.related]
        return out


@dataclass
class ModelInfo:
    """Architecture facts the budget needs, resolved from a config.json (or the embedded catalog)."""

    name: str  # the id it resolved as (Hub id or local path)
    source: str  # where the facts came from: "catalog (source URL)", "local: path", "hub", "hf-cache", "config alias"
    architecture: str | None = None
    num_layers: int = 0
    hidden_size: int = 0
    num_attention_heads: int = 0
    num_kv_heads: int = 0
    head_dim: int = 0
    vocab_size: int = 0
    intermediate_size: int | None = None
    max_position_embeddings: int | None = None  # the derived maximum model length (RoPE scaling applied)
    torch_dtype: str | None = None  # bfloat16 | float16 | float32
    quantization: str | None = None  # awq | gptq | fp8 | compressed-tensors | mxfp4 | bitsandbytes | ... | None
    quant_bits: int | None = None
    tie_word_embeddings: bool = False
    is_mla: bool = False
    kv_lora_rank: int | None = None
    qk_rope_head_dim: int | None = None
    sliding_window: int | None = None
    layer_types: list[str] | None = None  # per layer: full_attention | sliding_attention | mamba | linear_attention
    num_experts: int | None = None
    num_experts_per_tok: int | None = None
    param_count: int | None = None  # total parameters (all experts)
    weight_bytes: int | None = None  # bytes of the checkpoint as loaded (quantization-aware), when known exactly
    weight_bytes_source: str | None = None  # "safetensors metadata" | "computed from architecture" | "catalog"
    extra: dict[str, Any] = field(default_factory=dict)
    # How each of these is derived from config.json: vramlint/modelconfig.py.
    model_type: str | None = None  # of the text config: "llama", "gemma3_text", "deepseek_v3", ...
    max_len_key: str | None = None  # the config key max_position_embeddings came from (vLLM's error text names it)
    attention_chunk_size: int | None = None  # Llama 4 chunked local attention ("chunked_attention" layers)
    quant_group_size: int | None = None  # group size of the quantized weights (AWQ/GPTQ 128, NVFP4 16, MXFP4 32)


@dataclass
class GpuSpec:
    """One GPU model from the catalog."""

    name: str  # canonical: "T4", "A100-80GB", "H100-SXM"
    total_gib: float  # what torch.cuda.mem_get_info reports (what vLLM logs), not the marketing size
    compute_capability: tuple[int, int]
    bf16: bool
    fp8: bool
    vendor: str = "nvidia"
    marketing_gb: float | None = None
    mig_profiles: dict[str, float] = field(default_factory=dict)  # profile -> GiB
    compute_units: int | None = None  # SMs (NVIDIA) / CUs (AMD) as torch reports them; None: not known
    l2_cache_mib: float | None = None  # L2 cache as CUDA reports it; None: not known


@dataclass
class Budget:
    """The per-GPU memory arithmetic vLLM performs at start-up, and its verdict. All GiB are 2**30 bytes."""

    engine: str  # v0 | v1
    vllm_version: str
    gpu: str
    gpus: int  # tensor_parallel * pipeline_parallel
    total_gib: float
    gpu_memory_utilization: float
    usable_gib: float
    weights_gib: float
    non_torch_gib: float
    activation_gib: float
    cudagraph_gib: float
    kv_cache_gib: float
    kv_bytes_per_token: int  # per rank, all layers
    block_size: int
    num_gpu_blocks: int
    kv_tokens: int
    max_model_len: int
    max_concurrency: float
    max_num_seqs: int
    max_num_batched_tokens: int
    starts: bool
    errors: list[dict[str, Any]] = field(default_factory=list)  # {"code": "E1", "message": vLLM's text, "arg": "max_model_len"}
    sources: dict[str, str] = field(default_factory=dict)  # input -> where it came from ("image tag", "default", "catalog")
    notes: list[str] = field(default_factory=list)
    # KV cache one request of max_model_len needs (vLLM's start-up check that one such request fits), GiB
    one_request_kv_gib: float = 0.0
    # vLLM 0.34+'s extensible KV cache, sized from the memory measured after warmup, on the deciding stage (GiB):
    # resident (weights + non-torch + the CUDA graphs captured + the runner state below), reserve (the transient
    # peak kept free), margin (max(1 GiB, 0.75 x reserve); 3 on ROCm) and uncounted (the CUDA context and
    # communicators before vLLM's snapshot, never free to it); None where the cache is sized from the profiling
    # estimate
    measured_kv: dict[str, float] | None = None
    # torch memory the model runner keeps for the engine's life beside the weights, on the deciding stage (the V2
    # runner's penalty bins), GiB, where vLLM takes it from the KV cache (0.28+; 0 where it does not count it)
    runner_state_gib: float = 0.0

    def to_json(self) -> dict[str, Any]:
        # what dataclasses.asdict gives (field order, containers copied), at a tenth of its cost: a report of
        # 3,000 servers with 4 budgets each spent 4.5 s in asdict's recursion
        names = _BUDGET_FIELDS or _budget_fields()
        return {name: _plain_copy(getattr(self, name)) for name in names}


_BUDGET_FIELDS: tuple[str, ...] = ()


def _budget_fields() -> tuple[str, ...]:
    global _BUDGET_FIELDS
    from dataclasses import fields

    _BUDGET_FIELDS = tuple(f.name for f in fields(Budget))
    return _BUDGET_FIELDS


_SCALARS = (str, int, float, bool, type(None))


def _plain_copy(value: Any) -> Any:
    """``value`` as dataclasses.asdict copies a field: dicts, lists and tuples copied all the way down, a nested
    dataclass made a dict, anything else as it is."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is dict:
        return {_plain_copy(k): _plain_copy(v) for k, v in value.items()}
    if kind is list:
        return [_plain_copy(v) for v in value]
    if kind is tuple:
        return tuple(_plain_copy(v) for v in value)
    if hasattr(value, "__dataclass_fields__") and not isinstance(value, type):
        return asdict(value)
    if isinstance(value, (dict, list, tuple)):
        import copy

        return copy.deepcopy(value)  # a subclass (a namedtuple, a defaultdict): asdict's own deep copy
    return value


@dataclass
class GpuRequirement:
    """What a server needs of a GPU it does not name: the budget evaluated on every catalog GPU.

    ``min_total_gib`` is the smallest total memory per GPU with which vLLM starts at these settings (weights per
    rank, non-torch, activation peak, CUDA graphs and one ``max_model_len`` request of KV cache, over
    ``gpu_memory_utilization``); ``fits`` / ``does_not_fit`` are catalog GPUs by ascending memory, as their own
    budgets decide (compute capability and dtype support included). ``errors`` are the start-up failures that
    hold on every catalog GPU (vLLM's text, as in ``Budget.errors``).
    """

    min_total_gib: float | None  # None: no memory is enough (an error that holds on every GPU)
    fits: list[str]
    does_not_fit: list[str]
    why_not: dict[str, str]  # GPU -> why it does not fit (first start-up failure)
    max_model_len: int
    gpus_per_engine: int
    gpu_memory_utilization: float
    vllm_version: str
    needs: dict[str, float]  # GiB per GPU: weights, non_torch, activation, cudagraph, one_request_kv
    errors: list[dict[str, Any]] = field(default_factory=list)
    reference: Budget | None = None  # the budget on the smallest GPU that fits (else the smallest need)

    def to_json(self) -> dict[str, Any]:
        return {
            "min_total_gib": self.min_total_gib,
            "fits": list(self.fits),
            "does_not_fit": list(self.does_not_fit),
            "why_not": dict(self.why_not),
            "max_model_len": self.max_model_len,
            "gpus_per_engine": self.gpus_per_engine,
            "gpu_memory_utilization": self.gpu_memory_utilization,
            "vllm_version": self.vllm_version,
            "needs_gib": dict(self.needs),
            "errors": list(self.errors),
        }


@dataclass
class ResolveOptions:
    """What the resolve stage may use besides the deployment files (from configuration and flags)."""

    default_gpu: str | None = None  # --gpu: the GPU of servers whose files do not say
    # `gpu:` given as a list (--gpu A,B): the pods may land on any of these; the budget is computed on each
    default_gpu_fleet: list[str] = field(default_factory=list)
    default_gpu_count: int | None = None  # --gpus
    gpu_memory_gib: float | None = None  # --gpu-memory-gib: total of a GPU outside the catalog, or of the --gpu one
    vllm_version: str | None = None  # --vllm-version: servers whose image tag does not say
    vllm_version_source: str | None = None  # where vllm_version was set: "--vllm-version", "configuration (FILE)"
    model_aliases: dict[str, str] = field(default_factory=dict)  # served name/path -> Hub id or path to config.json
    allow_network: bool = True  # the Hub, when HF_HUB_OFFLINE is not set and --offline was not given
    offline_reason: str | None = None  # why allow_network is off, as the user set it ("--offline was given", ...)
    hub_timeout_s: float = 10.0  # deadline of one request to the Hub
    refresh_hub_cache: bool = False  # --refresh-hub-cache: ask the Hub again for models it answered before
    hub_cache_max_age_days: float | None = None  # older cached Hub answers are asked again (None: the default, 30)
    base_dir: str = "."  # where relative local model paths and aliases are resolved from


@dataclass
class TrafficProfile:
    """What the deployment is expected to serve (configuration ``traffic``); rules size suggestions by it."""

    p99_context_tokens: int | None = None  # prompt + output tokens of the 99th-percentile request
    peak_concurrent_requests: int | None = None


@dataclass
class Assessment:
    """A server with everything resolved about it and its budget: what the rules receive."""

    server: Server
    model: ModelInfo | None = None
    gpu: GpuSpec | None = None
    gpu_count: int = 1  # devices per engine replica as resolved (tp * pp when not stated)
    vllm_version: str | None = None
    version_source: str | None = None  # "image tag" | "configuration" | "default"
    engine: str | None = None  # v0 | v1
    budget: Budget | None = None
    unresolved: list[str] = field(default_factory=list)  # what is missing and how to fix it
    # GPU not known, model known: what the server needs of a GPU (instead of a budget)
    gpu_requirement: GpuRequirement | None = None
    # the GPU requirement was not computed: the run had computed as many as it computes (VRL011 says so once)
    requirement_not_computed: bool = False
    # a fleet (the pods may land on any of several GPU types): the budget on each; ``budget`` is the one that
    # decides (the first that fails, else the one with the least KV cache)
    fleet: list[Budget] = field(default_factory=list)
    failure: str | None = None  # vramlint failed on this server (an exception, said as a VRL000 finding)
    # (location, message): the budget was not computed for a setting beyond what vramlint sizes (VRL010, on the line)
    unsized: tuple | None = None

    def to_json(self, budgets: dict[Any, Any] | None = None) -> dict[str, Any]:
        """``budgets``: the JSON of budgets (and GPU requirements) already converted in this report, by id (servers
        share one when everything it depends on is the same, see assess._budget and requirement.gpu_requirement):
        converted once, not once per server."""
        out = self.server.to_json()
        if self.budget is None:
            out["budget"] = None
        elif budgets is None:
            out["budget"] = self.budget.to_json()
        else:
            if id(self.budget) not in budgets:
                budgets[id(self.budget)] = (self.budget, self.budget.to_json())  # the budget kept: ids stay unique
            out["budget"] = budgets[id(self.budget)][1]
        if self.fleet:
            out["fleet"] = [b.to_json() for b in self.fleet]
        if self.gpu_requirement is not None:
            if budgets is None:
                out["gpu_requirement"] = self.gpu_requirement.to_json()
            else:
                key = ("gpu_requirement", id(self.gpu_requirement))
                if key not in budgets:
                    budgets[key] = (self.gpu_requirement, self.gpu_requirement.to_json())  # kept: ids stay unique
                out["gpu_requirement"] = budgets[key][1]
        if self.unresolved:
            out["unresolved"] = self.unresolved
        return out


def internal_problem(file: str, line: int | None, what: str, exc: BaseException) -> Problem:
    """An unexpected exception while reading one file, as that file's input error: the run goes on.

    Only the exception's type and first line are said (no traceback: a report is not a debugging session),
    with a bounded length (the exception may quote hostile input)."""
    first = (str(exc).splitlines() or [""])[0]
    if len(first) > 200:
        first = first[:200] + "..."
    detail = f"{type(exc).__name__}: {first}" if first else type(exc).__name__
    return Problem(file, line, None, f"vramlint failed while {what} ({detail}); any vLLM server here is not "
                   "checked (a bug in vramlint, please report it with this file)")
