"""Resources the API server does not let a container overcommit (extended resources such as nvidia.com/gpu, huge
pages): a request must equal its limit, and must have one (pkg/apis/core/validation ValidateResourceRequirements
with helper.IsOvercommitAllowed). Fixtures in tests/fixtures/k8s_overcommit."""

from __future__ import annotations

import os

from vramlint.extract.k8s_required import _quantity
from vramlint.scan import scan

DEPLOYMENTS = os.path.join(os.path.dirname(__file__), "fixtures", "k8s_overcommit", "deployments.yaml")


def _line_of(needle: str, after: str) -> int:
    with open(DEPLOYMENTS, encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    start = next(i for i, line in enumerate(lines) if after in line)
    return next(i for i, line in enumerate(lines[start:], start) if needle in line) + 1


def _overcommit(problems):
    return [p for p in problems if "overcommit" in p.message]


def test_each_refusal_once_on_the_request_line_and_nothing_for_what_the_api_server_accepts():
    inventory = scan([DEPLOYMENTS])
    said = [(p.line, p.level) for p in _overcommit(inventory.problems)]
    assert said == [
        (_line_of("nvidia.com/gpu:", "name: more-requested"), "error"),
        (_line_of("nvidia.com/gpu: 1", "name: request-only"), "error"),
        (_line_of("hugepages-2Mi: 1Gi", "name: request-only"), "error"),
        (_line_of("nvidia.com/gpu: 1", "name: bare-pod"), "warning"),
    ]
    # the servers are read all the same
    assert len(inventory.servers) == 5


def test_the_messages_say_the_api_servers_words_and_the_fix():
    more, request_only, hugepages, pod = _overcommit(scan([DEPLOYMENTS]).problems)
    assert ('Deployment.apps "more-requested" is invalid: spec.template.spec.containers[0].resources.'
            'requests[nvidia.com/gpu]: Invalid value: "4": must be equal to nvidia.com/gpu limit of 2') in more.message
    assert "written equal (or only the limit" in more.message
    assert ("spec.template.spec.containers[0].resources.limits: Required value: Limit must be set for non "
            "overcommitable resources (nvidia.com/gpu is requested") in request_only.message
    assert "requests[hugepages-2Mi]" in hugepages.message and "limit of 2Gi" in hugepages.message
    assert "unless a LimitRange of its namespace sets a default limit" in pod.message


def test_quantities_compare_by_value():
    assert _quantity("1000m") == _quantity(1) == _quantity("1") == _quantity("1e0") == 1
    assert _quantity("1Gi") == 2**30 and _quantity("1G") == 10**9
    assert _quantity("${NUM_GPUS}") is None and _quantity(True) is None and _quantity([1]) is None


def test_a_count_vramlint_cannot_read_is_not_judged(tmp_path):
    text = open(DEPLOYMENTS, encoding="utf-8").read().replace('nvidia.com/gpu: "4"', 'nvidia.com/gpu: "four"')
    path = tmp_path / "deploy.yaml"
    path.write_text(text)
    lines = [p.line for p in _overcommit(scan([str(path)]).problems)]
    assert _line_of("nvidia.com/gpu:", "name: more-requested") not in lines and len(lines) == 3
