"""What a pool's worker sends back: servers and GPU requests pickle as a call with their fields in order, and a
Location's YAML path is sent once however many Locations repeat it."""

from __future__ import annotations

import pickle
from dataclasses import fields

from vramlint.model import GpuRequest, Location, Server


def _server(i: int) -> Server:
    file = f"team-{i}/deploy.yaml"
    return Server(file=file, location=Location(file, 3, 5, yaml_path="spec.template.spec.containers[0]"),
                  source_format="kubernetes", kind="Deployment", name=f"llm-{i}", model="org/m",
                  args={"max_model_len": 4096}, env={"A": None},
                  arg_locations={"max_model_len": Location(file, 9, 11, 9, 30,
                                                           "".join(["spec.template.spec.containers[0]", ".args[1]"]))},
                  gpu=GpuRequest("L4", 1, "nvidia.com/gpu", Location(file, 12, 9), fleet=["L4", "T4"]),
                  notes=[f"note {i}"])


def test_a_server_comes_back_equal_field_by_field_with_its_shared_values_still_shared():
    servers = [_server(i) for i in range(3)]
    servers[1].notes = servers[0].notes  # one list held by two servers
    back = pickle.loads(pickle.dumps(servers, protocol=pickle.HIGHEST_PROTOCOL))
    for old, new in zip(servers, back, strict=True):
        for f in fields(Server):
            assert getattr(new, f.name) == getattr(old, f.name), f.name
        assert new.gpu == old.gpu and type(new.gpu) is GpuRequest
    assert back[1].notes is back[0].notes and back[2].notes is not back[0].notes


def test_a_yaml_path_repeated_by_many_locations_is_sent_once():
    paths = ["spec.template.spec.containers[0]" + f".args[{k % 2}]" for k in range(200)]  # 200 distinct objects
    locations = [Location("f.yaml", k + 1, 1, yaml_path=p) for k, p in enumerate(paths)]
    sent = pickle.dumps(locations, protocol=pickle.HIGHEST_PROTOCOL)
    assert sent.count(b"spec.template.spec.containers[0].args[1]") == 1
    assert pickle.loads(sent) == locations
