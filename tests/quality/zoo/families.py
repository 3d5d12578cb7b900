"""The zoo's bug variants by review finding: each finding has at least three variants, each in a different code path.

``FAMILIES`` maps a finding of the review (the seven below) to its variants; ``CODE_PATH`` says where
each variant puts its mistake; ``NEW`` names the variants written for this table (from contract.md
and domain.md alone, without the gate's strategies or properties; their witnesses are in
``witnesses.py``). ``OTHER`` holds the zoo's remaining bug variants, whose mistakes lie outside the
seven findings. Variants in ``tests/quality/outside/`` are not counted here.

    python -m tests.quality.zoo.families     # the table; exit 1 when a finding has fewer than 3 code paths
"""

from __future__ import annotations

import sys
from pathlib import Path

__all__ = ["CODE_PATH", "FAMILIES", "FINDINGS", "NEW", "OTHER", "check", "format_table"]

#: The review findings, in the order of the brief.
FINDINGS = {
    "zero-progress": "zero progress reported as success (domain §3.7 problem)",
    "over-budget": "success while over budget when progress is possible but the budget is not reachable",
    "notice": "the notice makes a degraded block larger / its length is not reserved (domain §3.7 finding 1)",
    "hidden-degraded": "degradation cuts condensed or otherwise hidden tool results (domain §3.7 finding 2)",
    "visibility": "visibility: condenseParent after the last summary, markers, dangling parents (contract §2)",
    "pairing": "pairing: cross-wiring / relabel, results not first, duplicates kept, global id set (contract §3)",
    "even-cut": "the even cut orphans a result (domain §3.3, consecutive same-role messages)",
}

FAMILIES: dict[str, list[str]] = {
    "zero-progress": [
        "bug_zero_progress_success",
        "bug_allowed_nonpositive_noop",
        "bug_entry_total_tokens",
        "bug_shrunk_counts_skips",
    ],
    "over-budget": [
        "bug_partial_on_failure",
        "bug_converges_one_cut",
        "bug_converges_halfway",
    ],
    "notice": [
        "bug_notice_grows_block",
        "bug_notice_room_digits",
        "bug_notice_eligible_floor",
        "bug_notice_guard_prefix",
    ],
    "hidden-degraded": [
        "bug_shrink_ignores_condense",
        "bug_shrink_cut_mask",
        "bug_shrink_legacy_summary",
        "bug_shrink_parents_in_view",
    ],
    "visibility": [
        "bug_vis_ignores_condense",
        "bug_vis_dangling_parent_hides",
        "bug_vis_drops_markers",
        "bug_vis_first_summary",
        "bug_counts_condensed",
        "bug_cut_dangling_positions",
    ],
    "pairing": [
        "bug_roo_positional_remap",
        "bug_global_id_set",
        "bug_duplicate_results_kept",
        "bug_merge_consecutive_users",
        "bug_synthetic_appended",
        "bug_results_keep_images",
    ],
    "even-cut": [
        "bug_roo_half_split_pairs",
        "bug_cut_stored_neighbour",
        "bug_cut_ends_on_assistant",
    ],
}

#: Where each variant of ``FAMILIES`` puts its mistake.
CODE_PATH = {
    "bug_zero_progress_success": "success decision: a 0-message truncation passed on as success",
    "bug_allowed_nonpositive_noop": "the allowed <= 0 guard: an early 'nothing to do' return",
    "bug_entry_total_tokens": "entry check: within budget judged on totalTokens without the last message",
    "bug_shrunk_counts_skips": "degradation loop bookkeeping: a skipped candidate counted as shrunk (converges)",
    "bug_partial_on_failure": "failure handler: the 'still over budget' failure returns the partial result",
    "bug_converges_one_cut": "degradation loop stop condition: one cut per call (converges)",
    "bug_converges_halfway": "the target recovery aims at: halfway on every call (converges)",
    "bug_notice_grows_block": "degradation loop: every result cut to the floor, no per-block check",
    "bug_notice_room_digits": "cut-length arithmetic: the notice's room measured for 0 removed characters",
    "bug_notice_eligible_floor": "candidate eligibility: longer than the floor, no room for the notice",
    "bug_notice_guard_prefix": "per-block acceptance check: tokens of the kept prefix, notice left out",
    "bug_shrink_ignores_condense": "candidate scan and its count: truncation tags only",
    "bug_shrink_cut_mask": "truncation -> degradation hand-over: 'not hidden by this cut' as the visible set",
    "bug_shrink_legacy_summary": "candidate scan, summary test: user-role summaries only",
    "bug_shrink_parents_in_view": "candidate scan, existing parents: only those in the last summary's slice",
    "bug_vis_ignores_condense": "visibility predicate: truncation tags only, no summary slice",
    "bug_vis_dangling_parent_hides": "visibility predicate, tag test: a dangling parent still hides",
    "bug_vis_drops_markers": "visibility predicate, markers: left out of the effective history",
    "bug_vis_first_summary": "visibility predicate, slice start: the first summary",
    "bug_counts_condensed": "recount: condensed messages counted",
    "bug_cut_dangling_positions": "the cut's visible positions: a dangling truncationParent still hides",
    "bug_roo_positional_remap": "orphan handling: positional relabel onto a call answered later",
    "bug_global_id_set": "result validity: any earlier tool_use (a global id set)",
    "bug_duplicate_results_kept": "de-duplication of results: none",
    "bug_merge_consecutive_users": "pre-pass: consecutive user messages merged before pairing",
    "bug_synthetic_appended": "synthetic results: appended after the message's other blocks",
    "bug_results_keep_images": "results-first arrangement: an image kept right after the result it follows",
    "bug_roo_half_split_pairs": "the cut's size: half, rounded to even, assuming alternation",
    "bug_cut_stored_neighbour": "the cut's pair guard: the stored neighbour, not the next visible message",
    "bug_cut_ends_on_assistant": "the cut's end rule: Cline's 'end on an assistant message'",
}

