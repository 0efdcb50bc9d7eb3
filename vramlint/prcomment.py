"""One sticky pull-request comment holding `vramlint diff`'s markdown, for the GitHub Action.

``python -m vramlint.prcomment BODY_FILE`` with VRAMLINT_API_URL (else GITHUB_API_URL), GITHUB_REPOSITORY, VRAMLINT_PR_NUMBER and
VRAMLINT_GITHUB_TOKEN in the environment: the pull request's comments are listed (REST API, issues comments), the
first one holding the marker ``<!-- vramlint-diff -->`` is updated (PATCH), and when there is none a comment is
created (POST). With an empty body (the pull request changes no vLLM server) an existing comment is updated to
say so and none is created. The token goes only in the Authorization header to that API; it is never
printed. Exit status 0 posted or nothing to do, 1 the API refused or failed (said as a workflow warning).
"""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.request

MARKER = "<!-- vramlint-diff -->"
MAX_BODY = 65_000  # GitHub refuses comment bodies over 65,536 characters
NO_CHANGE = f"{MARKER}\nvramlint: this pull request no longer changes any vLLM server's budget or findings.\n"


class ApiError(Exception):
    pass


def _request(method: str, url: str, token: str, payload: dict | None = None):  # noqa: ANN202
    data = json.dumps(payload).encode() if payload is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers={
        "Accept": "application/vnd.github+json",
        "Authorization": f"Bearer {token}",
        "X-GitHub-Api-Version": "2022-11-28",
        "User-Agent": "vramlint-action",
        **({"Content-Type": "application/json"} if data is not None else {}),
    })
    try:
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 - GITHUB_API_URL, http(s)
            return json.loads(response.read() or b"null")
    except urllib.error.HTTPError as exc:
        raise ApiError(f"{method} {url.split('?')[0]}: HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise ApiError(f"{method} {url.split('?')[0]}: {getattr(exc, 'reason', exc)}") from None


def find_comment(api: str, repo: str, number: str, token: str) -> dict | None:
    for page in range(1, 51):  # 5,000 comments
        comments = _request("GET", f"{api}/repos/{repo}/issues/{number}/comments?per_page=100&page={page}", token)
        if not isinstance(comments, list):
            raise ApiError("the comments list is not a list")
        for comment in comments:
            if isinstance(comment, dict) and MARKER in str(comment.get("body", "")):
                return comment
        if len(comments) < 100:
            return None
    return None


def post(body: str, api: str, repo: str, number: str, token: str) -> str:
    """What was done: "created", "updated" or "nothing"."""
    if len(body) > MAX_BODY:
        body = body[:MAX_BODY] + "\n\n(cut: the full diff is in the job summary)\n"
    existing = find_comment(api, repo, number, token)
    if existing is not None:
        if not body.strip():
            body = NO_CHANGE
        _request("PATCH", f"{api}/repos/{repo}/issues/comments/{existing['id']}", token, {"body": body})
        return "updated"
    if not body.strip():
        return "nothing"
    _request("POST", f"{api}/repos/{repo}/issues/{number}/comments", token, {"body": body})
    return "created"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    with open(argv[0], encoding="utf-8") as fh:
        body = fh.read()
    api = (os.environ.get("VRAMLINT_API_URL") or os.environ.get("GITHUB_API_URL") or "https://api.github.com").rstrip("/")
    repo = os.environ.get("GITHUB_REPOSITORY", "")
    number = os.environ.get("VRAMLINT_PR_NUMBER", "")
    token = os.environ.get("VRAMLINT_GITHUB_TOKEN", "")
    if not (repo and number.isdigit() and token):
        print("::warning title=vramlint::no pull request comment: the repository, pull request number or token "
              "is missing (give `github-token`, or run on pull_request)")
        return 1
    try:
        done = post(body, api, repo, number, token)
    except ApiError as exc:
        print(f"::warning title=vramlint::the pull request comment could not be written ({exc}); the job needs "
              "`permissions: pull-requests: write`")
        return 1
    print(f"vramlint: pull request comment {done}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
