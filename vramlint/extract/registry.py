"""Which extractor reads which Kubernetes object: the operators' custom resources, tried in order.

A new operator is one new module (reading its objects with `podspec`) plus one entry here. Each entry imports
its module only when an object matches, so a run without that operator's objects never loads it. An object no
entry takes is read as plain workloads (`podspec.extract_pod_objects`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from vramlint.extract.records import Records
from vramlint.lean_dataclass import dataclass


@dataclass(frozen=True)
class OperatorKind:
    name: str
    matches: Callable[[str, str], bool]  # (apiVersion, kind) -> is it this entry's object
    # Reads the object into records; False: not this operator's after all (the next entry is tried).
    extract: Callable[[Any, Any, str, Records], bool]


def _kserve_llmisvc(doc: Any, obj: Any, path: str, records: Records) -> bool:
    from vramlint.extract import kserve

    kserve.extract_llmisvc(doc, obj, path, records)
    return True


def _kserve(doc: Any, obj: Any, path: str, records: Records) -> bool:
    from vramlint.extract import kserve

    return bool(kserve.extract_kserve(doc, obj, path, records))


def _kubeai(doc: Any, obj: Any, path: str, records: Records) -> bool:
    from vramlint.extract import kubeai

    kubeai.extract_kubeai(doc, obj, path, records)
    return True


def _kaito(doc: Any, obj: Any, path: str, records: Records) -> bool:
    from vramlint.extract import kaito

    kaito.extract_kaito(doc, obj, path, records)
    return True


def _kaito_multirole(doc: Any, obj: Any, path: str, records: Records) -> bool:
    from vramlint.extract import kaito

    kaito.extract_multirole(doc, obj, path, records)
    return True


def _llmaz(doc: Any, obj: Any, path: str, records: Records) -> bool:
    from vramlint.extract import llmaz

    llmaz.extract_llmaz(doc, obj, path, records)
    return True


def _kthena(doc: Any, obj: Any, path: str, records: Records) -> bool:
    from vramlint.extract import kthena

    kthena.extract_model_booster(doc, obj, path, records)
    return True


def _production_stack(doc: Any, obj: Any, path: str, records: Records) -> bool:
    from vramlint.extract import production_stack

    production_stack.extract_vllm_runtime(doc, obj, path, records)
    return True


def _airunway(doc: Any, obj: Any, path: str, records: Records) -> bool:
    from vramlint.extract import airunway

    airunway.extract_model_deployment(doc, obj, path, records)
    return True


def _ray(doc: Any, obj: Any, path: str, records: Records) -> bool:
    from vramlint.extract import ray

    ray.extract_ray(doc, obj, path, records)
    return True


def _ome(doc: Any, obj: Any, path: str, records: Records) -> bool:
    from vramlint.extract import ome

    return ome.extract_ome(doc, obj, path, records)


def _dynamo(doc: Any, obj: Any, path: str, records: Records) -> bool:
    from vramlint.extract import dynamo

    return dynamo.extract_graph(doc, obj, path, records)


def _flux_helm_release(doc: Any, obj: Any, path: str, records: Records) -> bool:
    from vramlint.extract import flux

    return flux.extract_helm_release(doc, obj, path, records)


def _api_group(api: str) -> str:
    return api.rsplit("/", 1)[0] if "/" in api else ""


OPERATOR_KINDS: tuple[OperatorKind, ...] = (
    OperatorKind("KServe LLMInferenceService", lambda api, kind: kind == "LLMInferenceService", _kserve_llmisvc),
    # before KServe's entry, which takes its kind names with any API group
    OperatorKind("OME ServingRuntime / ClusterServingRuntime", lambda api, kind: _api_group(api) == "ome.io", _ome),
    OperatorKind(
        "KServe InferenceService / ServingRuntime",
        lambda api, kind: "serving.kserve.io" in api or kind in ("InferenceService", "ServingRuntime",
                                                                 "ClusterServingRuntime"),
        _kserve,
    ),
    OperatorKind("KubeAI Model", lambda api, kind: kind == "Model" and "kubeai" in api, _kubeai),
    OperatorKind("KAITO Workspace / InferenceSet",
                 lambda api, kind: "kaito.sh" in api and kind in ("Workspace", "InferenceSet"), _kaito),
    OperatorKind("KAITO MultiRoleInference", lambda api, kind: "kaito.sh" in api and kind == "MultiRoleInference",
                 _kaito_multirole),
    OperatorKind("llmaz BackendRuntime / OpenModel / Playground",
                 lambda api, kind: kind in ("BackendRuntime", "OpenModel", "Playground") and "llmaz" in api, _llmaz),
    OperatorKind("Kthena ModelBooster", lambda api, kind: kind == "ModelBooster" and "serving.volcano.sh" in api,
                 _kthena),
    OperatorKind("production-stack VLLMRuntime",
                 lambda api, kind: kind == "VLLMRuntime" and "production-stack.vllm.ai" in api, _production_stack),
    OperatorKind("AI Runway ModelDeployment",
                 lambda api, kind: kind == "ModelDeployment" and api.startswith("airunway.ai/"), _airunway),
    OperatorKind("NVIDIA Dynamo DynamoGraphDeployment (v1alpha1 services)",
                 lambda api, kind: kind == "DynamoGraphDeployment" and _api_group(api) == "nvidia.com", _dynamo),
    OperatorKind("Flux HelmRelease (values of a chart vramlint knows)",
                 lambda api, kind: kind == "HelmRelease" and _api_group(api) == "helm.toolkit.fluxcd.io",
                 _flux_helm_release),
    OperatorKind("KubeRay RayService / RayCluster / RayJob",
                 lambda api, kind: kind in ("RayService", "RayCluster", "RayJob") or "ray.io" in api, _ray),
)


def extract_operator_object(doc: Any, obj: Any, path: str, api: str, kind: str, records: Records) -> bool:
    """Read ``obj`` with the first registered operator that takes it; False when none does."""
    for entry in OPERATOR_KINDS:
        if entry.matches(api, kind) and entry.extract(doc, obj, path, records):
            return True
    return False
