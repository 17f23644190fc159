"""`tl-inspect merge`: the JSON or SARIF reports of a CI matrix's shards (`--shard K/N`) as one report,
as a single run over all the files would have written it, its entries in path order as the shards
split them."""

from __future__ import annotations

import json
import os


class MergeError(ValueError):
    """An input that is not a tl-inspect JSON or SARIF report, or reports that do not belong together."""


def _kind(document, path: str) -> str:
    if isinstance(document, dict) and document.get("tool") == "tl-inspect" and "kernels" in document:
        return "json"
    if (
        isinstance(document, dict)
        and isinstance(document.get("runs"), list)
        and len(document["runs"]) == 1
        and document["runs"][0].get("tool", {}).get("driver", {}).get("name") == "tl-inspect"
    ):
        return "sarif"
    raise MergeError(f"{path}: not a report of tl-inspect --format json or --format sarif")


def read(paths: list[str]) -> tuple[str, list[dict]]:
    documents = []
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:
                documents.append(json.load(f))
        except OSError as exc:
            raise MergeError(f"{path}: cannot read: {exc.strerror}") from None
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise MergeError(f"{path}: not JSON: {exc}") from None
    kinds = {path: _kind(document, path) for path, document in zip(paths, documents)}
    if len(set(kinds.values())) > 1:
        raise MergeError("cannot merge JSON with SARIF: " + ", ".join(f"{p} is {k}" for p, k in kinds.items()))
    arches = {path: _arch(document) for path, document in zip(paths, documents)}
    if len(set(arches.values())) > 1:
        raise MergeError(
            "the shards were inspected for different archs: " + ", ".join(f"{p} {a}" for p, a in arches.items())
        )
    return kinds[paths[0]], documents


def _arch(document: dict) -> str | None:
    if "arch" in document:
        return document["arch"]
    return document["runs"][0].get("properties", {}).get("arch")


def _in_order(path: str) -> str:
    # the order `--shard` splits in (sorts are stable: a file's kernels keep theirs)
    return os.path.normpath(path)


def merge_summaries(summaries: list[dict]) -> dict:
    merged = {"files_with_kernels": 0, "files_failed": 0, "files_needing_cases": [], "kernels": 0}
    for summary in summaries:
        for key, value in summary.items():
            merged[key] = merged.get(key, 0 if isinstance(value, int) else []) + value
    return merged


def merge_json(documents: list[dict]) -> dict:
    merged = dict(documents[0])
    merged["kernels"] = sorted((k for d in documents for k in d["kernels"]), key=lambda k: _in_order(k["file"]))
    merged["files"] = sorted((f for d in documents for f in d.get("files", [])), key=lambda f: _in_order(f["path"]))
    merged["summary"] = merge_summaries([d.get("summary", {}) for d in documents])
    return merged


def merge_sarif(documents: list[dict]) -> dict:
    runs = [d["runs"][0] for d in documents]
    rules = {}
    for run in runs:
        for rule in run["tool"]["driver"].get("rules", []):
            rules.setdefault(rule["id"], rule)
    order = sorted(rules)
    index = {code: i for i, code in enumerate(order)}
    results = [
        {**result, "ruleIndex": index[result["ruleId"]]} if "ruleIndex" in result else result
        for run in runs
        for result in run.get("results", [])
    ]
    results.sort(
        key=lambda r: _in_order(
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] if r.get("locations") else ""
        )
    )
    invocations = [i for run in runs for i in run.get("invocations", [])]
    merged_run = {
        **runs[0],
        "tool": {"driver": {**runs[0]["tool"]["driver"], "rules": [rules[code] for code in order]}},
        "invocations": [
            {
                "executionSuccessful": all(i.get("executionSuccessful", True) for i in invocations),
                "toolExecutionNotifications": [n for i in invocations for n in i.get("toolExecutionNotifications", [])],
            }
        ],
        "results": results,
        "properties": {
            **runs[0].get("properties", {}),
            "summary": merge_summaries([run.get("properties", {}).get("summary", {}) for run in runs]),
        },
    }
    return {**documents[0], "runs": [merged_run]}


def merge(paths: list[str]) -> dict:
    kind, documents = read(paths)
    return merge_json(documents) if kind == "json" else merge_sarif(documents)
