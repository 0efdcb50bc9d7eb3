"""Files a git-crypt checkout leaves encrypted (not unlocked) are an unknown by design: one VRL102 note for the run
naming git-crypt and how many files, not a "binary file" warning per file (audit21 C15)."""

import json

from vramlint.cli import main
from vramlint.textfile import decode

# git-crypt's clean filter writes the header, a 12-byte nonce, then the AES-CTR ciphertext
HEADER = b"\x00GITCRYPT\x00"


def _encrypted(seed: int) -> bytes:
    return HEADER + bytes(range(seed, seed + 12)) + bytes((seed * 37 + i * 11) % 256 for i in range(300))


def _tree(tmp_path):
    for name in ("clusters/a/secrets.yaml", "clusters/b/secrets.yaml", "clusters/c/secrets.yaml"):
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(_encrypted(len(name)))
    (tmp_path / ".gitattributes").write_text("secrets.yaml filter=git-crypt diff=git-crypt\n")
    # a YAML file with a NUL byte that is not git-crypt's stays the warning it was
    (tmp_path / "broken.yaml").write_bytes(b"kind: Pod\n\x00\x00\n")
    (tmp_path / "deploy.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: v\nspec:\n  containers:\n    - name: v\n"
        "      image: vllm/vllm-openai:v0.9.2\n      args: [--model, Qwen/Qwen2.5-0.5B-Instruct]\n")
    return tmp_path


def test_git_crypt_header_is_its_own_reason():
    assert decode(_encrypted(1), "s.yaml")[1].reason == "encrypted with git-crypt"
    assert decode(b"kind: Pod\n\x00", "s.yaml")[1].reason.startswith("binary file")


def test_encrypted_files_are_one_note_for_the_run(tmp_path):
    tree = _tree(tmp_path)
    out = tmp_path / "r.json"
    assert main(["check", str(tree), "--offline", "--format", "json", "--output-file", str(out)]) == 0
    report = json.loads(out.read_text())
    crypt = [f for f in report["findings"] if "git-crypt" in f["message"]]
    assert len(crypt) == 1 and crypt[0]["level"] == "note" and crypt[0]["rule"] == "VRL102"
    assert "said once for 3 files" in crypt[0]["message"] and "git-crypt unlock" in crypt[0]["message"]
    assert len(crypt[0]["related_locations"]) == 2
    binary = [f for f in report["findings"] if "binary file" in f["message"]]
    assert [(f["level"], f["file"].rsplit("/", 1)[-1]) for f in binary] == [("warning", "broken.yaml")]
    assert len(report["servers"]) == 1


def test_the_text_report_quotes_no_ciphertext(tmp_path, capsys):
    tree = _tree(tmp_path)
    main(["check", str(tree / "clusters"), "--offline"])
    out = capsys.readouterr().out
    assert "GITCRYPT\\x00" not in out and "said once for 3 files" in out
