"""What a Slurm batch script asks of the cluster: its `#SBATCH` directives (never running sbatch).

sbatch(1) reads options from lines that begin with `#SBATCH` before the first command of the script (blank lines
and other comments may come between them; the first other line ends them) and, in the job's environment, sets
SLURM_JOB_NUM_NODES (and its older name SLURM_NNODES) to the number of nodes allocated, SLURM_GPUS_PER_NODE to the
`--gpus-per-node` value when that option is given, and SLURM_GPUS_ON_NODE to the GPUs allocated on the node. A
script's `vllm serve --tensor-parallel-size $SLURM_GPUS_PER_NODE` is read with them. GPUs come from
`--gpus-per-node=[type:]N`, `--gres=gpu[:type]:N` (per node), or `--gpus=[type:]N` / `-G` (for the whole job: per
node only on one node); a node count given as a range (`--nodes=2-4`) is decided when the job starts, so unknown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vramlint.model import Location

# sbatch reads directives only before the first command; no real script has more than a few dozen of them
_MAX_DIRECTIVE_LINES = 2000
_MAX_COUNT = 100_000  # nodes or GPUs per node past this are no cluster's: unknown
_COUNT = re.compile(r"^(?:([A-Za-z][\w.-]*):)?(\d{1,7})$")


@dataclass
class SbatchRequest:
    """The nodes and GPUs per node a batch script's directives ask for (None: not said, or not known)."""

    nodes: int | None = None
    nodes_location: Location | None = None
    gpus_per_node: int | None = None
    gpu_type: str | None = None  # the site's GRES type name (`h100`), as written
    gpus_location: Location | None = None
    evidence: str = ""  # the directives that say the GPUs
    gpus_per_node_option: str | None = None  # the --gpus-per-node value as written (SLURM_GPUS_PER_NODE)

    def environment(self) -> dict[str, str]:
        """The variables sbatch sets from these directives in the job's environment."""
        env: dict[str, str] = {}
        if self.nodes is not None:
            env["SLURM_JOB_NUM_NODES"] = env["SLURM_NNODES"] = str(self.nodes)
        if self.gpus_per_node_option is not None:
            env["SLURM_GPUS_PER_NODE"] = self.gpus_per_node_option
        if self.gpus_per_node is not None:
            env["SLURM_GPUS_ON_NODE"] = str(self.gpus_per_node)
        return env


def read_sbatch(text: str, display: str) -> SbatchRequest | None:
    """The `#SBATCH` directives of ``text``, or None when it has none."""
    request = SbatchRequest()
    found = False
    total: tuple[int | None, str | None, Location, str] | None = None
    for number, line in enumerate(text.splitlines()[:_MAX_DIRECTIVE_LINES], 1):
        stripped = line.strip()
        if not stripped or (stripped.startswith("#") and not stripped.startswith("#SBATCH")):
            continue
        if not stripped.startswith("#SBATCH"):
            break
        found = True
        words = stripped[len("#SBATCH"):].split("#", 1)[0].split()
        i = 0
        while i < len(words):
            word = words[i]
            name, eq, value = word.partition("=")
            if not eq and name in ("-N", "--nodes", "--gpus-per-node", "--gres", "-G", "--gpus") \
                    and i + 1 < len(words):
                value, i = words[i + 1], i + 1
            elif not eq and re.fullmatch(r"-[NG]\S+", word):
                name, value = word[:2], word[2:]
            i += 1
            where = Location(display, number, max(line.find(word), 0) + 1)
            if name in ("-N", "--nodes"):
                request.nodes = _count(value)
                request.nodes_location = where
            elif name == "--gpus-per-node":
                count, kind = _typed_count(value)
                request.gpus_per_node, request.gpu_type, request.gpus_location = count, kind, where
                request.gpus_per_node_option = value
                request.evidence = _joined(request.evidence, f"#SBATCH --gpus-per-node={value}")
            elif name == "--gres":
                gres = _gres_gpus(value)
                if gres is not None and request.gpus_per_node_option is None:
                    request.gpus_per_node, request.gpu_type = gres
                    request.gpus_location = where
                    request.evidence = _joined(request.evidence, f"#SBATCH --gres={value}")
            elif name in ("-G", "--gpus"):
                count, kind = _typed_count(value)
                total = (count, kind, where, f"#SBATCH --gpus={value}")
    if not found:
        return None
    if request.gpus_location is None and total is not None:
        count, kind, where, said = total
        request.evidence = _joined(request.evidence, said)
        request.gpus_location = where
        # --gpus counts the job's GPUs: per node only when the job has one node
        request.gpus_per_node = count if request.nodes == 1 else None
        request.gpu_type = kind
    return request


def _joined(evidence: str, more: str) -> str:
    return f"{evidence}; {more}" if evidence else more


def _count(value: str) -> int | None:
    if not re.fullmatch(r"\d{1,7}", value or ""):
        return None  # a range (2-4) or anything else: the allocation decides
    number = int(value)
    return number if 0 < number <= _MAX_COUNT else None


def _typed_count(value: str) -> tuple[int | None, str | None]:
    m = _COUNT.match(value or "")
    if m is None:
        return None, None
    number = int(m.group(2))
    return (number if 0 < number <= _MAX_COUNT else None), m.group(1)


def _gres_gpus(value: str) -> tuple[int | None, str | None] | None:
    """The GPUs of a `--gres` list (`gpu:2`, `gpu:a100:4`, `gpu`, with other resources beside), or None."""
    for item in (value or "").split(","):
        parts = item.split(":")
        if parts[0] != "gpu":
            continue
        if len(parts) == 1:
            return 1, None
        count = _count(parts[-1])
        kind = parts[1] if len(parts) == 3 else None
        if len(parts) == 2 and count is None:
            return 1, parts[1]  # gpu:TYPE alone is one GPU of that type
        return count, kind
    return None