#: Written for this table (witnesses in ``witnesses.py``).
NEW = frozenset({
    "bug_entry_total_tokens",
    "bug_shrunk_counts_skips",
    "bug_partial_on_failure",
    "bug_converges_one_cut",
    "bug_converges_halfway",
    "bug_notice_room_digits",
    "bug_notice_eligible_floor",
    "bug_notice_guard_prefix",
    "bug_shrink_cut_mask",
    "bug_shrink_legacy_summary",
    "bug_shrink_parents_in_view",
    "bug_cut_dangling_positions",
    "bug_results_keep_images",
    "bug_cut_stored_neighbour",
    "bug_cut_ends_on_assistant",
})

#: The zoo's other bug variants: mistakes outside the seven findings (budget arithmetic, counting,
#: data integrity, purity, error shape, tagging rules, other pairing rules).
OTHER = {
    "budget arithmetic (success over a wrong budget)": [
        "bug_forgets_reserve", "bug_ignores_system_prompt", "bug_reserve_or_minus_one",
    ],
    "token counting (contract §5)": [
        "bug_count_flat_images", "bug_count_long_run_crash", "bug_count_per_message_rounding",
        "bug_count_python_json", "bug_count_special_tokens_raise",
    ],
    "other normalize rules (contract §3.1-§3.6)": [
        "bug_closes_trailing", "bug_drops_images", "bug_drops_thinking", "bug_duplicate_tool_use_kept",
        "bug_keeps_emptied_message", "bug_metadata_lost", "bug_orphan_text_object", "bug_result_is_error_lost",
        "bug_string_content_lost", "bug_synthetic_unmarked",
    ],
    "other recovery rules (contract §4.3, §4.5, §4.8)": [
        "bug_degrade_drops_items", "bug_deletes_hidden", "bug_error_returns_partial", "bug_error_wording",
        "bug_marker_assistant_role", "bug_tags_first_visible",
    ],
    "purity and hidden state (contract §1)": [
        "bug_normalize_mutates_input", "bug_recover_mutates_input", "bug_stale_count_cache",
    ],
}


def _zoo_bugs() -> list[str]:
    return sorted(p.stem for p in Path(__file__).resolve().parent.glob("bug_*.py"))


def check() -> list[str]:
    """What is wrong with the table: unclassified or missing variants, a finding with < 3 code paths."""
    problems: list[str] = []
    zoo = set(_zoo_bugs())
    listed = [n for names in FAMILIES.values() for n in names] + [n for names in OTHER.values() for n in names]
    for name in sorted(zoo - set(listed)):
        problems.append(f"{name}: in the zoo but in no family")
    for name in sorted(set(listed) - zoo):
        problems.append(f"{name}: listed but not in the zoo")
    for name in sorted({n for n in listed if listed.count(n) > 1}):
        problems.append(f"{name}: listed twice")
    for finding, names in FAMILIES.items():
        paths = {CODE_PATH.get(n, "?").split(":")[0] for n in names}
        if len(names) < 3 or len(paths) < 3:
            problems.append(f"{finding}: {len(names)} variants in {len(paths)} code paths (3 needed)")
        problems.extend(f"{n}: no code path" for n in names if n not in CODE_PATH)
    return problems


def format_table() -> str:
    lines = []
    for finding, names in FAMILIES.items():
        lines.append(f"{finding}: {FINDINGS[finding]}")
        for name in names:
            mark = "new" if name in NEW else "   "
            lines.append(f"  {mark} {name:<31} {CODE_PATH.get(name, '?')}")
    lines.append("other (not counted toward the findings):")
    for group, names in OTHER.items():
        lines.append(f"  {group}: {', '.join(names)}")
    return "\n".join(lines)


if __name__ == "__main__":
    print(format_table())
    found = check()
    for problem in found:
        print("problem:", problem)
    sys.exit(1 if found else 0)
