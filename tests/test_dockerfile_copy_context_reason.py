"""A Dockerfile whose ENTRYPOINT script is COPYed from a path that is not beside it: the note says the build
context was taken as the Dockerfile's folder (a build from the repository's root, `docker build -f
docker/Dockerfile .`, copies another file), not just that the file is not in the repository."""

from __future__ import annotations

from vramlint.scan import scan


def test_copy_source_missing_from_the_assumed_context_names_the_assumption(tmp_path):
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "start-vllm.sh").write_text("#!/bin/bash\nexec vllm serve Qwen/Qwen3-8B\n")
    (tmp_path / "docker").mkdir()
    dockerfile = tmp_path / "docker" / "Dockerfile.pod"
    dockerfile.write_text(
        "FROM vllm/vllm-openai:v0.24.0\n"
        "COPY scripts/start-vllm.sh /usr/local/bin/start-vllm.sh\n"
        'ENTRYPOINT ["/usr/local/bin/start-vllm.sh"]\n')
    inv = scan([str(dockerfile)])
    [problem] = [p for p in inv.problems if "start-vllm.sh" in p.message]
    assert problem.line == 3
    assert "copied from scripts/start-vllm.sh of the build context" in problem.message
    assert "taking the Dockerfile's folder" in problem.message and "as the build context" in problem.message
