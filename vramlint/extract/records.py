"""What one document contributes to a scan: its servers and problems, plus the pieces another document may
complete (KServe runtimes and InferenceServices, ConfigMaps holding vLLM config files, llmaz objects).

A module of its own so that every extractor can build Records without importing the dispatching package.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vramlint.model import Problem, Server


@dataclass
class EnvRef:
    """A container whose variables come partly from ConfigMaps, and the server read without them: read again once
    every scanned file's ConfigMaps are known (`env_refs.resolve_env_refs`)."""

    doc: Any
    ctx: Any  # podspec.ObjectContext
    hit: Any  # podspec.PodSpecHit
    index: int
    container: Any
    shm_known: bool
    server: Server  # the Server read with those variables unknown
    namespace: str | None  # the workload's metadata.namespace
    notes_at: int  # server.notes of the container's own reading (notes after it were added by the caller)
    container_path: str | None = None  # where the container is when it is not containers[index] (a sidecar)


@dataclass
class Records:
    """Everything one document contributes: servers, plus pieces another document may complete."""

    servers: list[Server] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    runtimes: list[Any] = field(default_factory=list)  # kserve.RuntimeRecord
    inference_services: list[Any] = field(default_factory=list)  # kserve.IsvcRecord
    configmaps: list[Any] = field(default_factory=list)  # podspec.ConfigMapRecord
    config_refs: list[Any] = field(default_factory=list)  # podspec.ConfigRef: `--config` files to join
    llmaz: list[Any] = field(default_factory=list)  # llmaz.LlmazObject: Playgrounds, OpenModels, BackendRuntimes
    script_refs: list[Any] = field(default_factory=list)  # scripts.ScriptRef: scripts a container runs
    env_refs: list[Any] = field(default_factory=list)  # env_refs.EnvRef: variables a container takes from ConfigMaps
    node_pools: list[Any] = field(default_factory=list)  # node_pools.NodePoolRecord: Karpenter NodePools
    device_claims: list[Any] = field(default_factory=list)  # resource_claims.DeviceClaimRecord: DRA claims
    dockerfiles: list[Any] = field(default_factory=list)  # dockerfile.DockerfileRecord: scanned Dockerfiles
    # real paths of the Dockerfiles compose builds, and of the supervisord configurations its services run
    built_dockerfiles: list[str] = field(default_factory=list)
    # supervisord configurations read on their own (dockerfile.DockerfileRecord): dropped in the join when an image
    # that runs them is read (a Dockerfile or compose service), whose servers they are
    launchers: list[Any] = field(default_factory=list)
    # Terraform files read (terraform.TerraformRecord): their servers are added in the join, which drops the
    # readings they replace (a chart in the tree on its own defaults, a file they read with the module's values)
    terraform: list[Any] = field(default_factory=list)
    # Ray heads and workers of plain workloads, and the Services that may join them (extract.ray_pods)
    ray_pods: list[Any] = field(default_factory=list)
    services: list[Any] = field(default_factory=list)
    # shell scripts a folder's walk read because they start vLLM (walk-scripts): their servers are dropped in the
    # join when another reading reaches the same script (scan._drop_scripts_read_otherwise), as displayed
    walked_scripts: list[str] = field(default_factory=list)
