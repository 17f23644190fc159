"""Rule selection by code, code prefix or slug (`--select`, `--ignore`, `--extend-select`)."""

from __future__ import annotations


class SelectionError(ValueError):
    pass


def parse_list(value) -> list[str]:
    """ "A, B" or ["A", "B"] -> ["A", "B"]."""
    if value is None:
        return []
    items = value.split(",") if isinstance(value, str) else list(value)
    return [str(item).strip() for item in items if str(item).strip()]


def matches(rule, selector: str) -> bool:
    return selector == rule.slug or rule.code.startswith(selector.upper()) or selector.upper() == "ALL"


def check_selectors(rules: list, selectors: list[str]) -> None:
    for selector in selectors:
        if not any(matches(rule, selector) for rule in rules):
            raise SelectionError(f"unknown rule selector {selector!r} (not a code, code prefix or slug)")


def select_rules(rules: list, select=None, ignore=None, extend_select=None, base=None) -> list:
    """Rules chosen by `select` (default: `base`, else every rule on by default), plus `extend_select`,
    minus `ignore`.

    `base` is the selection of an earlier layer (the configuration file under command-line flags)."""
    select, ignore, extend = parse_list(select), parse_list(ignore), parse_list(extend_select)
    check_selectors(rules, select + ignore + extend)
    if select:
        chosen = [r for r in rules if any(matches(r, s) for s in select)]
    else:
        chosen = [r for r in rules if r.default] if base is None else list(base)
    chosen += [r for r in rules if r not in chosen and any(matches(r, s) for s in extend)]
    return [r for r in chosen if not any(matches(r, s) for s in ignore)]
