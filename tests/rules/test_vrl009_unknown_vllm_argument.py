"""VRL009 unknown-vllm-argument, through scan -> assess -> rules."""

from __future__ import annotations

from rules_harness import line_of


def test_typo_with_did_you_mean(lint):
    result = lint("vrl009/fail_typo.yaml", rule="VRL009")
    [finding] = result.of("VRL009")
    assert finding.level == "error"
    assert finding.location.line == line_of("vrl009/fail_typo.yaml", "--max-model-length")
    assert "--max-model-length" in finding.message and "did you mean --max-model-len?" in finding.message
    assert "vLLM 0.10.2 (from the image tag)" in finding.message


def test_quiet_when_every_argument_is_known(lint):
    assert lint("vrl009/pass.yaml", rule="VRL009").of("VRL009") == []


def test_a_removed_flag_is_a_warning_when_the_version_is_only_assumed(lint):
    result = lint("vrl009/warn_removed_flag_no_version.yaml", rule="VRL009")
    assert result.assessments[0].version_source == "default"
    [finding] = result.of("VRL009")
    assert finding.level == "warning"
    assert finding.location.line == line_of("vrl009/warn_removed_flag_no_version.yaml", "--swap-space")
    assert "removed after" in finding.message and "set vllm-version" in finding.message


def test_a_removed_flag_on_latest_is_an_error(lint):
    # vLLM's own `:latest` runs the newest release: what every release since the removal refuses is refused
    result = lint("vrl009/fail_removed_flag_latest.yaml", rule="VRL009")
    assert result.assessments[0].version_source == "latest tag"
    [finding] = result.of("VRL009")
    assert finding.level == "error"
    assert "the newest release, which the image's `latest` tag runs" in finding.message
    assert "removed after 0.17.0" in finding.message


def test_a_flag_newer_than_the_image_is_an_error(lint):
    [finding] = lint("vrl009/fail_flag_newer_than_image.yaml", rule="VRL009").of("VRL009")
    assert finding.level == "error"
    assert "vLLM 0.6.1 (from the image tag)" in finding.message and "added in vLLM 0.6.2" in finding.message


def test_a_prefix_of_several_options_is_said_as_argparse_says_it():
    from vramlint.vllm_args import ambiguous_matches

    # vLLM never turns argparse's abbreviation off: --device names both of these in 0.33.0, so it is ambiguous
    assert ambiguous_matches("--device", "0.33.0") == ["--device-ids", "--device-memory-utilization"]
    assert ambiguous_matches("--device", "0.9.2") == []  # an option of its own there
    assert ambiguous_matches("--max-model-len", "0.33.0") == []


def test_a_flag_only_some_releases_refuse_stays_a_warning_on_a_bare_digest(lint, tmp_path):
    # a digest pins one image but names no release (vramlint knows no digest's release): --task, accepted by
    # 0.6.4-0.12.0, may be accepted by the release the digest is
    fixture = "vrl009/warn_removed_flag_digest.yaml"
    result = lint(fixture, rule="VRL009")
    assert result.assessments[0].version_source == "default"
    [finding] = result.of("VRL009")
    assert finding.level == "warning" and finding.location.line == line_of(fixture, "--task")
    assert "pinned by digest (vllm/vllm-openai@sha256:abababababab...), which names no release" in finding.message
    assert "vLLM 0.6.4 to 0.12.0 accept it" in finding.message
    assert "did you mean" not in finding.message  # no short option (-asc) offered as a spelling of --task
    # the tag before the digest names the release it was taken from: then the refusal is certain
    from rules_harness import FIXTURES, lint_files

    tagged = tmp_path / "tagged_digest.yaml"  # an absolute path: lint_files reads it where it is
    tagged.write_text((FIXTURES / fixture).read_text().replace("vllm-openai@sha256", "vllm-openai:v0.22.0@sha256"))
    [finding] = lint_files(str(tagged), rule="VRL009").of("VRL009")
    assert finding.level == "error" and "vLLM 0.22.0 (from the image tag)" in finding.message
    # so is a configured version: the user says which release the digest is
    [finding] = lint_files(fixture, rule="VRL009", version="0.22.0").of("VRL009")
    assert finding.level == "error"


def test_a_long_flag_is_never_offered_a_short_option_as_its_spelling():
    from vramlint.vllm_args import closest

    assert closest("--task", "0.33.0") is None  # `-asc` was offered: a short option, no spelling of it
    assert closest("--max-model-length", "0.33.0") == "--max-model-len"
    assert closest("-tpp", "0.33.0") == "-tp"


def test_past_200_unknown_arguments_the_rest_are_counted_in_one_finding(lint, tmp_path):
    args = "".join(f"            - --no-such-flag-{i}=1\n" for i in range(450))
    path = tmp_path / "many.yaml"
    path.write_text("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: m}\nspec:\n  template:\n    spec:\n"
                    "      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.10.2\n          args:\n"
                    "            - --model\n            - Qwen/Qwen2.5-1.5B-Instruct\n" + args)
    found = lint(str(path), rule="VRL009").of("VRL009")
    assert len(found) == 201
    assert all("--no-such-flag-" in f.message for f in found[:200])
    rest = found[200]
    assert rest.level == "error" and "250 more arguments (lines 213 to 462)" in rest.message
    assert rest.location.line == 213 and "--no-such-flag-200" in rest.message
