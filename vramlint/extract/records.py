"""What one document contributes to a scan: its servers and problems, plus the pieces another document may
complete (KServe runtimes and InferenceServices, ConfigMaps holding vLLM config files, llmaz objects).

A module of its own so that every extractor can build Records without importing the dispatching package.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vramlint.model import Problem, Server


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
    node_pools: list[Any] = field(default_factory=list)  # node_pools.NodePoolRecord: Karpenter NodePools
    device_claims: list[Any] = field(default_factory=list)  # resource_claims.DeviceClaimRecord: DRA claims
